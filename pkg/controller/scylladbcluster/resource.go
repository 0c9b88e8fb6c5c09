// Package scylladbcluster holds the pure builders of the ScyllaDBCluster controller: what it creates in the remote
// Kubernetes clusters for each datacenter, and how the datacenters seed each other.
package scylladbcluster

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/merge"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	"github.com/scyllakube/scylla-operator/pkg/validation"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// datacenterInputs is what makeScyllaDBDatacenter needs beyond the ScyllaDBCluster: what the controller computed
// from the state of the other datacenters.
type datacenterInputs struct {
	// externalSeeds are the datacenter's seeds from seedsFor (datacenterSeeds.externalSeeds). They are appended to
	// the user's spec.scyllaDB.externalSeeds.
	externalSeeds []string
}

// makeRemoteNamespace returns the namespace, in dc's remote cluster, that holds everything created for dc.
func makeRemoteNamespace(sc *scyllav1alpha1.ScyllaDBCluster, dc *scyllav1alpha1.ScyllaDBClusterDatacenter) (*corev1.Namespace, error) {
	if _, err := validateDatacenter(sc, dc); err != nil {
		return nil, err
	}
	meta := remoteObjectMeta(sc, dc, naming.ScyllaDBClusterRemoteNamespaceName(sc.Namespace, dc.Name))
	meta.Namespace = ""
	return &corev1.Namespace{ObjectMeta: meta}, nil
}

// makeRemoteAuthTokenSecret returns the copy, in dc's remote namespace, of the ScyllaDBCluster's agent auth token:
// the Secret naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot on dc's ScyllaDBDatacenter points at, in the
// format the ScyllaDBDatacenter controller reads from it (an agent configuration file under
// naming.ScyllaDBManagerAgentAuthTokenKey). Errors never include the token.
func makeRemoteAuthTokenSecret(sc *scyllav1alpha1.ScyllaDBCluster, dc *scyllav1alpha1.ScyllaDBClusterDatacenter, token string) (*corev1.Secret, error) {
	if _, err := validateDatacenter(sc, dc); err != nil {
		return nil, err
	}
	return makeAuthTokenSecretWithMeta(remoteObjectMeta(sc, dc, naming.ScyllaDBClusterAuthTokenSecretName(sc.Name)), token)
}

// makeAuthTokenSecret returns the Secret, in the meta cluster beside sc, that holds the cluster's one agent auth
// token: the source of every remote copy (makeRemoteAuthTokenSecret), and what the manager-controller registers the
// cluster with. It carries the operator's managed-by label, which the manager-controller's Secret informer selects
// (naming.ManagedObjectsSelector), and sc controls it. Errors never include the token.
func makeAuthTokenSecret(sc *scyllav1alpha1.ScyllaDBCluster, token string) (*corev1.Secret, error) {
	return makeAuthTokenSecretWithMeta(metaObjectMeta(sc, naming.ScyllaDBClusterAuthTokenSecretName(sc.Name)), token)
}

// makeAuthTokenSecretWithMeta returns a Secret with meta holding token as the ScyllaDBDatacenter controller and the
// manager-controller read it: an agent configuration file under naming.ScyllaDBManagerAgentAuthTokenKey.
func makeAuthTokenSecretWithMeta(meta metav1.ObjectMeta, token string) (*corev1.Secret, error) {
	if len(token) == 0 {
		return nil, errors.New("can't make the agent auth-token Secret: the token is empty")
	}
	data, err := scyllaagent.MakeAuthTokenConfig(token)
	if err != nil {
		return nil, fmt.Errorf("can't make the agent auth-token Secret: %w", err)
	}
	return &corev1.Secret{
		ObjectMeta: meta,
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{naming.ScyllaDBManagerAgentAuthTokenKey: data},
	}, nil
}

