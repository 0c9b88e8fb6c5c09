package operator

import (
	"fmt"
	"sort"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// This file holds the pure part of the inventory checks; it has no build tag, so that its unit tests run with the
// ordinary `go test`.

// statefulSetName is the name of a rack's StatefulSet.
func statefulSetName(sc *scyllav1.ScyllaCluster, rack string) string {
	return naming.StatefulSetName(naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name), sc.Spec.Datacenter.Name, rack)
}

// memberName is the name of a node's pod and member Service.
func memberName(sc *scyllav1.ScyllaCluster, rack string, ordinal int32) string {
	return naming.PodName(statefulSetName(sc, rack), ordinal)
}

// Kinds of the objects in a cluster's namespace that the inventory lists.
const (
	kindScyllaDBDatacenter    = "ScyllaDBDatacenter"
	kindStatefulSet           = "StatefulSet"
	kindService               = "Service"
	kindPodDisruptionBudget   = "PodDisruptionBudget"
	kindServiceAccount        = "ServiceAccount"
	kindRoleBinding           = "RoleBinding"
	kindConfigMap             = "ConfigMap"
	kindSecret                = "Secret"
	kindPod                   = "Pod"
	kindPersistentVolumeClaim = "PersistentVolumeClaim"
)

// inventory holds, by kind, the sorted names of the objects in a namespace.
type inventory map[string][]string

// expectedInventory is what a rolled-out ScyllaCluster has in its namespace: every object the operator creates
// (one ScyllaDBDatacenter; a StatefulSet per rack; the client Service and a member Service per node; the PDB, the
// member ServiceAccount and RoleBinding, the managed config and the agent auth-token Secret, and with automatic TLS, on
// by default, the serving and client CAs, the serving and admin certificates and the admin connection config), and
// the pods and data claims of its nodes.
func expectedInventory(sc *scyllav1.ScyllaCluster) inventory {
	sdcName := naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name)
	inv := inventory{
		kindScyllaDBDatacenter:  {sdcName},
		kindService:             {naming.ClientServiceName(sdcName)},
		kindPodDisruptionBudget: {naming.PodDisruptionBudgetName(sdcName)},
		kindServiceAccount:      {naming.MemberServiceAccountName(sdcName)},
		kindRoleBinding:         {naming.MemberRoleBindingName(sdcName)},
		kindConfigMap:           {naming.ManagedConfigName(sdcName), naming.ServingCAName(sdcName), naming.ClientCAName(sdcName)},
		kindSecret: {naming.AgentAuthTokenSecretName(sdcName), naming.ServingCAName(sdcName), naming.ServingCertsName(sdcName),
			naming.ClientCAName(sdcName), naming.AdminClientCertName(sdcName), naming.AdminCQLConnectionConfigsName(sdcName)},
		kindStatefulSet:           nil,
		kindPod:                   nil,
		kindPersistentVolumeClaim: nil,
	}
	for _, rack := range sc.Spec.Datacenter.Racks {
		inv[kindStatefulSet] = append(inv[kindStatefulSet], statefulSetName(sc, rack.Name))
		for ordinal := range rack.Members {
			name := memberName(sc, rack.Name, ordinal)
			inv[kindService] = append(inv[kindService], name)
			inv[kindPod] = append(inv[kindPod], name)
			inv[kindPersistentVolumeClaim] = append(inv[kindPersistentVolumeClaim], naming.PVCName(name))
		}
	}
	for kind := range inv {
		sort.Strings(inv[kind])
	}
	return inv
}

// ownedObject is an object of the namespace with what controls it.
type ownedObject struct {
	kind, name string
	uid        types.UID
	owners     []metav1.OwnerReference
}

// controllerKinds is the kind that must control each kind of object; PersistentVolumeClaims, which a StatefulSet
// creates and leaves behind, are controlled by nothing.
var controllerKinds = map[string]string{
	kindScyllaDBDatacenter:    "ScyllaCluster",
	kindStatefulSet:           kindScyllaDBDatacenter,
	kindService:               kindScyllaDBDatacenter,
	kindPodDisruptionBudget:   kindScyllaDBDatacenter,
	kindServiceAccount:        kindScyllaDBDatacenter,
	kindRoleBinding:           kindScyllaDBDatacenter,
	kindConfigMap:             kindScyllaDBDatacenter,
	kindSecret:                kindScyllaDBDatacenter,
	kindPod:                   kindStatefulSet,
	kindPersistentVolumeClaim: "",
}

// inventoryProblems compares objs, the objects of sc's namespace, with what sc should have there: exactly the
// expected objects by kind and name, no more and no fewer, each with exactly one owner reference, a controllerRef to
// a live owner of the right kind (kind, name and UID match). It returns every difference.
func inventoryProblems(sc *scyllav1.ScyllaCluster, objs []ownedObject) []string {
	got := inventory{}
	for kind := range controllerKinds {
		got[kind] = nil
	}
	live := map[string]types.UID{"ScyllaCluster/" + sc.Name: sc.UID}
	for _, o := range objs {
		got[o.kind] = append(got[o.kind], o.name)
		live[o.kind+"/"+o.name] = o.uid
	}
	for kind := range got {
		sort.Strings(got[kind])
	}
	var problems []string
	if diff := cmp.Diff(expectedInventory(sc), got); diff != "" {
		problems = append(problems, fmt.Sprintf("objects differ from the expected ones (-want +got):\n%s", diff))
	}
	for _, o := range objs {
		if msg := checkOwners(o, live); len(msg) != 0 {
			problems = append(problems, msg)
		}
	}
	return problems
}

// checkOwners says what is wrong with o's owner references, given the live objects' UIDs by "<kind>/<name>", or
// returns "".
func checkOwners(o ownedObject, live map[string]types.UID) string {
	wantKind := controllerKinds[o.kind]
	var controllers []metav1.OwnerReference
	for _, ref := range o.owners {
		if uid, ok := live[ref.Kind+"/"+ref.Name]; !ok || uid != ref.UID {
			return fmt.Sprintf("%s %q has an owner reference to %s %q (UID %s) that does not exist (live UID %q)", o.kind, o.name, ref.Kind, ref.Name, ref.UID, uid)
		}
		if ref.Controller != nil && *ref.Controller {
			controllers = append(controllers, ref)
		}
	}
	switch {
	case len(wantKind) == 0 && len(o.owners) != 0:
		return fmt.Sprintf("%s %q has owner references %+v, want none", o.kind, o.name, o.owners)
	case len(wantKind) == 0:
		return ""
	case len(controllers) != 1 || len(o.owners) != 1:
		return fmt.Sprintf("%s %q has owner references %+v, want exactly one, a controllerRef to a %s", o.kind, o.name, o.owners, wantKind)
	case controllers[0].Kind != wantKind:
		return fmt.Sprintf("%s %q is controlled by %s %q, want a %s", o.kind, o.name, controllers[0].Kind, controllers[0].Name, wantKind)
	}
	return ""
}
