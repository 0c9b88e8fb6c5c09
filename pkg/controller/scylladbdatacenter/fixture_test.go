package scylladbdatacenter

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"
	scyllascheme "github.com/scyllakube/client/scylla/clientset/versioned/scheme"
	scyllainformers "github.com/scyllakube/client/scylla/informers/externalversions"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/test/apiserverfields"
	"github.com/scyllakube/scylla-operator/pkg/test/fakeclient"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// testNow is the clock of condition transitions in the sync tests.
var testNow = metav1.Date(2026, 1, 2, 3, 4, 5, 0, metav1.Now().Location())

// world is what the API server holds: the datacenter and the Kubernetes objects around it.
type world struct {
	sdc     *scyllav1alpha1.ScyllaDBDatacenter
	objects []runtime.Object
}

// fixture is a controller over fake clientsets whose informer caches hold a world, as sample-controller's tests
// build it: the objects are put straight into the indexers and the informers are never started.
type fixture struct {
	t            testing.TB
	kubeClient   *kubefake.Clientset
	scyllaClient *scyllafake.Clientset
	// scyllaTracker is what scyllaClient holds.
	scyllaTracker   clienttesting.ObjectTracker
	kubeInformers   kubeinformers.SharedInformerFactory
	scyllaInformers scyllainformers.SharedInformerFactory
	controller      *Controller
	recorder        *record.FakeRecorder
}