// makeScyllaDBDatacenter returns the ScyllaDBDatacenter that runs dc in its remote namespace.
//
// Settings come from three levels, the most specific winning: the cluster (spec), spec.datacenterTemplate, and dc.
// Maps merge key by key, lists append (volumes by name and volume mounts by mount path, a more specific item
// replacing a less specific one of the same key), and single values are replaced. The ScyllaDBDatacenter's
// rackTemplate is, from least to most specific: the template's placement, topologyLabelSelector, scyllaDB and
// scyllaDBManagerAgent; the template's rackTemplate; the same four of dc; dc's rackTemplate. Its racks are the
// template's racks, each merged with dc's rack of the same name, followed by dc's other racks.
//
// The ScyllaDBDatacenter never carries naming.RegisterWithScyllaDBManagerLabel, however the ScyllaDBCluster is
// labelled: ScyllaDB Manager registers the ScyllaDBCluster as one cluster (manager-integration.md). It is annotated
// with naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot naming the Secret makeRemoteAuthTokenSecret makes,
// so that every datacenter's agents share the cluster's token.
func makeScyllaDBDatacenter(sc *scyllav1alpha1.ScyllaDBCluster, dc *scyllav1alpha1.ScyllaDBClusterDatacenter, inputs datacenterInputs) (*scyllav1alpha1.ScyllaDBDatacenter, error) {
	racks, err := validateDatacenter(sc, dc)
	if err != nil {
		return nil, err
	}
	// Everything below may alias the arguments' fields; the copies keep the informer cache out of reach of later
	// mutations.
	sc, dc = sc.DeepCopy(), dc.DeepCopy()
	spec := &sc.Spec

	meta := remoteObjectMeta(sc, dc, naming.ScyllaDBClusterDatacenterName(sc.Name, dc.Name))
	meta.Annotations = merge.Maps(meta.Annotations, map[string]string{
		naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot: naming.ScyllaDBClusterAuthTokenSecretName(sc.Name),
	})

	clusterName := sc.Name
	if spec.ClusterName != nil && len(*spec.ClusterName) != 0 {
		clusterName = *spec.ClusterName
	}

	scyllaDB := spec.ScyllaDB
	scyllaDB.ExternalSeeds = appendNew(scyllaDB.ExternalSeeds, inputs.externalSeeds)

	sdc := &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: meta,
		Spec: scyllav1alpha1.ScyllaDBDatacenterSpec{
			Metadata:                                datacenterMetadata(sc, dc),
			ClusterName:                             clusterName,
			DatacenterName:                          &dc.Name,
			ScyllaDB:                                scyllaDB,
			ScyllaDBManagerAgent:                    spec.ScyllaDBManagerAgent,
			ForceRedeploymentReason:                 forceRedeploymentReason(spec.ForceRedeploymentReason, dc.ForceRedeploymentReason),
			ExposeOptions:                           makeExposeOptions(spec.ExposeOptions),
			RackTemplate:                            merge.ScyllaDBClusterDatacenterRackTemplate(sc, dc),
			Racks:                                   racks,
			DisableAutomaticOrphanedNodeReplacement: new(spec.DisableAutomaticOrphanedNodeReplacement),
			MinTerminationGracePeriodSeconds:        spec.MinTerminationGracePeriodSeconds,
			MinReadySeconds:                         spec.MinReadySeconds,
			ReadinessGates:                          spec.ReadinessGates,
		},
	}
	sdc.Spec.EnableParallelNodeOperations = parallelNodeOperations(sdc)
	return sdc, nil
}

// parallelNodeOperations returns what the remote cluster's mutating webhook sets spec.enableParallelNodeOperations
// of sdc to when it is created without it: true when validation accepts true for sdc's image, unset otherwise. The
// controller sets it itself because the webhook defaults it on creation only: an update without it would turn
// parallel node operations off again.
func parallelNodeOperations(sdc *scyllav1alpha1.ScyllaDBDatacenter) *bool {
	enabled := sdc.DeepCopy()
	enabled.Spec.EnableParallelNodeOperations = new(true)
	path := field.NewPath("spec", "enableParallelNodeOperations").String()
	if slices.ContainsFunc(validation.ValidateScyllaDBDatacenter(enabled), func(err *field.Error) bool { return err.Field == path }) {
		return nil
	}
	return new(true)
}

// remoteObjectMeta returns the metadata of an object named name in dc's remote namespace: the labels and annotations
// of spec.metadata, the template's and dc's merged, with the parent labels on top and without the ScyllaDB Manager
// registration label.
func remoteObjectMeta(sc *scyllav1alpha1.ScyllaDBCluster, dc *scyllav1alpha1.ScyllaDBClusterDatacenter, name string) metav1.ObjectMeta {
	var labels, annotations map[string]string
	if m := datacenterMetadata(sc, dc); m != nil {
		labels, annotations = m.Labels, m.Annotations
	}
	return metav1.ObjectMeta{
		Name:        name,
		Namespace:   naming.ScyllaDBClusterRemoteNamespaceName(sc.Namespace, dc.Name),
		Labels:      merge.Maps(labels, naming.ScyllaDBClusterRemoteLabels(sc.Namespace, sc.Name, dc.Name)),
		Annotations: annotations,
	}
}

