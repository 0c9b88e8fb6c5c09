//go:build e2e

package operator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

const (
	// rolloutTimeout bounds a wait for the operator to bring a cluster to its spec. kwok makes pods Ready at
	// once; a rack's pods start one after another, each after minReadySeconds (5 s by default).
	rolloutTimeout = 3 * time.Minute
	// stepTimeout bounds a wait for one reaction of the operator or of Kubernetes.
	stepTimeout = time.Minute

	// exampleVersion is the ScyllaDB version of deploy/examples/scyllacluster-basic.yaml.
	exampleVersion = "2025.1.2"
)

// testEnv is a test's view of its namespace: the framework's, plus a typed scylla.scylladb.com client.
type testEnv struct {
	t      *testing.T
	f      *framework.Framework
	c      *framework.Cluster
	ns     string
	kube   kubernetes.Interface
	scylla scyllaclientset.Interface
}

// newTestEnv creates the test's namespace and starts the node simulator for it.
func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	e, _ := newTestEnvWithSimulator(t)
	return e
}

// newScyllaCluster returns deploy/examples/scyllacluster-basic.yaml in the test's namespace, made small: its first
// racks racks (one per zone, placed by the example's node affinity on the simulated nodes of that zone), with
// members nodes each, small resources and storage.
func (e *testEnv) newScyllaCluster(racks int, members int32) *scyllav1.ScyllaCluster {
	e.t.Helper()
	path := filepath.Join(e.f.Suite().RepoRoot, "deploy", "examples", "scyllacluster-basic.yaml")
	objs, err := framework.DecodeManifestFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(objs) != 1 {
		e.t.Fatalf("%s holds %d objects, expected one ScyllaCluster", path, len(objs))
	}
	sc := &scyllav1.ScyllaCluster{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(objs[0].Object, sc, true); err != nil {
		e.t.Fatalf("can't decode %s as a ScyllaCluster: %v", path, err)
	}
	if len(sc.Spec.Datacenter.Racks) < racks {
		e.t.Fatalf("%s has %d racks, the test needs %d", path, len(sc.Spec.Datacenter.Racks), racks)
	}
	if sc.Spec.Version != exampleVersion {
		e.t.Fatalf("%s runs ScyllaDB %q; update exampleVersion (%q)", path, sc.Spec.Version, exampleVersion)
	}
	sc.Namespace = e.ns
	sc.Spec.Datacenter.Racks = sc.Spec.Datacenter.Racks[:racks]
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	for i := range sc.Spec.Datacenter.Racks {
		rack := &sc.Spec.Datacenter.Racks[i]
		rack.Members = members
		rack.Storage.Capacity = "1Gi"
		rack.Resources = corev1.ResourceRequirements{Requests: small.DeepCopy(), Limits: small.DeepCopy()}
	}
	return sc
}

func (e *testEnv) createScyllaCluster(sc *scyllav1.ScyllaCluster) *scyllav1.ScyllaCluster {
	e.t.Helper()
	created, err := e.scylla.ScyllaV1().ScyllaClusters(e.ns).Create(e.t.Context(), sc, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("can't create ScyllaCluster %q: %v", sc.Name, err)
	}
	return created
}

func (e *testEnv) getScyllaCluster(name string) *scyllav1.ScyllaCluster {
	e.t.Helper()
	sc, err := e.scylla.ScyllaV1().ScyllaClusters(e.ns).Get(e.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("can't get ScyllaCluster %q: %v", name, err)
	}
	return sc
}

// updateScyllaCluster changes the ScyllaCluster's spec with mutate, retrying on conflicts with the operator's
// status writes.
func (e *testEnv) updateScyllaCluster(name string, mutate func(*scyllav1.ScyllaCluster)) *scyllav1.ScyllaCluster {
	e.t.Helper()
	var updated *scyllav1.ScyllaCluster
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sc, err := e.scylla.ScyllaV1().ScyllaClusters(e.ns).Get(e.t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(sc)
		updated, err = e.scylla.ScyllaV1().ScyllaClusters(e.ns).Update(e.t.Context(), sc, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("can't update ScyllaCluster %q: %v", name, err)
	}
	return updated
}

// rackByName returns the ScyllaCluster's rack called name.
func rackByName(t testing.TB, sc *scyllav1.ScyllaCluster, name string) *scyllav1.RackSpec {
	t.Helper()
	for i := range sc.Spec.Datacenter.Racks {
		if sc.Spec.Datacenter.Racks[i].Name == name {
			return &sc.Spec.Datacenter.Racks[i]
		}
	}
	t.Fatalf("ScyllaCluster %q has no rack %q", sc.Name, name)
	return nil
}

// scyllaImage is the ScyllaDB image a ScyllaCluster's pods run.
func scyllaImage(version string) string {
	return "docker.io/scylladb/scylla:" + version
}

// waitForRollout waits until the ScyllaCluster named name is rolled out at its current spec and returns it.
func (e *testEnv) waitForRollout(name, what string) *scyllav1.ScyllaCluster {
	e.t.Helper()
	var sc *scyllav1.ScyllaCluster
	e.f.WaitFor(rolloutTimeout, what, func(ctx context.Context) (bool, error) {
		var err error
		sc, err = e.rolledOut(ctx, name)
		return err == nil, err
	})
	return sc
}

// rolledOut returns the ScyllaCluster named name if it, its ScyllaDBDatacenter, StatefulSets and pods all say that
// its current spec is rolled out: status of the current generation, Available=True, Progressing=False,
// Degraded=False, every node ready and available at the spec's version. Otherwise it says what is missing.
func (e *testEnv) rolledOut(ctx context.Context, name string) (*scyllav1.ScyllaCluster, error) {
	sc, err := e.scylla.ScyllaV1().ScyllaClusters(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var members int32
	for _, rack := range sc.Spec.Datacenter.Racks {
		members += rack.Members
	}
	s := sc.Status
	if s.ObservedGeneration == nil || *s.ObservedGeneration != sc.Generation {
		return nil, fmt.Errorf("ScyllaCluster %q: observedGeneration %v, generation %d", name, deref(s.ObservedGeneration), sc.Generation)
	}
	if err := conditionsSettled(s.Conditions, sc.Generation); err != nil {
		return nil, fmt.Errorf("ScyllaCluster %q: %w", name, err)
	}
	if deref(s.Members) != members || deref(s.ReadyMembers) != members || deref(s.AvailableMembers) != members || deref(s.RackCount) != int32(len(sc.Spec.Datacenter.Racks)) {
		return nil, fmt.Errorf("ScyllaCluster %q: members %d, readyMembers %d, availableMembers %d, rackCount %d; want %d members in %d racks",
			name, deref(s.Members), deref(s.ReadyMembers), deref(s.AvailableMembers), deref(s.RackCount), members, len(sc.Spec.Datacenter.Racks))
	}
	for _, rack := range sc.Spec.Datacenter.Racks {
		rs, ok := s.Racks[rack.Name]
		if !ok {
			return nil, fmt.Errorf("ScyllaCluster %q: no status of rack %q", name, rack.Name)
		}
		if rs.Members != rack.Members || rs.ReadyMembers != rack.Members || deref(rs.AvailableMembers) != rack.Members ||
			deref(rs.UpdatedMembers) != rack.Members || rs.Version != sc.Spec.Version || deref(rs.Stale) {
			return nil, fmt.Errorf("ScyllaCluster %q: rack %q status is %+v (available %d, updated %d, stale %v); want %d members at version %s",
				name, rack.Name, rs, deref(rs.AvailableMembers), deref(rs.UpdatedMembers), deref(rs.Stale), rack.Members, sc.Spec.Version)
		}
	}

	sdc, err := e.scylla.ScyllaV1alpha1().ScyllaDBDatacenters(e.ns).Get(ctx, naming.ScyllaDBDatacenterNameForScyllaCluster(name), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if sdc.Status.ObservedGeneration == nil || *sdc.Status.ObservedGeneration != sdc.Generation {
		return nil, fmt.Errorf("ScyllaDBDatacenter %q: observedGeneration %v, generation %d", sdc.Name, deref(sdc.Status.ObservedGeneration), sdc.Generation)
	}
	if err := conditionsSettled(sdc.Status.Conditions, sdc.Generation); err != nil {
		return nil, fmt.Errorf("ScyllaDBDatacenter %q: %w", sdc.Name, err)
	}
	if sdc.Status.UpdatedVersion != sc.Spec.Version || sdc.Status.CurrentVersion != sc.Spec.Version {
		return nil, fmt.Errorf("ScyllaDBDatacenter %q: currentVersion %q, updatedVersion %q; want %q", sdc.Name, sdc.Status.CurrentVersion, sdc.Status.UpdatedVersion, sc.Spec.Version)
	}

	for _, rack := range sc.Spec.Datacenter.Racks {
		stsName := statefulSetName(sc, rack.Name)
		sts, err := e.kube.AppsV1().StatefulSets(e.ns).Get(ctx, stsName, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if err := statefulSetSettled(sts, rack.Members); err != nil {
			return nil, err
		}
		if image := containerImage(&sts.Spec.Template.Spec, naming.ScyllaDBContainerName); image != scyllaImage(sc.Spec.Version) {
			return nil, fmt.Errorf("StatefulSet %q runs image %q, want %q", stsName, image, scyllaImage(sc.Spec.Version))
		}
	}
	pods, err := e.kube.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: naming.ClusterSelector(naming.ScyllaDBDatacenterNameForScyllaCluster(name)).String()})
	if err != nil {
		return nil, err
	}
	if int32(len(pods.Items)) != members {
		return nil, fmt.Errorf("%d pods exist, want %d", len(pods.Items), members)
	}
	for _, pod := range pods.Items {
		if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning || !podReady(&pod) {
			return nil, fmt.Errorf("pod %s: phase %s, ready %v, deleting %v", pod.Name, pod.Status.Phase, podReady(&pod), pod.DeletionTimestamp != nil)
		}
		if image := containerImage(&pod.Spec, naming.ScyllaDBContainerName); image != scyllaImage(sc.Spec.Version) {
			return nil, fmt.Errorf("pod %s runs image %q, want %q", pod.Name, image, scyllaImage(sc.Spec.Version))
		}
	}
	return sc, nil
}

// conditionsSettled says why conditions do not read Available=True, Progressing=False, Degraded=False for
// generation, or returns nil.
func conditionsSettled(conditions []metav1.Condition, generation int64) error {
	for condType, want := range map[string]metav1.ConditionStatus{
		"Available":   metav1.ConditionTrue,
		"Progressing": metav1.ConditionFalse,
		"Degraded":    metav1.ConditionFalse,
	} {
		c := meta.FindStatusCondition(conditions, condType)
		switch {
		case c == nil:
			return fmt.Errorf("no %s condition", condType)
		case c.Status != want || c.ObservedGeneration != generation:
			return fmt.Errorf("%s is %s for generation %d (%s: %s), want %s for generation %d", condType, c.Status, c.ObservedGeneration, c.Reason, c.Message, want, generation)
		}
	}
	return nil
}

// statefulSetSettled says why sts does not run replicas nodes, all ready, available and updated, or returns nil.
func statefulSetSettled(sts *appsv1.StatefulSet, replicas int32) error {
	s := sts.Status
	if deref(sts.Spec.Replicas) != replicas || s.ObservedGeneration != sts.Generation || s.Replicas != replicas || s.ReadyReplicas != replicas ||
		s.AvailableReplicas != replicas || s.UpdatedReplicas != replicas || s.CurrentRevision != s.UpdateRevision {
		return fmt.Errorf("StatefulSet %q: spec.replicas %d, generation %d, status %+v; want %d replicas settled", sts.Name, deref(sts.Spec.Replicas), sts.Generation, s, replicas)
	}
	return nil
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func containerImage(spec *corev1.PodSpec, name string) string {
	for _, c := range spec.Containers {
		if c.Name == name {
			return c.Image
		}
	}
	return ""
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// inventoryResources are the resources of the inventory's kinds.
var inventoryResources = map[string]schema.GroupVersionResource{
	kindScyllaDBDatacenter:    scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"),
	kindStatefulSet:           appsv1.SchemeGroupVersion.WithResource("statefulsets"),
	kindService:               corev1.SchemeGroupVersion.WithResource("services"),
	kindPodDisruptionBudget:   policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"),
	kindServiceAccount:        corev1.SchemeGroupVersion.WithResource("serviceaccounts"),
	kindRoleBinding:           rbacv1.SchemeGroupVersion.WithResource("rolebindings"),
	kindConfigMap:             corev1.SchemeGroupVersion.WithResource("configmaps"),
	kindSecret:                corev1.SchemeGroupVersion.WithResource("secrets"),
	kindPod:                   corev1.SchemeGroupVersion.WithResource("pods"),
	kindPersistentVolumeClaim: corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"),
}

// listNamespace lists every object of the inventory's kinds in the test's namespace, leaving out the ones
// Kubernetes puts into every namespace (the default ServiceAccount and the kube-root-ca.crt ConfigMap).
func (e *testEnv) listNamespace(ctx context.Context) ([]ownedObject, error) {
	var objs []ownedObject
	var errs []error
	for _, kind := range sortedKeys(inventoryResources) {
		list, err := e.c.Clients.Dynamic.Resource(inventoryResources[kind]).Namespace(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("can't list %s: %w", kind, err))
			continue
		}
		for _, o := range list.Items {
			if (kind == kindServiceAccount && o.GetName() == "default") || (kind == kindConfigMap && o.GetName() == "kube-root-ca.crt") {
				continue
			}
			objs = append(objs, ownedObject{kind: kind, name: o.GetName(), uid: o.GetUID(), owners: o.GetOwnerReferences()})
		}
	}
	return objs, errors.Join(errs...)
}

// checkInventory lists the namespace and compares it with what sc should have there (see inventoryProblems).
func (e *testEnv) checkInventory(ctx context.Context, sc *scyllav1.ScyllaCluster) error {
	objs, err := e.listNamespace(ctx)
	if err != nil {
		return err
	}
	if problems := inventoryProblems(sc, objs); len(problems) != 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// waitForInventory waits until the namespace holds exactly what sc should have there (see checkInventory).
func (e *testEnv) waitForInventory(sc *scyllav1.ScyllaCluster, what string) {
	e.t.Helper()
	e.f.WaitFor(stepTimeout, what, func(ctx context.Context) (bool, error) {
		err := e.checkInventory(ctx, sc)
		return err == nil, err
	})
}

// podUIDs returns the UIDs of the cluster's pods by name.
func (e *testEnv) podUIDs(ctx context.Context, name string) map[string]types.UID {
	e.t.Helper()
	pods, err := e.kube.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: naming.ClusterSelector(naming.ScyllaDBDatacenterNameForScyllaCluster(name)).String()})
	if err != nil {
		e.t.Fatal(err)
	}
	uids := map[string]types.UID{}
	for _, pod := range pods.Items {
		uids[pod.Name] = pod.UID
	}
	return uids
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// memberServices returns the cluster's member Services by name.
func (e *testEnv) memberServices(ctx context.Context, name string) (map[string]*corev1.Service, error) {
	selector := naming.ClusterSelector(naming.ScyllaDBDatacenterNameForScyllaCluster(name)).String() + "," + naming.ScyllaServiceTypeLabel + "=" + naming.ScyllaServiceTypeMember
	list, err := e.kube.CoreV1().Services(e.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	svcs := map[string]*corev1.Service{}
	for i := range list.Items {
		svcs[list.Items[i].Name] = &list.Items[i]
	}
	return svcs, nil
}

// scyllaDBDatacenter returns the ScyllaCluster's ScyllaDBDatacenter.
func (e *testEnv) scyllaDBDatacenter(ctx context.Context, sc *scyllav1.ScyllaCluster) *scyllav1alpha1.ScyllaDBDatacenter {
	e.t.Helper()
	sdc, err := e.scylla.ScyllaV1alpha1().ScyllaDBDatacenters(e.ns).Get(ctx, naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name), metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return sdc
}
