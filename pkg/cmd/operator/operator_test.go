package operator

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"

	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/remoteclient"
)

func TestOperatorOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		mutate  func(*OperatorOptions)
		wantErr string
	}{
		{name: "defaults with an image are valid", mutate: func(*OperatorOptions) {}},
		{name: "missing image", mutate: func(o *OperatorOptions) { o.OperatorImage = "" }, wantErr: "--image must name the operator image"},
		{name: "no workers", mutate: func(o *OperatorOptions) { o.ConcurrentSyncs = 0 }, wantErr: "--concurrent-syncs must be at least 1, got 0"},
		{name: "resync too short", mutate: func(o *OperatorOptions) { o.ResyncPeriod = time.Second }, wantErr: "--resync-period must be at least 1m"},
		{name: "bad qps", mutate: func(o *OperatorOptions) { o.QPS = 0 }, wantErr: "--qps must be greater than 0"},
		{name: "bad serving address", mutate: func(o *OperatorOptions) { o.Serving.Address = "8080" }, wantErr: "--serving-address"},
		{name: "profiling with serving off", mutate: func(o *OperatorOptions) { o.Serving.Address = ""; o.Serving.Profiling = true }, wantErr: "--profiling needs a --serving-address"},
		{name: "bad lease timing", mutate: func(o *OperatorOptions) { o.LeaderElection.LeaseDuration = time.Second }, wantErr: "--leader-election-lease-duration"},
		{name: "every error is reported at once", mutate: func(o *OperatorOptions) { o.OperatorImage = ""; o.ConcurrentSyncs = -1 }, wantErr: "--concurrent-syncs must be at least 1, got -1\n--image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := NewOperatorOptions()
			o.OperatorImage = "docker.io/scyllakube/scylla-operator:test"
			tc.mutate(o)
			err := o.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

// startInformers starts factories and waits for their caches; they are shut down when the test ends.
func startInformers(t *testing.T, factories ...informerFactory) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	for _, f := range factories {
		f.Start(ctx.Done())
	}
	t.Cleanup(func() {
		// Shutdown waits for the informers, which stop once ctx is done.
		cancel()
		for _, f := range factories {
			f.Shutdown()
		}
	})
	for _, f := range factories {
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				t.Fatalf("the cache of %v did not sync", typ)
			}
		}
	}
}

func TestManagedInformersSeeOnlyTheOperatorsObjects(t *testing.T) {
	t.Parallel()

	managed := map[string]string{"app.kubernetes.io/managed-by": "scylla-operator", "scylla/cluster": "basic"}
	client := kubefake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "scylla", Name: "basic-auth-token", Labels: managed}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "scylla", Name: "someone-elses"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "scylla", Name: "basic-dc1-a-0", Labels: managed}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "web-0", Labels: map[string]string{"scylla/cluster": "basic"}}},
		// A cluster's Ingresses are mostly other applications'.
		&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "scylla", Name: "basic-client-cql", Labels: managed}},
		&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "web"}},
	)
	factory := newManagedObjectsInformerFactory(client, 0)
	secrets := factory.Core().V1().Secrets().Lister()
	pods := factory.Core().V1().Pods().Lister()
	ingresses := factory.Networking().V1().Ingresses().Lister()
	startInformers(t, factory)

	var got []string
	cachedSecrets, err := secrets.List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	cachedPods, err := pods.List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cachedSecrets {
		got = append(got, "Secret "+s.Name)
	}
	for _, p := range cachedPods {
		got = append(got, "Pod "+p.Name)
	}
	cachedIngresses, err := ingresses.List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range cachedIngresses {
		got = append(got, "Ingress "+i.Name)
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"Ingress basic-client-cql", "Pod basic-dc1-a-0", "Secret basic-auth-token"}, got); diff != "" {
		t.Errorf("unexpected cached objects (-want +got):\n%s", diff)
	}
}

