package managerregistration

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"
	scyllainformers "github.com/scyllakube/client/scylla/informers/externalversions"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// drainQueue returns the keys in the controller's queue and empties it.
func drainQueue(c *ScyllaDBDatacenterController) []string {
	var keys []string
	for c.queue.Len() > 0 {
		key, _ := c.queue.Get()
		keys = append(keys, key)
		c.queue.Forget(key)
		c.queue.Done(key)
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
			deliver:  func(c *ScyllaDBDatacenterController) { c.handlers.ControllerHandlerFuncs().OnAdd(sdc, false) },
			wantKeys: []string{testKey},
		},
		{
			name: "a deleted ScyllaDBDatacenter, seen as a tombstone, enqueues itself",
			deliver: func(c *ScyllaDBDatacenterController) {
				c.handlers.ControllerHandlerFuncs().OnDelete(cache.DeletedFinalStateUnknown{Key: testKey, Obj: sdc})
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

	sdc := newSDC()
	sdc.Finalizers = nil
	f := newFixture(t, sdc, newAuthTokenSecret(t, testToken))
	f.controller.queue.Add(testKey)
	if !controllerhelpers.ProcessNextWorkItem(t.Context(), ScyllaDBDatacenterControllerName, f.controller.queue, f.controller.sync) {
		t.Fatal("expected the worker to go on")
	}
	if diff := cmp.Diff([]string{"patch scylladbdatacenters"}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	if f.controller.queue.Len() != 0 {
		t.Errorf("expected a successful sync not to be requeued")
	}
}
