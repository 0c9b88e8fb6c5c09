package resourceapply

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	policyv1listers "k8s.io/client-go/listers/policy/v1"
	rbacv1listers "k8s.io/client-go/listers/rbac/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

const testNamespace = "scylla"

// testControllerRef is the controller of the objects the tests apply.
func testControllerRef() *metav1.OwnerReference {
	return &metav1.OwnerReference{
		APIVersion:         "scylla.scylladb.com/v1alpha1",
		Kind:               "ScyllaDBDatacenter",
		Name:               "basic",
		UID:                "owner-uid",
		Controller:         new(true),
		BlockOwnerDeletion: new(true),
	}
}

// testControllerEvent is how the fake recorder prints an event recorded on testControllerRef.
func testControllerEvent(eventType, reason, message string) string {
	return fmt.Sprintf("%s %s %s", eventType, reason, message)
}

// kindClient wires Apply to the fake clientset and to a lister for one kind.
type kindClient[T kubeinterfaces.ObjectInterface] struct {
	resource string
	client   func(cs *fake.Clientset, namespace string) kubeinterfaces.CreateUpdateDeleterInterface[T]
	lister   func(indexer cache.Indexer, namespace string) kubeinterfaces.GetterInterface[T]
}

var (
	serviceKind = kindClient[*corev1.Service]{
		resource: "services",
		client: func(cs *fake.Clientset, ns string) kubeinterfaces.CreateUpdateDeleterInterface[*corev1.Service] {
			return cs.CoreV1().Services(ns)
		},
		lister: func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*corev1.Service] {
			return corev1listers.NewServiceLister(indexer).Services(ns)
		},
	}
	statefulSetKind = kindClient[*appsv1.StatefulSet]{
		resource: "statefulsets",
		client: func(cs *fake.Clientset, ns string) kubeinterfaces.CreateUpdateDeleterInterface[*appsv1.StatefulSet] {
			return cs.AppsV1().StatefulSets(ns)
		},
		lister: func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*appsv1.StatefulSet] {
			return appsv1listers.NewStatefulSetLister(indexer).StatefulSets(ns)
		},
	}
	secretKind = kindClient[*corev1.Secret]{
		resource: "secrets",
		client: func(cs *fake.Clientset, ns string) kubeinterfaces.CreateUpdateDeleterInterface[*corev1.Secret] {
			return cs.CoreV1().Secrets(ns)
		},
		lister: func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*corev1.Secret] {
			return corev1listers.NewSecretLister(indexer).Secrets(ns)
		},
	}
	configMapKind = kindClient[*corev1.ConfigMap]{
		resource: "configmaps",
		client: func(cs *fake.Clientset, ns string) kubeinterfaces.CreateUpdateDeleterInterface[*corev1.ConfigMap] {
			return cs.CoreV1().ConfigMaps(ns)
		},
		lister: func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*corev1.ConfigMap] {
			return corev1listers.NewConfigMapLister(indexer).ConfigMaps(ns)
		},
	}
	serviceAccountKind = kindClient[*corev1.ServiceAccount]{
		resource: "serviceaccounts",
		client: func(cs *fake.Clientset, ns string) kubeinterfaces.CreateUpdateDeleterInterface[*corev1.ServiceAccount] {
			return cs.CoreV1().ServiceAccounts(ns)
		},
		lister: func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*corev1.ServiceAccount] {
			return corev1listers.NewServiceAccountLister(indexer).ServiceAccounts(ns)
		},
	}
	roleBindingKind = kindClient[*rbacv1.RoleBinding]{
		resource: "rolebindings",
		client: func(cs *fake.Clientset, ns string) kubeinterfaces.CreateUpdateDeleterInterface[*rbacv1.RoleBinding] {
			return cs.RbacV1().RoleBindings(ns)
		},
		lister: func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*rbacv1.RoleBinding] {
			return rbacv1listers.NewRoleBindingLister(indexer).RoleBindings(ns)
		},
	}
	podDisruptionBudgetKind = kindClient[*policyv1.PodDisruptionBudget]{
		resource: "poddisruptionbudgets",
		client: func(cs *fake.Clientset, ns string) kubeinterfaces.CreateUpdateDeleterInterface[*policyv1.PodDisruptionBudget] {
			return cs.PolicyV1().PodDisruptionBudgets(ns)
		},
		lister: func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*policyv1.PodDisruptionBudget] {
			return policyv1listers.NewPodDisruptionBudgetLister(indexer).PodDisruptionBudgets(ns)
		},
	}
	namespaceKind = kindClient[*corev1.Namespace]{
		resource: "namespaces",
		client: func(cs *fake.Clientset, _ string) kubeinterfaces.CreateUpdateDeleterInterface[*corev1.Namespace] {
			return cs.CoreV1().Namespaces()
		},
		lister: func(indexer cache.Indexer, _ string) kubeinterfaces.GetterInterface[*corev1.Namespace] {
			return corev1listers.NewNamespaceLister(indexer)
		},
	}
)

