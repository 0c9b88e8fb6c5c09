package scylladbdatacenter

import (
	"fmt"
	"slices"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// nodeNameField is the field a node selector term's matchFields can pin a Kubernetes node by.
const nodeNameField = "metadata.name"

// pinnedNodes returns, for each term of pv's required node affinity, the Kubernetes nodes it allows by name or by
// hostname label (corev1.LabelHostname In, metadata.name In). ok is false unless every term pins nodes that way: a
// volume a term allows by zone or any other label is never taken for orphaned, since nodes matching it may come.
func pinnedNodes(pv *corev1.PersistentVolume) (terms [][]string, ok bool) {
	affinity := pv.Spec.NodeAffinity
	if affinity == nil || affinity.Required == nil || len(affinity.Required.NodeSelectorTerms) == 0 {
		return nil, false
	}
	for _, term := range affinity.Required.NodeSelectorTerms {
		var names []string
		pinned := false
		for _, req := range term.MatchExpressions {
			if req.Key == corev1.LabelHostname && req.Operator == corev1.NodeSelectorOpIn {
				names, pinned = append(names, req.Values...), true
			}
		}
		for _, req := range term.MatchFields {
			if req.Key == nodeNameField && req.Operator == corev1.NodeSelectorOpIn {
				names, pinned = append(names, req.Values...), true
			}
		}
		if !pinned {
			return nil, false
		}
		terms = append(terms, names)
	}
	return terms, true
}

// Indexes orphan detection adds to the Node and PersistentVolume informers, so that neither a sync nor a Node event
// walks every Node or PersistentVolume of the cluster.
const (
	// nodeHostnameIndex indexes Nodes by their hostname label.
	nodeHostnameIndex = "scylla-operator-hostname"
	// pinnedNodeIndex indexes PersistentVolumes by the Kubernetes node names their node affinity pins them to
	// (pinnedNodes).
	pinnedNodeIndex = "scylla-operator-pinned-node"
)

// addOrphanDetectionIndexers adds nodeHostnameIndex to nodes and pinnedNodeIndex to pvs; both informers must not have
// started yet.
func addOrphanDetectionIndexers(nodes, pvs cache.SharedIndexInformer) error {
	if err := nodes.AddIndexers(cache.Indexers{nodeHostnameIndex: nodeHostnames}); err != nil {
		return fmt.Errorf("can't index Nodes by hostname: %w", err)
	}
	if err := pvs.AddIndexers(cache.Indexers{pinnedNodeIndex: pinnedNodeNames}); err != nil {
		return fmt.Errorf("can't index PersistentVolumes by the nodes they are pinned to: %w", err)
	}
	return nil
}

// nodeHostnames is the cache.IndexFunc of nodeHostnameIndex.
func nodeHostnames(obj any) ([]string, error) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return nil, nil
	}
	if hostname, ok := node.Labels[corev1.LabelHostname]; ok {
		return []string{hostname}, nil
	}
	return nil, nil
}

