package managerregistration

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"
	scyllainformers "github.com/scyllakube/client/scylla/informers/externalversions"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// drainQueue returns the keys in the controller's queue and empties it.
func drainQueue(c *ScyllaDBDatacenterController) []string {
	return drainKeys(c.queue)
}

// drainKeys returns the keys in queue and empties it.
func drainKeys(queue workqueue.TypedRateLimitingInterface[string]) []string {
	var keys []string
	for queue.Len() > 0 {
		key, _ := queue.Get()
		keys = append(keys, key)
		queue.Forget(key)
		queue.Done(key)
	}
	return keys
}

func TestHandlersEnqueueTheDatacenterAnEventConcerns(t *testing.T) {
	t.Parallel()

	sdc := newSDC()
	secret := newAuthTokenSecret(t, testToken)
	newerSecret := secret.DeepCopy()
	newerSecret.ResourceVersion = "6"
	otherSecret := secret.DeepCopy()
	otherSecret.Name = "basic-other"
	otherNamespace := secret.DeepCopy()
	otherNamespace.Namespace = "elsewhere"

	tt := []struct {
		name     string
		deliver  func(c *ScyllaDBDatacenterController)
		wantKeys []string
	}{
		{
			name:     "a ScyllaDBDatacenter enqueues itself",
			deliver:  func(c *ScyllaDBDatacenterController) { c.objectHandlerFuncs().OnAdd(sdc, false) },
			wantKeys: []string{testKey},
		},
		{
			name: "a deleted ScyllaDBDatacenter, seen as a tombstone, enqueues itself",
			deliver: func(c *ScyllaDBDatacenterController) {
				c.objectHandlerFuncs().OnDelete(cache.DeletedFinalStateUnknown{Key: testKey, Obj: sdc})
			},
			wantKeys: []string{testKey},
		},
		{
			name:     "a new auth-token Secret enqueues its datacenter",
			deliver:  func(c *ScyllaDBDatacenterController) { c.secretHandlerFuncs().OnAdd(secret, false) },
			wantKeys: []string{testKey},
		},
		{
			name:     "a changed auth-token Secret enqueues its datacenter",
			deliver:  func(c *ScyllaDBDatacenterController) { c.secretHandlerFuncs().OnUpdate(secret, newerSecret) },
			wantKeys: []string{testKey},
		},
		{
			name: "a deleted auth-token Secret, seen as a tombstone, enqueues its datacenter",
			deliver: func(c *ScyllaDBDatacenterController) {
				c.secretHandlerFuncs().OnDelete(cache.DeletedFinalStateUnknown{Key: testNamespace + "/" + secret.Name, Obj: secret})
			},
			wantKeys: []string{testKey},
		},
		{
			name:     "a resync of an auth-token Secret enqueues nothing",
			deliver:  func(c *ScyllaDBDatacenterController) { c.secretHandlerFuncs().OnUpdate(secret, secret) },
			wantKeys: nil,
		},
		{
			name:     "another Secret enqueues nothing",
			deliver:  func(c *ScyllaDBDatacenterController) { c.secretHandlerFuncs().OnAdd(otherSecret, false) },
			wantKeys: nil,
		},
		{
			name:     "an auth-token Secret of the same name in another namespace enqueues nothing",
			deliver:  func(c *ScyllaDBDatacenterController) { c.secretHandlerFuncs().OnAdd(otherNamespace, false) },
			wantKeys: nil,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, sdc)
			tc.deliver(f.controller)
			if diff := cmp.Diff(tc.wantKeys, drainQueue(f.controller)); diff != "" {
				t.Errorf("unexpected keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScyllaDBDatacenterUpdatesEnqueueOnlyWhatTheRegistrationDependsOn(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name        string
		change      func(sdc *scyllav1alpha1.ScyllaDBDatacenter)
		keepVersion bool
		wantEnqueue bool
	}{
		{
			name:        "a resync enqueues",
			change:      func(*scyllav1alpha1.ScyllaDBDatacenter) {},
			keepVersion: true,
			wantEnqueue: true,
		},
		{
			name:        "a write that changes nothing the registration reads enqueues nothing",
			change:      func(*scyllav1alpha1.ScyllaDBDatacenter) {},
			wantEnqueue: false,
		},
		{
			name:        "a new generation enqueues",
			change:      func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.Generation++ },
			wantEnqueue: true,
		},
		{
			name: "a changed label enqueues",
			change: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				delete(sdc.Labels, naming.RegisterWithScyllaDBManagerLabel)
			},
			wantEnqueue: true,
		},
		{
			name: "a changed annotation enqueues",
			change: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations[naming.ScyllaDBManagerClusterNameOverrideAnnotation] = "renamed"
			},
			wantEnqueue: true,
		},
		{
			name:        "a changed finalizer enqueues",
			change:      func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.Finalizers = sdc.Finalizers[:1] },
			wantEnqueue: true,
		},
		{
			name: "a deletion timestamp enqueues",
			change: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.DeletionTimestamp = &metav1.Time{Time: testNow}
			},
			wantEnqueue: true,
		},
		{
			name:        "a new UID enqueues",
			change:      func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.UID = testScyllaClusterUID },
			wantEnqueue: true,
		},
		{
			name: "a changed controllerRef enqueues",
			change: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.OwnerReferences = newTranslatedSDC().OwnerReferences
			},
			wantEnqueue: true,
		},
		{
			name:        "a new status.observedGeneration enqueues",
			change:      func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.Status.ObservedGeneration = new(int64(3)) },
			wantEnqueue: true,
		},
		{
			name:        "a status.observedGeneration that goes away enqueues",
			change:      func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.Status.ObservedGeneration = nil },
			wantEnqueue: true,
		},
		{
			name: "a changed Available status enqueues",
			change: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				meta.FindStatusCondition(sdc.Status.Conditions, "Available").Status = metav1.ConditionFalse
			},
			wantEnqueue: true,
		},
		{
			name: "a changed Available observedGeneration enqueues",
			change: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				meta.FindStatusCondition(sdc.Status.Conditions, "Available").ObservedGeneration = 3
			},
			wantEnqueue: true,
		},
		{
			name: "a removed Available condition enqueues",
			change: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				meta.RemoveStatusCondition(&sdc.Status.Conditions, "Available")
			},
			wantEnqueue: true,
		},
		{
			name: "a changed Available message enqueues nothing",
			change: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				meta.FindStatusCondition(sdc.Status.Conditions, "Available").Message = "still available"
			},
			wantEnqueue: false,
		},
		{
			name: "a changed operator condition other than Available enqueues nothing",
			change: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				meta.FindStatusCondition(sdc.Status.Conditions, "Progressing").Status = metav1.ConditionTrue
			},
			wantEnqueue: false,
		},
		{
			name: "this controller's own conditions enqueue nothing",
			change: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Status.Conditions = append(sdc.Status.Conditions, makeConditions(sdc.Generation, nil, nil)...)
			},
			wantEnqueue: false,
		},
		{
			name: "node counts, versions and racks enqueue nothing",
			change: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Status.Nodes = new(int32(3))
				sdc.Status.CurrentNodes = new(int32(2))
				sdc.Status.UpdatedNodes = new(int32(1))
				sdc.Status.CurrentVersion = "2025.1.0"
				sdc.Status.UpdatedVersion = "2025.1.1"
				sdc.Status.Racks = []scyllav1alpha1.RackStatus{{Name: "a"}}
			},
			wantEnqueue: false,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			oldSDC := newSDC()
			newSDC := oldSDC.DeepCopy()
			tc.change(newSDC)
			if !tc.keepVersion {
				newSDC.ResourceVersion = "11"
			}
			if got := registrationUpdateMatters(oldSDC, newSDC, scyllaDBDatacenterObservedGeneration, scyllaDBDatacenterConditions); got != tc.wantEnqueue {
				t.Errorf("expected registrationUpdateMatters to return %t, got %t", tc.wantEnqueue, got)
			}

			f := newFixture(t, oldSDC)
			f.controller.objectHandlerFuncs().OnUpdate(oldSDC, newSDC)
			var wantKeys []string
			if tc.wantEnqueue {
				wantKeys = []string{testKey}
			}
			if diff := cmp.Diff(wantKeys, drainQueue(f.controller)); diff != "" {
				t.Errorf("unexpected keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretHandlersFindADatacenterWhoseSecretNameIsHashed(t *testing.T) {
	t.Parallel()

	sdc := newSDC()
	// Long enough for naming.AgentAuthTokenSecretName to truncate it and add a hash.
	for len(sdc.Name) < 250 {
		sdc.Name += "x"
	}
	f := newFixture(t, sdc)
	secret := newAuthTokenSecret(t, testToken)
	secret.Name = naming.AgentAuthTokenSecretName(sdc.Name)
	if secret.Name == sdc.Name+"-auth-token" {
		t.Fatalf("the Secret name %q is not hashed", secret.Name)
	}
	f.controller.secretHandlerFuncs().OnAdd(secret, false)
	if diff := cmp.Diff([]string{testNamespace + "/" + sdc.Name}, drainQueue(f.controller)); diff != "" {
		t.Errorf("unexpected keys (-want +got):\n%s", diff)
	}
}

func TestNewScyllaDBDatacenterControllerNeedsAScyllaDBManagerClient(t *testing.T) {
	t.Parallel()

	kubeInformers := kubeinformers.NewSharedInformerFactory(kubefake.NewClientset(), 0)
	scyllaInformers := scyllainformers.NewSharedInformerFactory(scyllafake.NewSimpleClientset(), 0)
	_, err := NewScyllaDBDatacenterController(kubefake.NewClientset(), scyllafake.NewSimpleClientset(), nil,
		scyllaInformers.Scylla().V1alpha1().ScyllaDBDatacenters(), kubeInformers.Core().V1().Secrets())
	if err == nil {
		t.Fatal("expected an error")
	}
}

func TestProcessNextWorkItemSyncsAKey(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newWaitingSDC(), newAuthTokenSecret(t, testToken))
	f.controller.queue.Add(testKey)
	if !controllerhelpers.ProcessNextWorkItem(t.Context(), ScyllaDBDatacenterControllerName, f.controller.queue, f.controller.sync) {
		t.Fatal("expected the worker to go on")
	}
	if diff := cmp.Diff(registrationWrites, f.journal.Take()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	if f.controller.queue.Len() != 0 {
		t.Errorf("expected a successful sync not to be requeued")
	}
}