func TestEndpointSliceInformerSeesOnlyTheSlicesTheOperatorWrites(t *testing.T) {
	t.Parallel()

	managed := map[string]string{"app.kubernetes.io/managed-by": "scylla-operator", "scylla/cluster": "basic"}
	slice := func(name string, labels map[string]string, managedBy string) *discoveryv1.EndpointSlice {
		l := maps.Clone(labels)
		if len(managedBy) != 0 {
			if l == nil {
				l = map[string]string{}
			}
			l[discoveryv1.LabelManagedBy] = managedBy
		}
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "scylla", Name: name, Labels: l}}
	}
	client := kubefake.NewClientset(
		slice("basic-client-seeds", managed, "scylla-operator.scylladb.com"),
		// Kubernetes' EndpointSlice controller copies a member Service's labels.
		slice("basic-dc1-a-0-x7k2p", managed, "endpointslice-controller.k8s.io"),
		slice("someone-elses", nil, "scylla-operator.scylladb.com"),
		slice("unlabelled", managed, ""),
	)
	factory := newManagedObjectsInformerFactory(client, 0)
	// The ScyllaDBCluster controller takes its lister before the factory starts.
	lister := controllerhelpers.OperatorEndpointSlices(factory, naming.OperatorEndpointSlicesSelector()).Lister()
	startInformers(t, factory)

	cached, err := lister.List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range cached {
		got = append(got, s.Name)
	}
	if diff := cmp.Diff([]string{"basic-client-seeds"}, got); diff != "" {
		t.Errorf("unexpected cached EndpointSlices (-want +got):\n%s", diff)
	}
}

func TestInformerCachesHoldTrimmedObjectsButScyllaDBDatacentersManagedFields(t *testing.T) {
	t.Parallel()

	managed := map[string]string{"app.kubernetes.io/managed-by": "scylla-operator", "scylla/cluster": "basic"}
	managedFields := []metav1.ManagedFieldsEntry{{Manager: "scylla-operator", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{}}`)}}}
	// Of a ScyllaDBDatacenter's managedFields, the cache keeps the operator's status apply entry, which its status
	// write reads (controllerhelpers.TrimForInformerCache).
	operatorStatusApply := metav1.ManagedFieldsEntry{Manager: naming.OperatorFieldManager, Operation: metav1.ManagedFieldsOperationApply, Subresource: "status",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{"k:{\"type\":\"Available\"}":{}}}}`)}}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "scylla", Name: name, Labels: managed, ManagedFields: managedFields}
	}
	kubeClient := kubefake.NewClientset(&corev1.Pod{
		ObjectMeta: meta("basic-dc1-a-0"),
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "scylla", Image: "scylladb/scylla:2025.1.0", Command: []string{"/mnt/shared/scylla-operator", "sidecar"},
		}}},
	})
	scyllaClient := scyllafake.NewSimpleClientset(
		&scyllav1alpha1.ScyllaDBDatacenter{ObjectMeta: func() metav1.ObjectMeta {
			m := meta("basic")
			m.ManagedFields = append([]metav1.ManagedFieldsEntry{operatorStatusApply}, managedFields...)
			return m
		}()},
		&scyllav1.ScyllaCluster{ObjectMeta: meta("basic")},
	)
	kubeInformers := newManagedObjectsInformerFactory(kubeClient, 0)
	scyllaInformers := newScyllaInformerFactory(scyllaClient, 0)
	pods := kubeInformers.Core().V1().Pods().Lister()
	sdcs := scyllaInformers.Scylla().V1alpha1().ScyllaDBDatacenters().Lister()
	scs := scyllaInformers.Scylla().V1().ScyllaClusters().Lister()
	startInformers(t, kubeInformers, scyllaInformers)

	pod, err := pods.Pods("scylla").Get("basic-dc1-a-0")
	if err != nil {
		t.Fatal(err)
	}
	wantSpec := corev1.PodSpec{Containers: []corev1.Container{{Name: "scylla", Image: "scylladb/scylla:2025.1.0"}}}
	if diff := cmp.Diff(wantSpec, pod.Spec); diff != "" || pod.ManagedFields != nil {
		t.Errorf("the cached Pod is not trimmed: managedFields %v, spec (-want +got):\n%s", pod.ManagedFields, diff)
	}
	sc, err := scs.ScyllaClusters("scylla").Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	if sc.ManagedFields != nil {
		t.Errorf("the cached ScyllaCluster keeps its managedFields: %v", sc.ManagedFields)
	}
	sdc, err := sdcs.ScyllaDBDatacenters("scylla").Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]metav1.ManagedFieldsEntry{operatorStatusApply}, sdc.ManagedFields); diff != "" {
		t.Errorf("the cached ScyllaDBDatacenter lost managedFields its status write reads (-want +got):\n%s", diff)
	}
}

