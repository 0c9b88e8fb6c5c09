package scylladbdatacenter

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// pinnedVolume returns PersistentVolume name bound to claim (nil: unbound) with a required node affinity of terms.
func pinnedVolume(name string, claim *corev1.PersistentVolumeClaim, terms ...corev1.NodeSelectorTerm) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name + "-uid")}}
	if len(terms) != 0 {
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: terms}}
	}
	if claim != nil {
		pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID}
	}
	return pv
}

func hostnameTerm(hosts ...string) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: hosts}}}
}

func kubeNode(name string, hostname string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: hostname}}}
}

func TestOrphanedOn(t *testing.T) {
	t.Parallel()
	zoneTerm := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"z1"}}}}
	nameTerm := corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n2"}}}}
	for _, tc := range []struct {
		name  string
		pv    *corev1.PersistentVolume
		nodes []*corev1.Node
		want  string
	}{
		{name: "no node affinity", pv: pinnedVolume("pv", nil), want: ""},
		{name: "pinned by hostname to a node that exists", pv: pinnedVolume("pv", nil, hostnameTerm("n1")), nodes: []*corev1.Node{kubeNode("n1", "n1")}, want: ""},
		{name: "pinned by hostname to a node whose name differs from its hostname", pv: pinnedVolume("pv", nil, hostnameTerm("host-1")), nodes: []*corev1.Node{kubeNode("n1", "host-1")}, want: ""},
		{name: "pinned by hostname to a node that is gone", pv: pinnedVolume("pv", nil, hostnameTerm("n1")), nodes: []*corev1.Node{kubeNode("n2", "n2")}, want: "n1"},
		{name: "pinned by name to a node that is gone", pv: pinnedVolume("pv", nil, nameTerm), nodes: []*corev1.Node{kubeNode("n1", "n1")}, want: "n2"},
		{name: "pinned by name to a node that exists", pv: pinnedVolume("pv", nil, nameTerm), nodes: []*corev1.Node{kubeNode("n2", "other")}, want: ""},
		{name: "a zone may get new nodes: never orphaned", pv: pinnedVolume("pv", nil, zoneTerm), want: ""},
		{name: "one term pinned, another by zone: never orphaned", pv: pinnedVolume("pv", nil, hostnameTerm("n1"), zoneTerm), want: ""},
		{name: "two pinned terms, the second node exists", pv: pinnedVolume("pv", nil, hostnameTerm("n1"), hostnameTerm("n2")), nodes: []*corev1.Node{kubeNode("n2", "n2")}, want: ""},
		{name: "two pinned terms, both nodes gone", pv: pinnedVolume("pv", nil, hostnameTerm("n1"), hostnameTerm("n2")), want: "n1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			nodes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{nodeHostnameIndex: nodeHostnames})
			for _, node := range tc.nodes {
				if err := nodes.Add(node); err != nil {
					t.Fatal(err)
				}
			}
			got, err := orphanedOn(tc.pv, nodes)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPinnedNodeNamesIndexesEveryPinnedNameOnce(t *testing.T) {
	t.Parallel()
	zoneTerm := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"z1"}}}}
	for _, tc := range []struct {
		name string
		pv   *corev1.PersistentVolume
		want []string
	}{
		{name: "no node affinity", pv: pinnedVolume("pv", nil), want: nil},
		{name: "two terms naming a node twice", pv: pinnedVolume("pv", nil, hostnameTerm("n2", "n1"), hostnameTerm("n1")), want: []string{"n1", "n2"}},
		{name: "a term by zone: not pinned", pv: pinnedVolume("pv", nil, hostnameTerm("n1"), zoneTerm), want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := pinnedNodeNames(tc.pv)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("names differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTrimForOrphanDetectionKeepsWhatIsRead(t *testing.T) {
	t.Parallel()
	node := kubeNode("n1", "n1")
	node.ResourceVersion = "3"
	node.Status.Images = []corev1.ContainerImage{{Names: []string{"big"}}}
	node.Annotations = map[string]string{"a": "b"}
	node.Labels[corev1.LabelTopologyZone] = "z1"
	got, err := TrimForOrphanDetection(node)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: "3", Labels: map[string]string{corev1.LabelHostname: "n1"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected Node (-want +got):\n%s", diff)
	}

	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data", UID: "claim-uid"}}
	pv := pinnedVolume("pv", claim, hostnameTerm("n1"))
	wantPV := pv.DeepCopy()
	pv.Spec.Capacity = corev1.ResourceList{}
	pv.Spec.StorageClassName = "local"
	pv.Status.Phase = corev1.VolumeBound
	if got, err = TrimForOrphanDetection(pv); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantPV, got); diff != "" {
		t.Errorf("unexpected PersistentVolume (-want +got):\n%s", diff)
	}
	again, err := TrimForOrphanDetection(got)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, again); diff != "" {
		t.Errorf("trimming twice changed the PersistentVolume (-want +got):\n%s", diff)
	}
}

