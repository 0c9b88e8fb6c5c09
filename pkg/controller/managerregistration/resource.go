package managerregistration

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/resourceapply"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// managerClusterSpec is what an object asks ScyllaDB Manager to hold for it, besides the cluster's ID and owner,
// which the registrar decides for every kind alike.
type managerClusterSpec struct {
	// Name is the cluster's name in ScyllaDB Manager, unique there.
	Name string
	// Host is the contact point of the cluster's agents.
	Host string
	// AuthToken is the agents' auth token. It is never logged, nor put in events or conditions.
	AuthToken string
}

// progress is why an object is not in its desired state yet, or why it can't get there: the reason and message of
// a condition.
type progress struct {
	reason  string
	message string
}

// managedClusterFields are the inputs of the managed-hash label: everything the registrar sends to ScyllaDB Manager,
// so that a change to any of them, and nothing else, makes it write again.
type managedClusterFields struct {
	ID                     string    `json:"id"`
	OwnerUID               types.UID `json:"ownerUID"`
	Name                   string    `json:"name"`
	Host                   string    `json:"host"`
	AuthToken              string    `json:"authToken"`
	WithoutRepair          bool      `json:"withoutRepair"`
	ForceTLSDisabled       bool      `json:"forceTLSDisabled"`
	ForceNonSSLSessionPort bool      `json:"forceNonSSLSessionPort"`
}

// scyllaDBManagerClusterID returns the ID the cluster of obj, of kind, has in ScyllaDB Manager: the one in
// naming.ScyllaDBManagerClusterIDAnnotation when set, so that clusters registered before (by an older
// manager-controller, whose ID the operator copies there from a ScyllaCluster's status) are adopted, else one derived
// from obj's UID, so that a lost annotation or a lost ScyllaDB Manager database brings back the same ID. An annotation
// that is not a UUID is an error, not a value to use: ScyllaDB Manager would take it for a cluster name.
func scyllaDBManagerClusterID(kind string, obj metav1.Object) (string, error) {
	id, ok := obj.GetAnnotations()[naming.ScyllaDBManagerClusterIDAnnotation]
	if !ok || len(id) == 0 {
		return naming.ScyllaDBManagerClusterID(kind, obj.GetUID()), nil
	}
	if !managerclient.IsUUID(id) {
		return "", fmt.Errorf("annotation %q holds %q, which is not a ScyllaDB Manager cluster ID (a UUID)", naming.ScyllaDBManagerClusterIDAnnotation, id)
	}
	return id, nil
}

// invalidClusterID describes err, an annotation scyllaDBManagerClusterID refused. Retrying does not help: the
// annotation must change first.
func invalidClusterID(err error) *progress {
	return &progress{reason: invalidClusterIDReason, message: err.Error()}
}

// makeManagerCluster returns the cluster with ID id that spec asks ScyllaDB Manager to hold for the object with UID
// owner, labelled with the owner and a hash of everything sent.
func makeManagerCluster(id string, owner types.UID, spec *managerClusterSpec) (*managerclient.Cluster, error) {
	cluster := &managerclient.Cluster{
		ID:        id,
		Name:      spec.Name,
		Host:      spec.Host,
		AuthToken: spec.AuthToken,
		// The operator's own repair tasks must not clash with the weekly repair ScyllaDB Manager would add.
		WithoutRepair: true,
		// CQL over TLS is not wired between ScyllaDB Manager and the nodes yet.
		ForceTLSDisabled:       true,
		ForceNonSSLSessionPort: true,
	}
	hash, err := resourceapply.Hash(managedClusterFields{
		ID:                     cluster.ID,
		OwnerUID:               owner,
		Name:                   cluster.Name,
		Host:                   cluster.Host,
		AuthToken:              cluster.AuthToken,
		WithoutRepair:          cluster.WithoutRepair,
		ForceTLSDisabled:       cluster.ForceTLSDisabled,
		ForceNonSSLSessionPort: cluster.ForceNonSSLSessionPort,
	})
	if err != nil {
		// The error names the type only; the token stays out of it.
		return nil, fmt.Errorf("can't hash ScyllaDB Manager cluster %q: %w", spec.Name, err)
	}
	cluster.Labels = map[string]string{
		naming.ScyllaDBManagerOwnerUIDLabel:    string(owner),
		naming.ScyllaDBManagerManagedHashLabel: hash,
	}
	return cluster, nil
}