func TestOperatorCommandRegistersServingFlags(t *testing.T) {
	t.Parallel()
	root := NewScyllaOperatorCommand(genericclioptions.IOStreams{})
	cmd, _, err := root.Find([]string{"operator"})
	if err != nil || cmd == root {
		t.Fatalf("the root command has no operator subcommand: %v", err)
	}
	for flag, wantDefault := range map[string]string{"serving-address": ":8080", "profiling": "false"} {
		f := cmd.Flags().Lookup(flag)
		if f == nil {
			t.Errorf("operator has no flag --%s", flag)
			continue
		}
		if f.DefValue != wantDefault {
			t.Errorf("--%s defaults to %q, want %q", flag, f.DefValue, wantDefault)
		}
	}
}

func TestRemoteClientsAreLimitedIdentifiedAndFilteredLikeTheOperatorsOwn(t *testing.T) {
	t.Parallel()
	o := NewOperatorOptions()
	o.QPS, o.Burst = 12, 34
	managed := map[string]string{"app.kubernetes.io/managed-by": "scylla-operator"}
	managedFromMeta := map[string]string{"app.kubernetes.io/managed-by": "remote.scylla-operator.scylladb.com"}
	remote := kubefake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "dc2", Name: "basic-auth-token", Labels: managed}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "dc2", Name: "cluster-auth-token", Labels: managedFromMeta}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "dc2", Name: "someone-elses"}},
	)
	var config *rest.Config
	opts := o.remoteClientOptions()
	opts.NewClients = func(c *rest.Config) (kubernetes.Interface, scyllaclientset.Interface, error) {
		config = c
		return remote, scyllafake.NewClientset(), nil
	}
	pool := remoteclient.NewPool(opts)
	defer pool.Shutdown()
	var secretLister corev1listers.SecretLister
	if err := pool.AddHandler(remoteclient.InformerHandler{
		Kind: "Secret",
		Informer: func(c *remoteclient.Cluster) cache.SharedIndexInformer {
			secretLister = c.KubeInformers().Core().V1().Secrets().Lister()
			return c.KubeInformers().Core().V1().Secrets().Informer()
		},
		Handler: func(string) cache.ResourceEventHandler { return cache.ResourceEventHandlerFuncs{} },
	}); err != nil {
		t.Fatal(err)
	}
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters["dc2"] = &clientcmdapi.Cluster{Server: "https://dc2.example.com"}
	kubeconfig.AuthInfos["dc2"] = &clientcmdapi.AuthInfo{Token: "token"}
	kubeconfig.Contexts["dc2"] = &clientcmdapi.Context{Cluster: "dc2", AuthInfo: "dc2"}
	kubeconfig.CurrentContext = "dc2"
	data, err := clientcmd.Write(*kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Update("dc2", data); err != nil {
		t.Fatal(err)
	}

	if config.QPS != 12 || config.Burst != 34 || !strings.HasPrefix(config.UserAgent, "scylla-operator-operator/") {
		t.Errorf("remote client: QPS %v, burst %d, user agent %q; want the operator's", config.QPS, config.Burst, config.UserAgent)
	}
	c, _ := pool.Get("dc2")
	if !cache.WaitForCacheSync(t.Context().Done(), c.HasSynced) {
		t.Fatal("the remote cache did not sync")
	}
	secrets, err := secretLister.List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range secrets {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	if want := []string{"basic-auth-token", "cluster-auth-token"}; !slices.Equal(names, want) {
		t.Errorf("the remote informer holds Secrets %v, want only the remote operator's and the meta operator's %v", names, want)
	}
}
