package naming

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// Names used by the local control plane (hack/local-up.sh, e2e/framework) and its fakes (e2e/cmd/cluster-fakes).
// The storage annotation keys are the well-known ones Kubernetes' PersistentVolume controller and scheduler set.
const (
	// KwokNodeAnnotation marks the Nodes that kwok simulates; kwok runs with
	// --manage-nodes-with-annotation-selector=KwokNodeAnnotation=KwokNodeAnnotationValue.
	KwokNodeAnnotation      = "kwok.x-k8s.io/node"
	KwokNodeAnnotationValue = "fake"
	// KwokNodeInternalIPAnnotation on a simulated Node is the InternalIP its kwok stage reports (hack/kwok/stages.yaml),
	// and so the pod IP of its host-network pods; without it the node reports kwok's --node-ip.
	KwokNodeInternalIPAnnotation = "e2e.scylla-operator.scylladb.com/internal-ip"

	// StorageProvisionerAnnotation on a PersistentVolumeClaim names the provisioner that must provision it.
	StorageProvisionerAnnotation = "volume.kubernetes.io/storage-provisioner"
	// BetaStorageProvisionerAnnotation is the deprecated spelling of StorageProvisionerAnnotation.
	BetaStorageProvisionerAnnotation = "volume.beta.kubernetes.io/storage-provisioner"
	// SelectedNodeAnnotation on a PersistentVolumeClaim names the node the scheduler chose for a
	// WaitForFirstConsumer volume.
	SelectedNodeAnnotation = "volume.kubernetes.io/selected-node"
	// ProvisionedByAnnotation on a PersistentVolume names the provisioner that created it.
	ProvisionedByAnnotation = "pv.kubernetes.io/provisioned-by"
	// DefaultStorageClassAnnotation marks the StorageClass used by claims that name none.
	DefaultStorageClassAnnotation = "storageclass.kubernetes.io/is-default-class"

	// FakeVolumeProvisioner is the provisioner name served by cluster-fakes.
	FakeVolumeProvisioner = "fake.scylla-operator.scylladb.com/local-volume"
	// FakeStorageClassName is the default StorageClass cluster-fakes creates for FakeVolumeProvisioner.
	FakeStorageClassName = "standard"

	// ExampleStorageClassName is the StorageClass the examples in deploy/examples/ use; cluster-fakes serves it
	// too, so that the examples run on a local control plane.
	ExampleStorageClassName = "scylladb-local-xfs"
	// ExampleNodeTypeLabel and ExampleNodeTypeLabelValue are the node label the examples' placement requires;
	// simulated nodes carry it.
	ExampleNodeTypeLabel      = "scylla.scylladb.com/node-type"
	ExampleNodeTypeLabelValue = "scylla"
)

// FakeVolumeName returns the name of the PersistentVolume cluster-fakes provisions for the claim with the given UID.
func FakeVolumeName(claimUID types.UID) string {
	return fmt.Sprintf("pvc-%s", claimUID)
}

// KwokNodeName returns the name of the index-th simulated node in a zone.
func KwokNodeName(zone string, index int) string {
	return fmt.Sprintf("kwok-%s-%d", zone, index)
}