// clusterDiff returns the fields in which existing, the cluster ScyllaDB Manager holds, differs from required, empty
// when it holds what required asks for: the hash label, which changes with anything the object asks for, and the
// fields ScyllaDB Manager echoes back, which an edit in ScyllaDB Manager (sctool cluster update) changes while it keeps
// the labels. The names of the fields only: the token is never returned.
func clusterDiff(required, existing *managerclient.Cluster) []string {
	var diff []string
	if existing.Labels[naming.ScyllaDBManagerManagedHashLabel] != required.Labels[naming.ScyllaDBManagerManagedHashLabel] {
		diff = append(diff, "labels."+naming.ScyllaDBManagerManagedHashLabel)
	}
	if existing.Name != required.Name {
		diff = append(diff, "name")
	}
	if existing.Host != required.Host {
		diff = append(diff, "host")
	}
	if existing.AuthToken != required.AuthToken {
		diff = append(diff, "auth_token")
	}
	if existing.ForceTLSDisabled != required.ForceTLSDisabled {
		diff = append(diff, "force_tls_disabled")
	}
	if existing.ForceNonSSLSessionPort != required.ForceNonSSLSessionPort {
		diff = append(diff, "force_non_ssl_session_port")
	}
	return diff
}

// withOthersLabels returns required with the labels of existing, the cluster ScyllaDB Manager holds, that required
// does not set: an update replaces the whole cluster, and the labels others put on it (with sctool or another client)
// are theirs to keep. The owner and hash labels are required's.
func withOthersLabels(required *managerclient.Cluster, existing map[string]string) *managerclient.Cluster {
	if len(existing) == 0 {
		return required
	}
	merged := *required
	merged.Labels = maps.Clone(existing)
	maps.Copy(merged.Labels, required.Labels)
	return &merged
}

// isOwnedBy tells whether cluster may be managed for the object with UID owner: it carries no owner label (it was
// registered by hand or by a tool that does not label), or the owner's, or one of previousOwners (an older
// manager-controller registered it for the object this one was translated from).
func isOwnedBy(cluster *managerclient.Cluster, owner types.UID, previousOwners []types.UID) bool {
	label, ok := cluster.Labels[naming.ScyllaDBManagerOwnerUIDLabel]
	if !ok || len(label) == 0 {
		return true
	}
	return types.UID(label) == owner || slices.Contains(previousOwners, types.UID(label))
}

// isProvablyOwnedBy tells whether cluster's owner label holds owner or one of previousOwners. Deregistration deletes
// only such clusters: an unlabelled one may have been registered by hand, or by an older manager-controller for
// another object, and an annotation naming it may have been copied from that object.
func isProvablyOwnedBy(cluster *managerclient.Cluster, owner types.UID, previousOwners []types.UID) bool {
	label := types.UID(cluster.Labels[naming.ScyllaDBManagerOwnerUIDLabel])
	return len(label) != 0 && (label == owner || slices.Contains(previousOwners, label))
}

// isAnnotatedClusterOwnedBy tells whether cluster, which ScyllaDB Manager holds under the ID of an object's
// naming.ScyllaDBManagerClusterIDAnnotation, is that object's (UID owner, previousOwners, asking for a cluster named
// name): labelled as the object's, or unlabelled under the name the object asks for, as the established operator
// registered a ScyllaCluster's cluster (whose ID the operator copies into the annotation); names are unique in
// ScyllaDB Manager. Anything else is another object's cluster, named by an annotation copied from it with a manifest.
func isAnnotatedClusterOwnedBy(cluster *managerclient.Cluster, owner types.UID, previousOwners []types.UID, name string) bool {
	if len(cluster.Labels[naming.ScyllaDBManagerOwnerUIDLabel]) == 0 {
		return cluster.Name == name
	}
	return isProvablyOwnedBy(cluster, owner, previousOwners)
}