// pinnedNodeNames is the cache.IndexFunc of pinnedNodeIndex: every node name pinnedNodes finds, once each.
func pinnedNodeNames(obj any) ([]string, error) {
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok {
		return nil, nil
	}
	terms, _ := pinnedNodes(pv)
	var names []string
	for _, term := range terms {
		names = append(names, term...)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// kubeNodeExists tells whether nodes, a Node informer's indexer with nodeHostnameIndex, holds a Node of that name
// or hostname label.
func kubeNodeExists(nodes cache.Indexer, name string) (bool, error) {
	if _, ok, err := nodes.GetByKey(name); err != nil || ok {
		return ok, err
	}
	byHostname, err := nodes.ByIndex(nodeHostnameIndex, name)
	return len(byHostname) != 0, err
}

// orphanedOn returns the Kubernetes node pv is pinned to when no node pv can be used on exists any more (nodes: a
// Node informer's indexer with nodeHostnameIndex), and "" when pv is not pinned to nodes by name or one of them
// exists (pinnedNodes).
func orphanedOn(pv *corev1.PersistentVolume, nodes cache.Indexer) (string, error) {
	terms, ok := pinnedNodes(pv)
	if !ok {
		return "", nil
	}
	for _, names := range terms {
		for _, name := range names {
			exists, err := kubeNodeExists(nodes, name)
			if err != nil || exists {
				return "", err
			}
		}
	}
	for _, names := range terms {
		if len(names) != 0 {
			return names[0], nil
		}
	}
	return "<none>", nil
}

// findOrphans returns, by member Service name, the nodes of racks whose data claim (not being deleted) is bound to a
// PersistentVolume pinned to Kubernetes nodes of which none exists any more (orphanedOn).
func findOrphans(racks []*rackObjects, pvLister corev1listers.PersistentVolumeLister, nodes cache.Indexer) (map[string]orphan, error) {
	orphans := map[string]orphan{}
	for _, n := range memberNodes(racks) {
		if n.pvc == nil || n.pvc.DeletionTimestamp != nil || len(n.pvc.Spec.VolumeName) == 0 {
			continue
		}
		pv, err := pvLister.Get(n.pvc.Spec.VolumeName)
		if err != nil {
			// Not bound yet as far as the cache goes, or deleted: nothing pins the node.
			continue
		}
		if ref := pv.Spec.ClaimRef; ref == nil || ref.UID != n.pvc.UID {
			continue
		}
		kubeNode, err := orphanedOn(pv, nodes)
		if err != nil {
			return nil, fmt.Errorf("can't look up the Kubernetes nodes of PersistentVolume %q: %w", pv.Name, err)
		}
		if len(kubeNode) != 0 {
			orphans[n.service.Name] = orphan{volume: pv.Name, kubeNode: kubeNode}
		}
	}
	return orphans, nil
}

// orphanReplacementDisabled tells whether sdc turns off the automatic replacement of orphaned nodes.
func orphanReplacementDisabled(sdc *scyllav1alpha1.ScyllaDBDatacenter) bool {
	return sdc.Spec.DisableAutomaticOrphanedNodeReplacement != nil && *sdc.Spec.DisableAutomaticOrphanedNodeReplacement
}

// TrimForOrphanDetection is the cache.TransformFunc of the informers of Nodes and PersistentVolumes the
// ScyllaDBDatacenter controller watches for orphaned nodes. Both kinds are cluster-wide and read for orphan
// detection only: a Node keeps its name, UID and hostname label (its other labels, spec and status, with images and
// heartbeats, are most of it); a PersistentVolume its name, UID, claim reference and node affinity. Other kinds pass unchanged.
func TrimForOrphanDetection(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Node:
		var labels map[string]string
		if hostname, ok := o.Labels[corev1.LabelHostname]; ok {
			labels = map[string]string{corev1.LabelHostname: hostname}
		}
		return &corev1.Node{
			TypeMeta:   o.TypeMeta,
			ObjectMeta: trimmedMeta(&o.ObjectMeta, labels),
		}, nil
	case *corev1.PersistentVolume:
		return &corev1.PersistentVolume{
			TypeMeta:   o.TypeMeta,
			ObjectMeta: trimmedMeta(&o.ObjectMeta, nil),
			Spec: corev1.PersistentVolumeSpec{
				ClaimRef:     o.Spec.ClaimRef,
				NodeAffinity: o.Spec.NodeAffinity,
			},
		}, nil
	}
	return obj, nil
}

// trimmedMeta keeps of meta what the informer needs (name, UID, resource version, deletion) and labels.
func trimmedMeta(meta *metav1.ObjectMeta, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:              meta.Name,
		UID:               meta.UID,
		ResourceVersion:   meta.ResourceVersion,
		DeletionTimestamp: meta.DeletionTimestamp,
		Labels:            labels,
	}
}

// nodeHandlerFuncs enqueue, when a Kubernetes node comes or goes, the datacenters whose data volumes are pinned to it
// by its name or hostname label: their nodes become orphaned, or stop being. Node updates (heartbeats, mostly) change
// nothing orphan detection reads.
func (c *Controller) nodeHandlerFuncs() cache.ResourceEventHandlerFuncs {
	return beforeAndAfterHandlerFuncs("Node", func(node *corev1.Node) {
		names := []string{node.Name}
		if hostname, ok := node.Labels[corev1.LabelHostname]; ok && hostname != node.Name {
			names = append(names, hostname)
		}
		for _, name := range names {
			pvs, err := c.pvIndexer.ByIndex(pinnedNodeIndex, name)
			if err != nil {
				utilruntime.HandleError(fmt.Errorf("can't list the PersistentVolumes pinned to Kubernetes node %q: %w", name, err))
				return
			}
			for _, obj := range pvs {
				if pv, ok := obj.(*corev1.PersistentVolume); ok {
					c.enqueueByClaimOf(pv)
				}
			}
		}
	})
}

// persistentVolumeHandlerFuncs enqueue the datacenter whose data claim a PersistentVolume is bound to, before and
// after a change.
func (c *Controller) persistentVolumeHandlerFuncs() cache.ResourceEventHandlerFuncs {
	return beforeAndAfterHandlerFuncs("PersistentVolume", c.enqueueByClaimOf)
}

// enqueueByClaimOf enqueues the datacenter whose data claim pv is bound to, if any.
func (c *Controller) enqueueByClaimOf(pv *corev1.PersistentVolume) {
	ref := pv.Spec.ClaimRef
	if ref == nil {
		return
	}
	pvc, err := c.pvcLister.PersistentVolumeClaims(ref.Namespace).Get(ref.Name)
	if err != nil {
		// Not a claim of a datacenter: the cache holds only those.
		return
	}
	c.enqueueByClusterLabel(pvc)
}
