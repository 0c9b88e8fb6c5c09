package resourceapply

import (
	"fmt"
	"testing"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"
	scyllav1alpha1listers "github.com/scyllakube/client/scylla/listers/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"github.com/scyllakube/scylla-operator/pkg/test/fakeclient"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
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

// fakeClientset is what the tests need of a generated fake clientset, built-in or ours.
type fakeClientset interface {
	Tracker() clienttesting.ObjectTracker
	Actions() []clienttesting.Action
	ClearActions()
	PrependReactor(verb, resource string, reaction clienttesting.ReactionFunc)
}

// kindClient wires Apply to a fake clientset and to a lister for one kind.
type kindClient[T kubeinterfaces.ObjectInterface] struct {
	gvr schema.GroupVersionResource
	gvk schema.GroupVersionKind
	// newClients returns a fake clientset holding objects and its typed client of the kind in the test namespace.
	newClients func(objects ...runtime.Object) (fakeClientset, kubeinterfaces.CreateUpdateDeleterInterface[T])
	lister     func(indexer cache.Indexer, namespace string) kubeinterfaces.GetterInterface[T]
}

// kubeKind wires a built-in kind, served by client-go's fake clientset.
func kubeKind[T kubeinterfaces.ObjectInterface](
	gv schema.GroupVersion,
	kind, resource string,
	client func(cs *fake.Clientset) kubeinterfaces.CreateUpdateDeleterInterface[T],
	lister func(indexer cache.Indexer, namespace string) kubeinterfaces.GetterInterface[T],
) kindClient[T] {
	return kindClient[T]{
		gvr: gv.WithResource(resource),
		gvk: gv.WithKind(kind),
		newClients: func(objects ...runtime.Object) (fakeClientset, kubeinterfaces.CreateUpdateDeleterInterface[T]) {
			cs := fake.NewClientset(objects...)
			return cs, client(cs)
		},
		lister: lister,
	}
}

// scyllaKind wires a kind of scylla.scylladb.com/v1alpha1, served by our generated fake clientset.
func scyllaKind[T kubeinterfaces.ObjectInterface](
	kind, resource string,
	client func(cs *scyllafake.Clientset) kubeinterfaces.CreateUpdateDeleterInterface[T],
	lister func(indexer cache.Indexer, namespace string) kubeinterfaces.GetterInterface[T],
) kindClient[T] {
	return kindClient[T]{
		gvr: scyllav1alpha1.SchemeGroupVersion.WithResource(resource),
		gvk: scyllav1alpha1.SchemeGroupVersion.WithKind(kind),
		newClients: func(objects ...runtime.Object) (fakeClientset, kubeinterfaces.CreateUpdateDeleterInterface[T]) {
			// The field-managing NewClientset needs OpenAPI models that the generated client does not carry.
			cs := scyllafake.NewSimpleClientset(objects...)
			return cs, client(cs)
		},
		lister: lister,
	}
}

var (
	serviceKind = kubeKind(corev1.SchemeGroupVersion, "Service", "services",
		func(cs *fake.Clientset) kubeinterfaces.CreateUpdateDeleterInterface[*corev1.Service] {
			return cs.CoreV1().Services(testNamespace)
		},
		func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*corev1.Service] {
			return corev1listers.NewServiceLister(indexer).Services(ns)
		})
	statefulSetKind = kubeKind(appsv1.SchemeGroupVersion, "StatefulSet", "statefulsets",
		func(cs *fake.Clientset) kubeinterfaces.CreateUpdateDeleterInterface[*appsv1.StatefulSet] {
			return cs.AppsV1().StatefulSets(testNamespace)
		},
		func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*appsv1.StatefulSet] {
			return appsv1listers.NewStatefulSetLister(indexer).StatefulSets(ns)
		})
	secretKind = kubeKind(corev1.SchemeGroupVersion, "Secret", "secrets",
		func(cs *fake.Clientset) kubeinterfaces.CreateUpdateDeleterInterface[*corev1.Secret] {
			return cs.CoreV1().Secrets(testNamespace)
		},
		func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*corev1.Secret] {
			return corev1listers.NewSecretLister(indexer).Secrets(ns)
		})
	configMapKind = kubeKind(corev1.SchemeGroupVersion, "ConfigMap", "configmaps",
		func(cs *fake.Clientset) kubeinterfaces.CreateUpdateDeleterInterface[*corev1.ConfigMap] {
			return cs.CoreV1().ConfigMaps(testNamespace)
		},
		func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*corev1.ConfigMap] {
			return corev1listers.NewConfigMapLister(indexer).ConfigMaps(ns)
		})
	serviceAccountKind = kubeKind(corev1.SchemeGroupVersion, "ServiceAccount", "serviceaccounts",
		func(cs *fake.Clientset) kubeinterfaces.CreateUpdateDeleterInterface[*corev1.ServiceAccount] {
			return cs.CoreV1().ServiceAccounts(testNamespace)
		},
		func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*corev1.ServiceAccount] {
			return corev1listers.NewServiceAccountLister(indexer).ServiceAccounts(ns)
		})
	roleBindingKind = kubeKind(rbacv1.SchemeGroupVersion, "RoleBinding", "rolebindings",
		func(cs *fake.Clientset) kubeinterfaces.CreateUpdateDeleterInterface[*rbacv1.RoleBinding] {
			return cs.RbacV1().RoleBindings(testNamespace)
		},
		func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*rbacv1.RoleBinding] {
			return rbacv1listers.NewRoleBindingLister(indexer).RoleBindings(ns)
		})
	podDisruptionBudgetKind = kubeKind(policyv1.SchemeGroupVersion, "PodDisruptionBudget", "poddisruptionbudgets",
		func(cs *fake.Clientset) kubeinterfaces.CreateUpdateDeleterInterface[*policyv1.PodDisruptionBudget] {
			return cs.PolicyV1().PodDisruptionBudgets(testNamespace)
		},
		func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*policyv1.PodDisruptionBudget] {
			return policyv1listers.NewPodDisruptionBudgetLister(indexer).PodDisruptionBudgets(ns)
		})
	namespaceKind = kubeKind(corev1.SchemeGroupVersion, "Namespace", "namespaces",
		func(cs *fake.Clientset) kubeinterfaces.CreateUpdateDeleterInterface[*corev1.Namespace] {
			return cs.CoreV1().Namespaces()
		},
		func(indexer cache.Indexer, _ string) kubeinterfaces.GetterInterface[*corev1.Namespace] {
			return corev1listers.NewNamespaceLister(indexer)
		})
	scyllaDBDatacenterKind = scyllaKind("ScyllaDBDatacenter", "scylladbdatacenters",
		func(cs *scyllafake.Clientset) kubeinterfaces.CreateUpdateDeleterInterface[*scyllav1alpha1.ScyllaDBDatacenter] {
			return cs.ScyllaV1alpha1().ScyllaDBDatacenters(testNamespace)
		},
		func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*scyllav1alpha1.ScyllaDBDatacenter] {
			return scyllav1alpha1listers.NewScyllaDBDatacenterLister(indexer).ScyllaDBDatacenters(ns)
		})
	scyllaDBManagerTaskKind = scyllaKind("ScyllaDBManagerTask", "scylladbmanagertasks",
		func(cs *scyllafake.Clientset) kubeinterfaces.CreateUpdateDeleterInterface[*scyllav1alpha1.ScyllaDBManagerTask] {
			return cs.ScyllaV1alpha1().ScyllaDBManagerTasks(testNamespace)
		},
		func(indexer cache.Indexer, ns string) kubeinterfaces.GetterInterface[*scyllav1alpha1.ScyllaDBManagerTask] {
			return scyllav1alpha1listers.NewScyllaDBManagerTaskLister(indexer).ScyllaDBManagerTasks(ns)
		})
)