// isDerivedClusterID tells whether id is a version 5 UUID, as naming.ScyllaDBManagerClusterID derives from an object's
// kind and UID. ScyllaDB Manager gives the clusters registered without an ID random (version 4) UUIDs, and so did the
// established operator, so an annotation holding a version 5 ID other than the object's own derived one names another
// object's cluster: it was copied from that object with a manifest.
func isDerivedClusterID(id string) bool {
	parsed, err := uuid.Parse(id)
	return err == nil && parsed.Version() == 5
}

// isNameTakenError tells whether err is ScyllaDB Manager refusing a cluster because another cluster, under another
// ID, has its name.
func isNameTakenError(err error) bool {
	return managerclient.IsBadRequest(err) && strings.Contains(managerclient.ErrorMessage(err), "is already taken")
}

// describeManagerError returns what err says without what changes from one attempt to the next (ScyllaDB Manager's
// trace ID), so that a condition reporting an unchanged failure stays unchanged and is not written again.
func describeManagerError(err error) string {
	var apiErr *managerclient.APIError
	if !errors.As(err, &apiErr) {
		return err.Error()
	}
	msg := fmt.Sprintf("ScyllaDB Manager answered %d to %s %s", apiErr.StatusCode, apiErr.Method, apiErr.Path)
	if len(apiErr.Message) != 0 {
		msg += ": " + apiErr.Message
	}
	if len(apiErr.Details) != 0 {
		msg += " (" + apiErr.Details + ")"
	}
	return msg
}

// rollout returns what the rollout of an object of kind, at generation, still waits for, given its status'
// observedGeneration and conditions, or nil once the operator reports its current generation Available. Registering
// earlier would make ScyllaDB Manager check agents that do not run yet. The message is the same whichever step the
// rollout is at (observing the generation, reporting on it, becoming available): the steps pass in seconds, and a
// status write for each would be noise.
func rollout(kind string, generation int64, observedGeneration *int64, conditions []metav1.Condition) *progress {
	available := meta.FindStatusCondition(conditions, controllerhelpers.AvailableCondition)
	if observedGeneration == nil || *observedGeneration != generation ||
		available == nil || available.ObservedGeneration != generation || available.Status != metav1.ConditionTrue {
		return &progress{reason: waitingForRolloutReason, message: fmt.Sprintf(
			"waiting for the operator to report generation %d of the %s %s", generation, kind, controllerhelpers.AvailableCondition)}
	}
	return nil
}

// agentAuthToken returns the agent auth token in authTokenSecret, named secretName (nil when it does not exist), or
// what its reader waits for.
func agentAuthToken(secretName string, authTokenSecret *corev1.Secret) (string, *progress) {
	if authTokenSecret == nil {
		return "", &progress{reason: waitingForAuthTokenReason, message: fmt.Sprintf("waiting for the agent auth-token Secret %q", secretName)}
	}
	token, err := scyllaagent.AuthTokenFromConfig(authTokenSecret.Data[naming.ScyllaDBManagerAgentAuthTokenKey])
	if err != nil {
		// The operator replaces an unreadable token; the error never quotes the Secret.
		return "", &progress{reason: waitingForAuthTokenReason, message: fmt.Sprintf("waiting for a readable agent auth token in key %q of Secret %q: %v", naming.ScyllaDBManagerAgentAuthTokenKey, secretName, err)}
	}
	if len(token) == 0 {
		return "", &progress{reason: waitingForAuthTokenReason, message: fmt.Sprintf("waiting for an agent auth token in key %q of Secret %q", naming.ScyllaDBManagerAgentAuthTokenKey, secretName)}
	}
	return token, nil
}