func newFixture(t testing.TB, w world) *fixture {
	t.Helper()
	kubeClient := kubefake.NewClientset(w.objects...)
	kubeClient.PrependReactor("create", "statefulsets", countGenerations(kubeClient))
	kubeClient.PrependReactor("update", "statefulsets", countGenerations(kubeClient))
	kubeClient.PrependReactor("patch", "services", patchMetadata(kubeClient))
	scyllaClient, scyllaTracker, err := apiserverfields.NewScyllaClientset(w.sdc)
	if err != nil {
		t.Fatal(err)
	}
	kubeInformers := kubeinformers.NewSharedInformerFactory(kubeClient, 0)
	scyllaInformers := scyllainformers.NewSharedInformerFactory(scyllaClient, 0)

	c, err := NewController(
		kubeClient,
		scyllaClient,
		scyllaInformers.Scylla().V1alpha1().ScyllaDBDatacenters(),
		kubeInformers.Apps().V1().StatefulSets(),
		kubeInformers.Core().V1().Services(),
		kubeInformers.Core().V1().Secrets(),
		kubeInformers.Core().V1().ConfigMaps(),
		kubeInformers.Core().V1().ServiceAccounts(),
		kubeInformers.Rbac().V1().RoleBindings(),
		kubeInformers.Policy().V1().PodDisruptionBudgets(),
		kubeInformers.Networking().V1().Ingresses(),
		kubeInformers.Core().V1().Pods(),
		kubeInformers.Core().V1().PersistentVolumeClaims(),
		kubeInformers.Core().V1().Nodes(),
		kubeInformers.Core().V1().PersistentVolumes(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBManagerTasks(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBBackupBuckets(),
		testOperatorImage,
	)
	if err != nil {
		t.Fatal(err)
	}
	recorder := record.NewFakeRecorder(1000)
	c.eventRecorder = recorder
	c.generateAuthToken = func() (string, error) { return testToken, nil }
	c.generateAuthTokenHMACKey = func() ([]byte, error) { return []byte("test-hmac-key"), nil }
	c.now = func() metav1.Time { return testNow }
	// Every status is written at once unless a test batches them.
	c.statusBatcher = controllerhelpers.NewStatusBatcher(0)

	f := &fixture{t: t, kubeClient: kubeClient, scyllaClient: scyllaClient, scyllaTracker: scyllaTracker, kubeInformers: kubeInformers, scyllaInformers: scyllaInformers, controller: c, recorder: recorder}
	f.cache(w.sdc)
	f.cache(w.objects...)
	return f
}

// countGenerations returns a reactor that sets the generation of StatefulSets as the API server does: 1 when created,
// one more at every update that changes the spec. It lets the default reactors store the object.
func countGenerations(client *kubefake.Clientset) clienttesting.ReactionFunc {
	return func(action clienttesting.Action) (bool, runtime.Object, error) {
		sts, ok := action.(clienttesting.CreateAction).GetObject().(*appsv1.StatefulSet)
		if !ok {
			return false, nil, nil
		}
		sts.Generation = 1
		if action.GetVerb() != "update" {
			return false, nil, nil
		}
		old, err := client.Tracker().Get(action.GetResource(), sts.Namespace, sts.Name)
		if err != nil {
			return false, nil, nil
		}
		oldSTS := old.(*appsv1.StatefulSet)
		sts.Generation = oldSTS.Generation
		if !apiequality.Semantic.DeepEqual(oldSTS.Spec, sts.Spec) {
			sts.Generation++
		}
		return false, nil, nil
	}
}

// patchMetadata returns a reactor that applies the JSON merge patches of Service labels and annotations node
// replacement sends as the API server does (other patches go to the default reactor): a uid or resourceVersion in the patch is a precondition (Conflict when it does not hold), a
// null value removes a label or annotation, and the resourceVersion goes up by one (from 0 when unset).
func patchMetadata(client *kubefake.Clientset) clienttesting.ReactionFunc {
	return func(action clienttesting.Action) (bool, runtime.Object, error) {
		patch := action.(clienttesting.PatchAction)
		if patch.GetPatchType() != types.MergePatchType {
			return false, nil, nil
		}
		var p struct {
			Metadata map[string]json.RawMessage `json:"metadata"`
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(patch.GetPatch(), &top); err != nil || len(top) != 1 || json.Unmarshal(patch.GetPatch(), &p) != nil {
			// Not a patch of metadata alone: the default reactor applies it.
			return false, nil, nil
		}
		for key := range p.Metadata {
			if !slices.Contains([]string{"uid", "resourceVersion", "labels", "annotations"}, key) {
				return false, nil, nil
			}
		}
		obj, err := client.Tracker().Get(action.GetResource(), action.GetNamespace(), patch.GetName())
		if err != nil {
			return true, nil, err
		}
		svc := obj.(*corev1.Service).DeepCopy()
		for key, raw := range p.Metadata {
			switch key {
			case "uid", "resourceVersion":
				var want string
				if err := json.Unmarshal(raw, &want); err != nil {
					return true, nil, apierrors.NewBadRequest(err.Error())
				}
				if got := map[string]string{"uid": string(svc.UID), "resourceVersion": svc.ResourceVersion}[key]; got != want {
					return true, nil, apierrors.NewConflict(corev1.Resource("services"), svc.Name, fmt.Errorf("%s is %q, not %q", key, got, want))
				}
			case "labels", "annotations":
				var changes map[string]*string
				if err := json.Unmarshal(raw, &changes); err != nil {
					return true, nil, apierrors.NewBadRequest(err.Error())
				}
				m := &svc.Labels
				if key == "annotations" {
					m = &svc.Annotations
				}
				for k, v := range changes {
					if v == nil {
						delete(*m, k)
						continue
					}
					if *m == nil {
						*m = map[string]string{}
					}
					(*m)[k] = *v
				}
			}
		}
		version, _ := strconv.Atoi(svc.ResourceVersion)
		svc.ResourceVersion = strconv.Itoa(version + 1)
		if err := client.Tracker().Update(action.GetResource(), svc, svc.Namespace); err != nil {
			return true, nil, err
		}
		return true, svc, nil
	}
}

// cache puts objects into the informer caches, replacing the objects of the same name: what the controller sees of
// the API server on its next sync.
func (f *fixture) cache(objects ...runtime.Object) {
	f.t.Helper()
	for _, obj := range objects {
		var informer cache.SharedIndexInformer
		switch obj.(type) {
		case *scyllav1alpha1.ScyllaDBDatacenter:
			informer = f.scyllaInformers.Scylla().V1alpha1().ScyllaDBDatacenters().Informer()
		case *scyllav1alpha1.ScyllaDBManagerTask:
			informer = f.scyllaInformers.Scylla().V1alpha1().ScyllaDBManagerTasks().Informer()
		case *scyllav1alpha1.ScyllaDBBackupBucket:
			informer = f.scyllaInformers.Scylla().V1alpha1().ScyllaDBBackupBuckets().Informer()
		case *appsv1.StatefulSet:
			informer = f.kubeInformers.Apps().V1().StatefulSets().Informer()
		case *corev1.Service:
			informer = f.kubeInformers.Core().V1().Services().Informer()
		case *corev1.Secret:
			informer = f.kubeInformers.Core().V1().Secrets().Informer()
		case *corev1.ConfigMap:
			informer = f.kubeInformers.Core().V1().ConfigMaps().Informer()
		case *corev1.ServiceAccount:
			informer = f.kubeInformers.Core().V1().ServiceAccounts().Informer()
		case *rbacv1.RoleBinding:
			informer = f.kubeInformers.Rbac().V1().RoleBindings().Informer()
		case *policyv1.PodDisruptionBudget:
			informer = f.kubeInformers.Policy().V1().PodDisruptionBudgets().Informer()
		case *networkingv1.Ingress:
			informer = f.kubeInformers.Networking().V1().Ingresses().Informer()
		case *corev1.Pod:
			informer = f.kubeInformers.Core().V1().Pods().Informer()
		case *corev1.PersistentVolumeClaim:
			informer = f.kubeInformers.Core().V1().PersistentVolumeClaims().Informer()
		case *corev1.Node:
			informer = f.kubeInformers.Core().V1().Nodes().Informer()
		case *corev1.PersistentVolume:
			informer = f.kubeInformers.Core().V1().PersistentVolumes().Informer()
		default:
			f.t.Fatalf("the fixture can't hold a %T", obj)
		}
		if err := informer.GetIndexer().Update(obj); err != nil {
			f.t.Fatal(err)
		}
	}
}

// uncache removes an object from the informer caches.
func (f *fixture) uncache(obj runtime.Object) {
	f.t.Helper()
	// Only the kinds the tests need to see disappear.
	var informer cache.SharedIndexInformer
	switch obj.(type) {
	case *appsv1.StatefulSet:
		informer = f.kubeInformers.Apps().V1().StatefulSets().Informer()
	case *corev1.Service:
		informer = f.kubeInformers.Core().V1().Services().Informer()
	case *networkingv1.Ingress:
		informer = f.kubeInformers.Networking().V1().Ingresses().Informer()
	default:
		f.t.Fatalf("the fixture can't remove a %T", obj)
	}
	if err := informer.GetIndexer().Delete(obj); err != nil {
		f.t.Fatal(err)
	}
}

// sync runs one sync of the datacenter and returns its error.
func (f *fixture) sync() error {
	f.t.Helper()
	return f.controller.sync(f.t.Context(), testNamespace+"/"+f.sdcName())
}

func (f *fixture) sdcName() string {
	list, err := f.scyllaTracker.List(
		scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"),
		scyllav1alpha1.SchemeGroupVersion.WithKind("ScyllaDBDatacenter"), testNamespace)
	if err != nil {
		f.t.Fatal(err)
	}
	return list.(*scyllav1alpha1.ScyllaDBDatacenterList).Items[0].Name
}

// writes returns every action of both clients but reads, as "<verb> <resource>[/<subresource>] <name>".
func (f *fixture) writes() []string {
	var writes []string
	for _, action := range append(f.kubeClient.Actions(), f.scyllaClient.Actions()...) {
		switch action.GetVerb() {
		case "get", "list", "watch":
			continue
		}
		resource := action.GetResource().Resource
		if sub := action.GetSubresource(); len(sub) != 0 {
			resource += "/" + sub
		}
		var name string
		switch a := action.(type) {
		case clienttesting.CreateAction:
			name = objectName(a.GetObject())
		case clienttesting.UpdateAction:
			name = objectName(a.GetObject())
		case clienttesting.DeleteAction:
			name = a.GetName()
		case clienttesting.PatchAction:
			name = a.GetName()
		}
		verb := action.GetVerb()
		if patch, ok := action.(clienttesting.PatchAction); ok && patch.GetPatchType() == types.ApplyPatchType {
			verb = "apply"
		}
		writes = append(writes, fmt.Sprintf("%s %s %s", verb, resource, name))
	}
	return writes
}

func objectName(obj runtime.Object) string {
	accessor, ok := obj.(metav1.Object)
	if !ok {
		return fmt.Sprintf("<%T>", obj)
	}
	return accessor.GetName()
}

// written returns the object the last create, update or apply of resource name sent.
func (f *fixture) written(resource, name string) runtime.Object {
	f.t.Helper()
	actions := append(f.kubeClient.Actions(), f.scyllaClient.Actions()...)
	for i := len(actions) - 1; i >= 0; i-- {
		if actions[i].GetResource().Resource != resource {
			continue
		}
		var obj runtime.Object
		switch a := actions[i].(type) {
		case clienttesting.CreateAction:
			obj = a.GetObject()
		case clienttesting.UpdateAction:
			obj = a.GetObject()
		case clienttesting.PatchAction:
			if a.GetPatchType() != types.ApplyPatchType {
				continue
			}
			decoded, _, err := scyllascheme.Codecs.UniversalDeserializer().Decode(a.GetPatch(), nil, nil)
			if err != nil {
				f.t.Fatalf("can't decode the apply patch of %s %s: %v", resource, a.GetName(), err)
			}
			obj = decoded
		default:
			continue
		}
		if objectName(obj) == name {
			return obj
		}
	}
	f.t.Fatalf("nothing wrote %s %s", resource, name)
	return nil
}

// events returns the events recorded so far.
func (f *fixture) events() []string {
	return fakeclient.Events(f.recorder)
}

// kubeKinds are the kinds the fixture reads back from the fake API server, by resource.
var kubeKinds = map[string]schema.GroupVersionKind{
	"statefulsets":           appsv1.SchemeGroupVersion.WithKind("StatefulSet"),
	"services":               corev1.SchemeGroupVersion.WithKind("Service"),
	"secrets":                corev1.SchemeGroupVersion.WithKind("Secret"),
	"configmaps":             corev1.SchemeGroupVersion.WithKind("ConfigMap"),
	"serviceaccounts":        corev1.SchemeGroupVersion.WithKind("ServiceAccount"),
	"rolebindings":           rbacv1.SchemeGroupVersion.WithKind("RoleBinding"),
	"poddisruptionbudgets":   policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"),
	"ingresses":              networkingv1.SchemeGroupVersion.WithKind("Ingress"),
	"pods":                   corev1.SchemeGroupVersion.WithKind("Pod"),
	"persistentvolumeclaims": corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"),
	"nodes":                  corev1.SchemeGroupVersion.WithKind("Node"),
	"persistentvolumes":      corev1.SchemeGroupVersion.WithKind("PersistentVolume"),
}

// clusterScoped are the resources of kubeKinds that live in no namespace.
var clusterScoped = map[string]bool{"nodes": true, "persistentvolumes": true}

// world returns what the fake API server holds now, for the next sync's fixture.
func (f *fixture) world() world {
	f.t.Helper()
	var objects []runtime.Object
	for resource, gvk := range kubeKinds {
		namespace := testNamespace
		if clusterScoped[resource] {
			namespace = ""
		}
		list, err := f.kubeClient.Tracker().List(gvk.GroupVersion().WithResource(resource), gvk, namespace)
		if err != nil {
			f.t.Fatal(err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			f.t.Fatal(err)
		}
		objects = append(objects, items...)
	}
	sdc, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBDatacenters(testNamespace).Get(f.t.Context(), f.sdcName(), metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	slices.SortFunc(objects, func(a, b runtime.Object) int {
		return strings.Compare(fmt.Sprintf("%T/%s", a, objectName(a)), fmt.Sprintf("%T/%s", b, objectName(b)))
	})
	return world{sdc: sdc, objects: objects}
}

// object returns the object of w of type T named name.
func object[T runtime.Object](t *testing.T, w world, name string) T {
	t.Helper()
	for _, obj := range w.objects {
		if typed, ok := obj.(T); ok && objectName(obj) == name {
			return typed
		}
	}
	var zero T
	t.Fatalf("the world has no %T %s", zero, name)
	return zero
}

// without returns w without the object of type T named name.
func without[T runtime.Object](w world, name string) world {
	objects := slices.DeleteFunc(slices.Clone(w.objects), func(obj runtime.Object) bool {
		_, ok := obj.(T)
		return ok && objectName(obj) == name
	})
	return world{sdc: w.sdc, objects: objects}
}

// withNodes returns w with the pods and data claims of ordinals 0 to replicas-1 of every StatefulSet in w, pods at
// the StatefulSet's current revision running its ScyllaDB image, and with every StatefulSet settled at replicas: all
// ready and updated, as the StatefulSet controller would report them.
func withNodes(w world) world {
	out := world{sdc: w.sdc, objects: slices.Clone(w.objects)}
	for _, obj := range w.objects {
		sts, ok := obj.(*appsv1.StatefulSet)
		if !ok {
			continue
		}
		settle(sts)
		for ordinal := range *sts.Spec.Replicas {
			out.objects = append(out.objects, newPod(sts, ordinal), newDataClaim(sts, ordinal))
		}
	}
	return out
}

// withServerFields returns w with a UID and a resourceVersion on every object that has none, as the API server gives
// them (the fake clientsets' trackers do not).
func withServerFields(w world) world {
	out := world{sdc: w.sdc, objects: make([]runtime.Object, 0, len(w.objects))}
	for _, obj := range w.objects {
		obj = obj.DeepCopyObject()
		accessor, err := meta.Accessor(obj)
		if err == nil {
			if len(accessor.GetUID()) == 0 {
				accessor.SetUID(types.UID(fmt.Sprintf("%T-%s-uid", obj, accessor.GetName())))
			}
			if len(accessor.GetResourceVersion()) == 0 {
				accessor.SetResourceVersion("1")
			}
		}
		out.objects = append(out.objects, obj)
	}
	return out
}

// settle makes sts's status say that every replica runs ready at one revision.
func settle(sts *appsv1.StatefulSet) {
	replicas := *sts.Spec.Replicas
	sts.Status = appsv1.StatefulSetStatus{
		ObservedGeneration: sts.Generation,
		Replicas:           replicas,
		ReadyReplicas:      replicas,
		AvailableReplicas:  replicas,
		CurrentReplicas:    replicas,
		UpdatedReplicas:    replicas,
		CurrentRevision:    sts.Name + "-rev1",
		UpdateRevision:     sts.Name + "-rev1",
	}
}

// newPod returns the ordinal-th pod of sts at its current revision.
func newPod(sts *appsv1.StatefulSet, ordinal int32) *corev1.Pod {
	labels := map[string]string{
		appsv1.ControllerRevisionHashLabelKey: sts.Status.CurrentRevision,
		appsv1.StatefulSetPodNameLabel:        fmt.Sprintf("%s-%d", sts.Name, ordinal),
	}
	for k, v := range sts.Spec.Template.Labels {
		labels[k] = v
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: testNamespace,
			Name:      fmt.Sprintf("%s-%d", sts.Name, ordinal),
			Labels:    labels,
		},
		Spec: *sts.Spec.Template.Spec.DeepCopy(),
	}
}

// newDataClaim returns the data claim of the ordinal-th pod of sts, labelled as the StatefulSet controller does.
func newDataClaim(sts *appsv1.StatefulSet, ordinal int32) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: testNamespace,
			Name:      fmt.Sprintf("data-%s-%d", sts.Name, ordinal),
			UID:       types.UID(fmt.Sprintf("data-%s-%d-uid", sts.Name, ordinal)),
			Labels:    sts.Spec.Selector.MatchLabels,
		},
	}
}

// kubeWrites returns f's writes to Kubernetes objects, leaving out status applies of the datacenter.
func (f *fixture) kubeWrites() []string {
	return slices.DeleteFunc(f.writes(), func(w string) bool {
		return strings.HasPrefix(w, "apply scylladbdatacenters/status ")
	})
}

// checkDegraded fails the test unless the last status f wrote has Degraded True with message want, or Degraded False
// when want is empty.
func (f *fixture) checkDegraded(want string) {
	f.t.Helper()
	status := f.written("scylladbdatacenters", f.sdcName()).(*scyllav1alpha1.ScyllaDBDatacenter).Status
	c := meta.FindStatusCondition(status.Conditions, "Degraded")
	switch {
	case c == nil:
		f.t.Errorf("the status has no Degraded condition")
	case len(want) == 0 && c.Status != metav1.ConditionFalse:
		f.t.Errorf("expected Degraded False, got %+v", c)
	case len(want) != 0 && (c.Status != metav1.ConditionTrue || c.Message != want):
		f.t.Errorf("expected Degraded True with message %q, got %+v", want, c)
	}
}

// syncSpecError runs one sync over w, which the spec keeps from converging: the sync must not ask to be retried
// and must report wantMessage in Degraded.
func syncSpecError(t *testing.T, w world, wantMessage string) *fixture {
	t.Helper()
	f := newFixture(t, w)
	if err := f.sync(); err != nil {
		t.Fatalf("a spec error must not be retried, got %v", err)
	}
	f.checkDegraded(wantMessage)
	return f
}