// applyFixture runs Apply against a fake clientset, with a lister filled from what the fake holds at the time of
// each call, as an informer cache that caught up would be.
type applyFixture[T kubeinterfaces.ObjectInterface] struct {
	kind      kindClient[T]
	clientset fakeClientset
	client    kubeinterfaces.CreateUpdateDeleterInterface[T]
	recorder  *record.FakeRecorder
}

func newApplyFixture[T kubeinterfaces.ObjectInterface](kind kindClient[T], existing ...runtime.Object) *applyFixture[T] {
	clientset, client := kind.newClients(existing...)
	return &applyFixture[T]{
		kind:      kind,
		clientset: clientset,
		client:    client,
		recorder:  record.NewFakeRecorder(100),
	}
}

func (f *applyFixture[T]) apply(t testing.TB, required T, options ApplyOptions) (T, bool, error) {
	t.Helper()
	return Apply(t.Context(), f.client, f.lister(t), f.recorder, required, options)
}

func (f *applyFixture[T]) lister(t testing.TB) kubeinterfaces.GetterInterface[T] {
	t.Helper()
	return f.kind.lister(f.indexer(t), testNamespace)
}

// indexer holds every object of the fixture's kind that the fake clientset stores.
func (f *applyFixture[T]) indexer(t testing.TB) cache.Indexer {
	t.Helper()

	list, err := f.clientset.Tracker().List(f.kind.gvr, f.kind.gvk, "")
	if err != nil {
		t.Fatalf("can't list %s from the fake clientset: %v", f.kind.gvr, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatalf("can't extract the items of %s: %v", f.kind.gvr, err)
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
	actions := f.clientset.Actions()
	f.clientset.ClearActions()
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
	return fakeclient.Events(f.recorder)
}

// failOn makes the fake clientset fail every request with verb on the fixture's resource.
func (f *applyFixture[T]) failOn(verb string, err error) {
	f.clientset.PrependReactor(verb, f.kind.gvr.Resource, func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, err
	})
}