// managerClusterName returns the name the cluster of obj, of kind, has in ScyllaDB Manager: the one in
// naming.ScyllaDBManagerClusterNameOverrideAnnotation when set, else one derived from obj's kind and name.
func managerClusterName(kind string, obj metav1.Object) string {
	name, ok := obj.GetAnnotations()[naming.ScyllaDBManagerClusterNameOverrideAnnotation]
	if !ok || len(name) == 0 {
		name = naming.ScyllaDBManagerClusterNameForObject(obj.GetNamespace(), kind, obj.GetName())
	}
	return name
}

// makeClusterSpec returns the cluster obj, of kind, asks ScyllaDB Manager to hold once rolled out (given its status'
// observedGeneration and conditions), with the agent auth token of authTokenSecret, named secretName (nil when it
// does not exist), and the agents reached through host; or what it waits for.
func makeClusterSpec(kind string, obj metav1.Object, observedGeneration *int64, conditions []metav1.Condition, secretName string, authTokenSecret *corev1.Secret, host string) (*managerClusterSpec, *progress) {
	if waiting := rollout(kind, obj.GetGeneration(), observedGeneration, conditions); waiting != nil {
		return nil, waiting
	}
	token, waiting := agentAuthToken(secretName, authTokenSecret)
	if waiting != nil {
		return nil, waiting
	}
	return &managerClusterSpec{
		Name:      managerClusterName(kind, obj),
		Host:      host,
		AuthToken: token,
	}, nil
}

// makeScyllaDBDatacenterClusterSpec returns the cluster sdc asks ScyllaDB Manager to hold, given its agent auth-token
// Secret (nil when it does not exist), or what it waits for.
func makeScyllaDBDatacenterClusterSpec(sdc *scyllav1alpha1.ScyllaDBDatacenter, authTokenSecret *corev1.Secret) (*managerClusterSpec, *progress) {
	return makeClusterSpec(scyllaDBDatacenterGVK.Kind, sdc, sdc.Status.ObservedGeneration, sdc.Status.Conditions,
		naming.AgentAuthTokenSecretName(sdc.Name), authTokenSecret, naming.ScyllaDBManagerClusterHost(sdc.Namespace, sdc.Name))
}

// partOfScyllaDBCluster refuses the registration of sdc when it is a datacenter of a ScyllaDBCluster: ScyllaDB
// Manager knows the whole ScyllaDBCluster as one cluster, and the same nodes registered twice would be backed up and
// repaired twice (manager-integration.md: the label is not propagated to the datacenters, so it was put there by
// hand).
func partOfScyllaDBCluster(sdc *scyllav1alpha1.ScyllaDBDatacenter) *progress {
	name := sdc.Labels[naming.ParentScyllaDBClusterNameLabel]
	if len(name) == 0 {
		return nil
	}
	return &progress{reason: partOfScyllaDBClusterReason, message: fmt.Sprintf(
		"ScyllaDBDatacenter is datacenter %q of ScyllaDBCluster %q, which is registered with ScyllaDB Manager as one cluster: label the ScyllaDBCluster with %q instead of its datacenter",
		sdc.Labels[naming.ParentScyllaDBClusterDatacenterNameLabel], sdc.Labels[naming.ParentScyllaDBClusterNamespaceLabel]+"/"+name, naming.RegisterWithScyllaDBManagerLabel)}
}

// scyllaDBDatacenterPreviousOwners returns the UIDs a cluster of sdc may be labelled with besides sdc's own: the
// ScyllaCluster sdc is translated from, whose cluster an older manager-controller registered under its UID.
func scyllaDBDatacenterPreviousOwners(sdc *scyllav1alpha1.ScyllaDBDatacenter) []types.UID {
	ref := metav1.GetControllerOfNoCopy(sdc)
	if ref == nil || ref.Kind != scyllaClusterGVK.Kind || ref.APIVersion != scyllaClusterGVK.GroupVersion().String() {
		return nil
	}
	return []types.UID{ref.UID}
}