// datacenterMetadata returns spec.metadata, the template's metadata and dc's merged, without the ScyllaDB Manager
// registration label, or nil when they hold nothing.
func datacenterMetadata(sc *scyllav1alpha1.ScyllaDBCluster, dc *scyllav1alpha1.ScyllaDBClusterDatacenter) *scyllav1alpha1.ObjectTemplateMetadata {
	var merged scyllav1alpha1.ObjectTemplateMetadata
	levels := []*scyllav1alpha1.ObjectTemplateMetadata{sc.Spec.Metadata, nil, dc.Metadata}
	if sc.Spec.DatacenterTemplate != nil {
		levels[1] = sc.Spec.DatacenterTemplate.Metadata
	}
	for _, m := range levels {
		if m != nil {
			merged.Labels = merge.Maps(merged.Labels, m.Labels)
			merged.Annotations = merge.Maps(merged.Annotations, m.Annotations)
		}
	}
	if merged.Labels != nil {
		delete(merged.Labels, naming.RegisterWithScyllaDBManagerLabel)
		if len(merged.Labels) == 0 {
			merged.Labels = nil
		}
	}
	if merged.Labels == nil && merged.Annotations == nil {
		return nil
	}
	return &merged
}

// forceRedeploymentReason combines the cluster's and the datacenter's reasons, so that changing either restarts the
// datacenter's nodes.
func forceRedeploymentReason(cluster, dc *string) *string {
	var reasons []string
	for _, r := range []*string{cluster, dc} {
		if r != nil && len(*r) != 0 {
			reasons = append(reasons, *r)
		}
	}
	if len(reasons) == 0 {
		return nil
	}
	return new(strings.Join(reasons, ","))
}

// makeExposeOptions returns the ScyllaDBDatacenter expose options that mean what the ScyllaDBCluster's mean. The
// defaults are written out because they differ: a ScyllaDBCluster's nodes default to Headless Services and PodIP
// broadcast, a ScyllaDBDatacenter's to ClusterIP and ServiceClusterIP.
func makeExposeOptions(options *scyllav1alpha1.ScyllaDBClusterExposeOptions) *scyllav1alpha1.ExposeOptions {
	if options == nil {
		options = &scyllav1alpha1.ScyllaDBClusterExposeOptions{}
	}
	nodeService := options.NodeService
	if nodeService == nil {
		nodeService = &scyllav1alpha1.NodeServiceTemplate{Type: scyllav1alpha1.NodeServiceTypeHeadless}
	}
	broadcast := &scyllav1alpha1.NodeBroadcastOptions{}
	if options.BroadcastOptions != nil {
		broadcast = options.BroadcastOptions.DeepCopy()
	}
	for _, b := range []**scyllav1alpha1.BroadcastOptions{&broadcast.Nodes, &broadcast.Clients} {
		if *b == nil {
			*b = &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypePodIP}
		}
	}
	return &scyllav1alpha1.ExposeOptions{
		NodeService:      nodeService,
		BroadcastOptions: broadcast,
		ListenOptions:    options.ListenOptions,
	}
}

// appendNew returns base followed by the items of extra that are not already there.
func appendNew(base, extra []string) []string {
	merged := slices.Clone(base)
	for _, e := range extra {
		if !slices.Contains(merged, e) {
			merged = append(merged, e)
		}
	}
	return merged
}

// validateDatacenter returns dc's merged racks, or what keeps it from being built: any error of the ScyllaDBCluster
// (validation.ValidateScyllaDBCluster: a controller builds nothing from an object the webhook would refuse), or dc
// not being one of sc's datacenters.
func validateDatacenter(sc *scyllav1alpha1.ScyllaDBCluster, dc *scyllav1alpha1.ScyllaDBClusterDatacenter) ([]scyllav1alpha1.RackSpec, error) {
	errs := validation.ValidateScyllaDBCluster(sc)
	if !slices.ContainsFunc(sc.Spec.Datacenters, func(d scyllav1alpha1.ScyllaDBClusterDatacenter) bool { return d.Name == dc.Name }) {
		errs = append(errs, field.NotFound(field.NewPath("spec", "datacenters"), dc.Name))
	}
	if len(errs) != 0 {
		return nil, errs.ToAggregate()
	}
	return merge.ScyllaDBClusterDatacenterRacks(sc, dc), nil
}
