//go:build e2e

package operator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// sharedResyncPeriod is the shared replica's --resync-period: the shortest the operator accepts, so that the
// steady-state test can watch two full periods.
const sharedResyncPeriod = time.Minute

// TestOperatorScenarios runs one operator replica and, in parallel, scenarios that each drive a ScyllaCluster in
// their own namespace through it.
func TestOperatorScenarios(t *testing.T) {
	f := framework.NewFramework(t)
	op := startOperator(t, f, f.Cluster(), "operator-shared", operatorOptions{
		leaseName:    f.Namespace(),
		resyncPeriod: sharedResyncPeriod,
		// Syncs are logged at 4; the steady-state test counts them.
		verbosity: 4,
	})

	t.Run("group", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			run  func(t *testing.T, op *operatorProcess)
		}{
			{"ThreeRacksBecomeAvailableWithEveryObject", testThreeRacksBecomeAvailable},
			{"ScaleUpThenDownByDecommission", testScaleUpThenDownByDecommission},
			{"RackRemovedAfterScalingToZero", testRackRemovedAfterScalingToZero},
			{"VersionChangeReplacesEveryPod", testVersionChangeReplacesEveryPod},
			{"DeletingTheScyllaClusterCollectsEverything", testDeletingTheScyllaClusterCollectsEverything},
			{"NoWritesOverTwoResyncPeriodsAfterConvergence", testNoWritesAfterConvergence},
			{"LabelsOfAnotherActorSurviveReconciles", testLabelsOfAnotherActorSurvive},
			{"SysctlsSetByAPrivilegedInitContainer", testSysctlsSetByAPrivilegedInitContainer},
			{"CQLIngressesPerNodeAndDatacenter", testCQLIngresses},
			// Node replacement (replace_test.go).
			{"UserRequestedReplacementThenNoWritesAtRest", testUserRequestedReplacement},
			{"OrphanedNodeIsReplacedAutomatically", testOrphanedNodeReplaced},
			{"OrphanedNodeIsLeftAloneWithoutAutomaticCleanup", testOrphanedNodeLeftAlone},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				tc.run(t, op)
			})
		}
	})
}