// orphanWorld returns replaceWorld with every data claim bound to a volume pinned to its own Kubernetes node, and
// those nodes, but the one of node gone.
func orphanWorld(t *testing.T, gone string) world {
	t.Helper()
	w := replaceWorld(t)
	var added []runtime.Object
	for _, obj := range w.objects {
		pvc, ok := obj.(*corev1.PersistentVolumeClaim)
		if !ok {
			continue
		}
		pvc.Spec.VolumeName = "pv-" + pvc.Name
		host := "host-" + strings.TrimPrefix(pvc.Name, "data-")
		added = append(added, pinnedVolume(pvc.Spec.VolumeName, pvc, hostnameTerm(host)))
		if pvc.Name != naming.PVCName(gone) {
			added = append(added, kubeNode(host, host))
		}
	}
	w.objects = append(w.objects, added...)
	return w
}

// TestSyncRequestsTheReplacementOfAnOrphanedNode: a node whose volume is pinned to a Kubernetes node that is gone
// gets naming.ReplaceLabel, once, with an event and a condition naming both; the replacement starts on the next sync.
func TestSyncRequestsTheReplacementOfAnOrphanedNode(t *testing.T) {
	t.Parallel()
	const node = "basic-dc1-b-1"
	w := orphanWorld(t, node)
	w, f := step(t, "orphaned", w, "patch services "+node)
	if _, ok := object[*corev1.Service](t, w, node).Labels[naming.ReplaceLabel]; !ok {
		t.Fatalf("%s is not labelled %s", node, naming.ReplaceLabel)
	}
	wantEvent := "Warning OrphanedNode Node " + node + " is orphaned: its data PersistentVolume pv-data-" + node +
		" can only be used on Kubernetes node host-" + node + ", which no longer exists; requested its replacement"
	if diff := cmp.Diff([]string{wantEvent}, f.events()); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}
	progressing := meta.FindStatusCondition(f.lastStatus().Conditions, "Progressing")
	if progressing == nil || !strings.Contains(progressing.Message, "node "+node+" is orphaned") || !strings.Contains(progressing.Message, "host-"+node) {
		t.Errorf("expected Progressing naming %s and its Kubernetes node, got %+v", node, progressing)
	}

	step(t, "replacement starts", w, "patch services "+node, "delete persistentvolumeclaims data-"+node, "delete pods "+node)
}

func TestSyncLeavesOrphanedNodesAloneWhenDisabled(t *testing.T) {
	t.Parallel()
	const node = "basic-dc1-a-0"
	w := orphanWorld(t, node)
	w.sdc.Spec.DisableAutomaticOrphanedNodeReplacement = new(true)
	f := syncSpecError(t, w, nodeReplacementControllerName+"Degraded: node "+node+" is orphaned: its data PersistentVolume pv-data-"+node+
		" can only be used on Kubernetes node host-"+node+", which no longer exists; automatic replacement is disabled (spec.disableAutomaticOrphanedNodeReplacement), "+
		"label member Service "+node+" with scylla/replace to replace it")
	if writes := f.kubeWrites(); len(writes) != 0 {
		t.Errorf("unexpected writes %v", writes)
	}
}

func TestSyncFindsNoOrphanWhileEveryKubernetesNodeExists(t *testing.T) {
	t.Parallel()
	w := orphanWorld(t, "none")
	step(t, "at rest", w)
	w.sdc.Spec.DisableAutomaticOrphanedNodeReplacement = new(false)
	step(t, "at rest, replacement enabled explicitly", w)
}

// TestSyncWritesAReplacementsRackConditionAtOnce: with status writes batched, the start and the end of a replacement
// are written at once, though the datacenter's Progressing stays True throughout (an orphan first, then the
// replacement): a quick replacement would otherwise never show.
func TestSyncWritesAReplacementsRackConditionAtOnce(t *testing.T) {
	t.Parallel()
	const node = "basic-dc1-b-1"
	r := newBudgetRun(t, nil)
	r.w = orphanWorld(t, node)
	r.step("orphaned", 0, nil, []string{"patch services " + node, "apply scylladbdatacenters/status basic"})
	f := r.step("replacement starts", time.Second, nil, []string{
		"patch services " + node, "delete persistentvolumeclaims data-" + node, "delete pods " + node, "apply scylladbdatacenters/status basic",
	})
	checkCondition(t, f, naming.RackMemberReplacingConditionType("b"), metav1.ConditionTrue)
	checkCondition(t, f, "Progressing", metav1.ConditionTrue)
	r.step("waiting for the new node", time.Second, nil, nil)
}