// applyFixture runs Apply against a fake clientset, with a lister filled from what the fake holds at the time of
// each call, as an informer cache that caught up would be.
type applyFixture[T kubeinterfaces.ObjectInterface] struct {
	kind       kindClient[T]
	kubeClient *fake.Clientset
	recorder   *record.FakeRecorder
}

func newApplyFixture[T kubeinterfaces.ObjectInterface](kind kindClient[T], existing ...runtime.Object) *applyFixture[T] {
	return &applyFixture[T]{
		kind:       kind,
		kubeClient: fake.NewClientset(existing...),
		recorder:   record.NewFakeRecorder(100),
	}
}

func (f *applyFixture[T]) apply(t testing.TB, required T, options ApplyOptions) (T, bool, error) {
	t.Helper()
	return Apply(t.Context(), f.kind.client(f.kubeClient, testNamespace), f.lister(t), f.recorder, required, options)
}

func (f *applyFixture[T]) lister(t testing.TB) kubeinterfaces.GetterInterface[T] {
	t.Helper()
	return f.kind.lister(f.indexer(t), testNamespace)
}

// indexer holds every object of the fixture's kind that the fake clientset stores.
func (f *applyFixture[T]) indexer(t testing.TB) cache.Indexer {
	t.Helper()

	obj := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(runtime.Object)
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		t.Fatalf("can't find the kind of %T: %v", obj, err)
	}
	gvr := schema.GroupVersionResource{Group: gvks[0].Group, Version: gvks[0].Version, Resource: f.kind.resource}

	list, err := f.kubeClient.Tracker().List(gvr, gvks[0], "")
	if err != nil {
		t.Fatalf("can't list %s from the fake clientset: %v", gvr, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatalf("can't extract the items of %s: %v", gvr, err)
	}

	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, item := range items {
		if err := indexer.Add(item); err != nil {
			t.Fatalf("can't add %T to the indexer: %v", item, err)
		}
	}
	return indexer
}

// get returns the object the fake clientset stores under name.
func (f *applyFixture[T]) get(t *testing.T, name string) T {
	t.Helper()

	obj, exists, err := f.indexer(t).GetByKey(cache.NewObjectName(namespaceOf[T](), name).String())
	if err != nil || !exists {
		t.Fatalf("can't get %q from the fake clientset: exists=%v, err=%v", name, exists, err)
	}
	return obj.(T)
}

// namespaceOf is the namespace the fixture's objects of kind T live in.
func namespaceOf[T kubeinterfaces.ObjectInterface]() string {
	var zero T
	if _, ok := any(zero).(*corev1.Namespace); ok {
		return ""
	}
	return testNamespace
}

// takeActions returns the actions the fake clientset recorded since the last call, as "<verb> <resource>" strings.
func (f *applyFixture[T]) takeActions() []string {
	var actions []string
	for _, action := range f.takeRawActions() {
		actions = append(actions, action.GetVerb()+" "+action.GetResource().Resource)
	}
	return actions
}

// takeRawActions returns the actions the fake clientset recorded since the last call.
func (f *applyFixture[T]) takeRawActions() []clienttesting.Action {
	actions := f.kubeClient.Actions()
	f.kubeClient.ClearActions()
	return actions
}

// deleteOptions returns the options of the delete actions among actions.
func deleteOptions(actions []clienttesting.Action) []metav1.DeleteOptions {
	var options []metav1.DeleteOptions
	for _, action := range actions {
		if deleteAction, ok := action.(clienttesting.DeleteActionImpl); ok {
			options = append(options, deleteAction.DeleteOptions)
		}
	}
	return options
}

// takeEvents returns the events recorded since the last call.
func (f *applyFixture[T]) takeEvents() []string {
	var events []string
	for {
		select {
		case event := <-f.recorder.Events:
			events = append(events, event)
		default:
			return events
		}
	}
}

// failOn makes the fake clientset fail every request with verb on the fixture's resource.
func (f *applyFixture[T]) failOn(verb string, err error) {
	f.kubeClient.PrependReactor(verb, f.kind.resource, func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, err
	})
}