func testThreeRacksBecomeAvailable(t *testing.T, _ *operatorProcess) {
	e := newTestEnv(t)
	ctx := t.Context()
	sc := e.createScyllaCluster(e.newScyllaCluster(3, 1))
	sc = e.waitForRollout(sc.Name, "the 3-rack ScyllaCluster to be Available and settled")

	if err := e.checkInventory(ctx, sc); err != nil {
		t.Fatal(err)
	}

	type rackSummary struct {
		Version                            string
		Members, Ready, Available, Updated int32
		Stale                              bool
	}
	wantRacks := map[string]rackSummary{}
	gotRacks := map[string]rackSummary{}
	for _, rack := range sc.Spec.Datacenter.Racks {
		wantRacks[rack.Name] = rackSummary{Version: exampleVersion, Members: 1, Ready: 1, Available: 1, Updated: 1}
	}
	for name, rs := range sc.Status.Racks {
		gotRacks[name] = rackSummary{rs.Version, rs.Members, rs.ReadyMembers, deref(rs.AvailableMembers), deref(rs.UpdatedMembers), deref(rs.Stale)}
	}
	if diff := cmp.Diff(wantRacks, gotRacks); diff != "" {
		t.Errorf("rack status differs (-want +got):\n%s", diff)
	}
	if got := [4]int32{deref(sc.Status.Members), deref(sc.Status.ReadyMembers), deref(sc.Status.AvailableMembers), deref(sc.Status.RackCount)}; got != [4]int32{3, 3, 3, 3} {
		t.Errorf("members, readyMembers, availableMembers, rackCount are %v, want 3 each", got)
	}

	sdc := e.scyllaDBDatacenter(ctx, sc)
	if got := sdc.Labels[naming.RegisterWithScyllaDBManagerLabel]; got != naming.RegisterWithScyllaDBManagerLabelValue {
		t.Errorf("ScyllaDBDatacenter label %s is %q, want %q", naming.RegisterWithScyllaDBManagerLabel, got, naming.RegisterWithScyllaDBManagerLabelValue)
	}
	sdcName := sdc.Name
	nodePodSelector := metav1.SetAsLabelSelector(naming.NodePodLabels(sdcName))

	for _, rack := range sc.Spec.Datacenter.Racks {
		stsName := statefulSetName(sc, rack.Name)
		sts, err := e.kube.AppsV1().StatefulSets(e.ns).Get(ctx, stsName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := sts.Spec.Template.Spec.ServiceAccountName; got != naming.MemberServiceAccountName(sdcName) {
			t.Errorf("StatefulSet %s runs pods as ServiceAccount %q, want %q", stsName, got, naming.MemberServiceAccountName(sdcName))
		}
		if n := len(sts.Spec.VolumeClaimTemplates); n != 1 {
			t.Errorf("StatefulSet %s has %d volume claim templates, want 1", stsName, n)
		} else {
			claim := sts.Spec.VolumeClaimTemplates[0]
			gotStorage := claim.Spec.Resources.Requests[corev1.ResourceStorage]
			if claim.Name != naming.DataVolumeName || deref(claim.Spec.StorageClassName) != naming.ExampleStorageClassName || gotStorage.Cmp(resource.MustParse(rack.Storage.Capacity)) != 0 {
				t.Errorf("StatefulSet %s claims %q of class %q with %s, want %q of class %q with %s", stsName,
					claim.Name, deref(claim.Spec.StorageClassName), gotStorage.String(), naming.DataVolumeName, naming.ExampleStorageClassName, rack.Storage.Capacity)
			}
		}

		// The example's node affinity puts each rack's node into its zone.
		pod, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, memberName(sc, rack.Name, 0), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		node, err := e.kube.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if zone := node.Labels[corev1.LabelTopologyZone]; zone != rack.Name {
			t.Errorf("pod %s runs on node %s in zone %q, want zone %q", pod.Name, node.Name, zone, rack.Name)
		}

		svcName := memberName(sc, rack.Name, 0)
		svc, err := e.kube.CoreV1().Services(e.ns).Get(ctx, svcName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		type memberServiceSummary struct {
			Type                     corev1.ServiceType
			HasClusterIP             bool
			PublishNotReadyAddresses bool
			Selector                 map[string]string
			ServiceType, Rack        string
		}
		want := memberServiceSummary{
			// The example does not set exposeOptions: member Services are ClusterIP, whose IP each node advertises.
			Type:                     corev1.ServiceTypeClusterIP,
			HasClusterIP:             true,
			PublishNotReadyAddresses: true,
			Selector:                 map[string]string{naming.StatefulSetPodNameLabel: svcName},
			ServiceType:              naming.ScyllaServiceTypeMember,
			Rack:                     rack.Name,
		}
		got := memberServiceSummary{
			Type:                     svc.Spec.Type,
			HasClusterIP:             len(svc.Spec.ClusterIP) != 0 && svc.Spec.ClusterIP != corev1.ClusterIPNone,
			PublishNotReadyAddresses: svc.Spec.PublishNotReadyAddresses,
			Selector:                 svc.Spec.Selector,
			ServiceType:              svc.Labels[naming.ScyllaServiceTypeLabel],
			Rack:                     svc.Labels[naming.RackNameLabel],
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("member Service %s differs (-want +got):\n%s", svcName, diff)
		}
	}

	client, err := e.kube.CoreV1().Services(e.ns).Get(ctx, naming.ClientServiceName(sdcName), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if client.Spec.Type != corev1.ServiceTypeClusterIP || client.Labels[naming.ScyllaServiceTypeLabel] != naming.ScyllaServiceTypeClient ||
		!cmp.Equal(client.Spec.Selector, naming.NodePodLabels(sdcName)) {
		t.Errorf("client Service %s is of type %s with %s=%q selecting %v; want ClusterIP, %q, selecting %v", client.Name, client.Spec.Type,
			naming.ScyllaServiceTypeLabel, client.Labels[naming.ScyllaServiceTypeLabel], client.Spec.Selector, naming.ScyllaServiceTypeClient, naming.NodePodLabels(sdcName))
	}

	pdb, err := e.kube.PolicyV1().PodDisruptionBudgets(e.ns).Get(ctx, naming.PodDisruptionBudgetName(sdcName), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if one := intstr.FromInt32(1); !cmp.Equal(pdb.Spec.MaxUnavailable, &one) || !cmp.Equal(pdb.Spec.Selector, nodePodSelector) {
		t.Errorf("PodDisruptionBudget %s allows %v unavailable among %v; want 1 among %v", pdb.Name, pdb.Spec.MaxUnavailable, pdb.Spec.Selector, nodePodSelector)
	}

	rb, err := e.kube.RbacV1().RoleBindings(e.ns).Get(ctx, naming.MemberRoleBindingName(sdcName), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRoleRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: naming.MemberClusterRoleName}
	wantSubjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: e.ns, Name: naming.MemberServiceAccountName(sdcName)}}
	if !cmp.Equal(rb.RoleRef, wantRoleRef) || !cmp.Equal(rb.Subjects, wantSubjects) {
		t.Errorf("RoleBinding %s grants %+v to %+v; want %+v to %+v", rb.Name, rb.RoleRef, rb.Subjects, wantRoleRef, wantSubjects)
	}

	cm, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(ctx, naming.ManagedConfigName(sdcName), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wantKeys []string
	for _, rack := range sc.Spec.Datacenter.Racks {
		wantKeys = append(wantKeys, naming.ScyllaDBManagedConfigKey(rack.Name))
	}
	slices.Sort(wantKeys)
	if diff := cmp.Diff(wantKeys, sortedKeys(cm.Data)); diff != "" {
		t.Errorf("managed config ConfigMap %s keys differ (-want +got):\n%s", cm.Name, diff)
	}

	secret, err := e.kube.CoreV1().Secrets(e.ns).Get(ctx, naming.AgentAuthTokenSecretName(sdcName), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var agentConfig struct {
		AuthToken string `json:"auth_token"`
	}
	if err := yaml.Unmarshal(secret.Data[naming.ScyllaDBManagerAgentAuthTokenKey], &agentConfig); err != nil {
		t.Errorf("auth-token Secret %s key %s is not an agent config: %v", secret.Name, naming.ScyllaDBManagerAgentAuthTokenKey, err)
	}
	if len(agentConfig.AuthToken) == 0 {
		t.Errorf("auth-token Secret %s has no auth token under key %s (keys %v)", secret.Name, naming.ScyllaDBManagerAgentAuthTokenKey, sortedKeys(secret.Data))
	}
}

func testScaleUpThenDownByDecommission(t *testing.T, op *operatorProcess) {
	e := newTestEnv(t)
	sc := e.newScyllaCluster(1, 3)
	rack := sc.Spec.Datacenter.Racks[0].Name
	sc = e.createScyllaCluster(sc)
	sc = e.waitForRollout(sc.Name, "3 nodes to roll out")

	sc = e.updateScyllaCluster(sc.Name, func(sc *scyllav1.ScyllaCluster) { rackByName(t, sc, rack).Members = 5 })
	sc = e.waitForRollout(sc.Name, "the scale-up to 5 nodes")
	e.waitForInventory(sc, "exactly the objects of 5 nodes")

	e.scaleRackDown(sc.Name, rack, 2)
	sc = e.waitForRollout(sc.Name, "the scale-down to 2 nodes")
	e.waitForInventory(sc, "exactly the objects of 2 nodes")
	svcs, err := e.memberServices(t.Context(), sc.Name)
	if err != nil {
		t.Fatal(err)
	}
	for name, svc := range svcs {
		if v, ok := svc.Labels[naming.DecommissionedLabel]; ok {
			t.Errorf("member Service %s of a node that stays carries %s=%q", name, naming.DecommissionedLabel, v)
		}
	}
	e.expectNoWrites(op, sc, 1)
}

func testRackRemovedAfterScalingToZero(t *testing.T, op *operatorProcess) {
	e := newTestEnv(t)
	ctx := t.Context()
	sc := e.createScyllaCluster(e.newScyllaCluster(3, 1))
	sc = e.waitForRollout(sc.Name, "the 3-rack ScyllaCluster to roll out")
	removed := sc.Spec.Datacenter.Racks[2].Name
	removedSts := statefulSetName(sc, removed)

	sc = e.scaleRackDown(sc.Name, removed, 0)
	sc = e.waitForRollout(sc.Name, fmt.Sprintf("rack %s to run no node", removed))

	sc = e.updateScyllaCluster(sc.Name, func(sc *scyllav1.ScyllaCluster) {
		sc.Spec.Datacenter.Racks = slices.DeleteFunc(sc.Spec.Datacenter.Racks, func(r scyllav1.RackSpec) bool { return r.Name == removed })
	})
	sc = e.waitForRollout(sc.Name, fmt.Sprintf("the ScyllaCluster without rack %s to settle", removed))
	e.waitForInventory(sc, fmt.Sprintf("StatefulSet %s and the Services of rack %s to be gone", removedSts, removed))

	if _, ok := sc.Status.Racks[removed]; ok {
		t.Errorf("status still reports removed rack %s: %v", removed, sc.Status.Racks)
	}
	cm, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(ctx, naming.ManagedConfigName(sc.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.Data[naming.ScyllaDBManagedConfigKey(removed)]; ok {
		t.Errorf("managed config %s still has the config of removed rack %s", cm.Name, removed)
	}
	e.expectNoWrites(op, sc, 1)
}

func testVersionChangeReplacesEveryPod(t *testing.T, op *operatorProcess) {
	e := newTestEnv(t)
	ctx := t.Context()
	const newVersion = "2025.1.3"
	sc := e.createScyllaCluster(e.newScyllaCluster(3, 1))
	sc = e.waitForRollout(sc.Name, "the 3-rack ScyllaCluster to roll out")
	before := e.podUIDs(ctx, sc.Name)

	sc = e.updateScyllaCluster(sc.Name, func(sc *scyllav1.ScyllaCluster) { sc.Spec.Version = newVersion })
	// Rolled out means every StatefulSet template and every pod runs the new image, and the ScyllaCluster's and
	// ScyllaDBDatacenter's version fields say the new version.
	sc = e.waitForRollout(sc.Name, "every node to run "+newVersion)

	after := e.podUIDs(ctx, sc.Name)
	if diff := cmp.Diff(sortedKeys(before), sortedKeys(after)); diff != "" {
		t.Fatalf("pod names differ after the rollout (-before +after):\n%s", diff)
	}
	for name, uid := range before {
		if after[name] == uid {
			t.Errorf("pod %s (UID %s) was not replaced", name, uid)
		}
	}
	pods, err := e.kube.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: naming.ClusterSelector(sc.Name).String()})
	if err != nil {
		t.Fatal(err)
	}
	for _, pod := range pods.Items {
		if got := pod.Labels[naming.ScyllaVersionLabel]; got != newVersion {
			t.Errorf("pod %s has label %s=%q, want %q", pod.Name, naming.ScyllaVersionLabel, got, newVersion)
		}
	}
	if err := e.checkInventory(ctx, sc); err != nil {
		t.Fatal(err)
	}
	e.expectNoWrites(op, sc, 1)
}

func testDeletingTheScyllaClusterCollectsEverything(t *testing.T, _ *operatorProcess) {
	e := newTestEnv(t)
	ctx := t.Context()
	sc := e.createScyllaCluster(e.newScyllaCluster(3, 1))
	sc = e.waitForRollout(sc.Name, "the 3-rack ScyllaCluster to roll out")
	claims := expectedInventory(sc)[kindPersistentVolumeClaim]

	if err := e.scylla.ScyllaV1().ScyllaClusters(e.ns).Delete(ctx, sc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Data claims belong to no object (the StatefulSets keep them when deleted, as Kubernetes does by default),
	// so they stay with the data; everything else goes through kube-controller-manager's garbage collector.
	e.f.WaitFor(rolloutTimeout, "the garbage collector to delete every object of the ScyllaCluster", func(ctx context.Context) (bool, error) {
		if _, err := e.scylla.ScyllaV1().ScyllaClusters(e.ns).Get(ctx, sc.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("ScyllaCluster still there (%v)", err)
		}
		objs, err := e.listNamespace(ctx)
		if err != nil {
			return false, err
		}
		var left, gotClaims []string
		for _, o := range objs {
			if o.kind == kindPersistentVolumeClaim {
				gotClaims = append(gotClaims, o.name)
				continue
			}
			left = append(left, o.kind+" "+o.name)
		}
		if len(left) != 0 {
			return false, fmt.Errorf("still there: %s", strings.Join(left, ", "))
		}
		slices.Sort(gotClaims)
		if diff := cmp.Diff(claims, gotClaims); diff != "" {
			return false, framework.StopPolling(fmt.Errorf("data claims differ (-want +got):\n%s", diff))
		}
		return true, nil
	})
}

func testNoWritesAfterConvergence(t *testing.T, op *operatorProcess) {
	e := newTestEnv(t)
	start, err := e.c.ControlPlane.Audit.Mark()
	if err != nil {
		t.Fatal(err)
	}
	sc := e.createScyllaCluster(e.newScyllaCluster(3, 1))
	sc = e.waitForRollout(sc.Name, "the 3-rack ScyllaCluster to roll out")
	e.expectNoWrites(op, sc, 2)

	// The window is only meaningful if the filter sees the operator's writes at all: it made plenty before.
	before, err := e.c.ControlPlane.Audit.EventsSince(start)
	if err != nil {
		t.Fatal(err)
	}
	if n := framework.CountRequests(before, operatorWrites(e.ns)...).Total(); n == 0 {
		t.Errorf("the audit log shows no write of the operator in namespace %s at all; the filter is wrong", e.ns)
	}
}

// expectNoWrites watches the converged ScyllaCluster sc for resyncs full resync periods of the shared replica op
// (and a margin), and checks that op synced it at least once per period and wrote nothing in the namespace, lease
// renewals aside. Scenarios call it on their final state; the scenario that does nothing else watches two periods.
func (e *testEnv) expectNoWrites(op *operatorProcess, sc *scyllav1.ScyllaCluster, resyncs int) {
	e.t.Helper()
	audit := e.c.ControlPlane.Audit
	mark, err := audit.Mark()
	if err != nil {
		e.t.Fatal(err)
	}
	logOffset := op.logOffset()
	window := time.Duration(resyncs)*sharedResyncPeriod + 10*time.Second
	e.t.Logf("converged; watching the operator's writes in namespace %s for %v", e.ns, window)
	select {
	case <-e.t.Context().Done():
		e.t.Fatal(e.t.Context().Err())
	case <-time.After(window):
	}
	if err := e.c.ControlPlane.CheckProcesses(); err != nil {
		e.t.Fatal(err)
	}

	// Without resyncs in the window, no writes would prove nothing.
	scSyncs := op.countLogLines(logOffset, `"Finished syncing"`, fmt.Sprintf(`key="%s/%s"`, e.ns, sc.Name))
	sdcSyncs := op.countLogLines(logOffset, `"Finished syncing"`, fmt.Sprintf(`scyllaDBDatacenter="%s/%s"`, e.ns, sc.Name))
	if scSyncs < resyncs || sdcSyncs < resyncs {
		e.t.Errorf("the operator synced the ScyllaCluster %d times and its ScyllaDBDatacenter %d times in %v, want at least %d each (one per resync period)",
			scSyncs, sdcSyncs, window, resyncs)
	}
	events, err := audit.EventsSince(mark)
	if err != nil {
		e.t.Fatal(err)
	}
	if writes := framework.CountRequests(events, operatorWrites(e.ns)...); writes.Total() != 0 {
		e.t.Errorf("the operator made %d writes in namespace %s over %v after convergence, want none:\n%s", writes.Total(), e.ns, window,
			describeRequests(events, operatorWrites(e.ns)...))
	}
}

func testLabelsOfAnotherActorSurvive(t *testing.T, op *operatorProcess) {
	e := newTestEnv(t)
	ctx := t.Context()
	const (
		userLabel      = "e2e.scylla-operator.scylladb.com/added-by"
		userAnnotation = "e2e.scylla-operator.scylladb.com/note"
		reason         = "e2e-restart"
	)
	sc := e.createScyllaCluster(e.newScyllaCluster(3, 1))
	sc = e.waitForRollout(sc.Name, "the 3-rack ScyllaCluster to roll out")
	stsName := statefulSetName(sc, sc.Spec.Datacenter.Racks[0].Name)
	svcName := memberName(sc, sc.Spec.Datacenter.Racks[0].Name, 0)

	patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:"another-actor"},"annotations":{%q:"kept"}}}`, userLabel, userAnnotation))
	if _, err := e.kube.AppsV1().StatefulSets(e.ns).Patch(ctx, stsName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.kube.CoreV1().Services(e.ns).Patch(ctx, svcName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	mark, err := e.c.ControlPlane.Audit.Mark()
	if err != nil {
		t.Fatal(err)
	}

	// A new forceRedeploymentReason changes every StatefulSet's pod template: the operator must update the
	// StatefulSet, and keep what others added.
	sc = e.updateScyllaCluster(sc.Name, func(sc *scyllav1.ScyllaCluster) { sc.Spec.ForceRedeploymentReason = reason })
	sc = e.waitForRollout(sc.Name, "the restart to roll out")

	sts, err := e.kube.AppsV1().StatefulSets(e.ns).Get(ctx, stsName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := sts.Spec.Template.Annotations[naming.ForceRedeploymentReasonAnnotation]; got != reason {
		t.Fatalf("StatefulSet %s pod template has %s=%q, want %q", stsName, naming.ForceRedeploymentReasonAnnotation, got, reason)
	}
	events, err := e.c.ControlPlane.Audit.EventsSince(mark)
	if err != nil {
		t.Fatal(err)
	}
	stsWrites := framework.CountRequests(events, append(operatorWrites(e.ns), framework.OnResource("statefulsets", ""), framework.Succeeded(), onObject(stsName))...)
	if stsWrites.Total() == 0 {
		t.Fatalf("the operator did not write StatefulSet %s after the spec changed; the test proves nothing", stsName)
	}
	svc, err := e.kube.CoreV1().Services(e.ns).Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []metav1.Object{sts, svc} {
		if obj.GetLabels()[userLabel] != "another-actor" || obj.GetAnnotations()[userAnnotation] != "kept" {
			t.Errorf("%s lost what another actor added: labels %v, annotations %v", obj.GetName(), obj.GetLabels(), obj.GetAnnotations())
		}
	}
	e.expectNoWrites(op, sc, 1)
}
