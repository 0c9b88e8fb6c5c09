package resourceapply_test

import (
	"context"
	"fmt"

	"github.com/scyllakube/scylla-operator/pkg/resourceapply"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// A controller passes the typed client and the namespaced lister of the kind as they are.
func ExampleApply() {
	ctx := context.Background()
	kubeClient := fake.NewClientset()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	recorder := record.NewFakeRecorder(10)

	required := func() *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "scylla", Name: "basic-client", Labels: map[string]string{"scylla/cluster": "basic"}},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "cql", Port: 9042}}},
		}
	}

	for range 2 {
		svc, changed, err := resourceapply.Apply(ctx, kubeClient.CoreV1().Services("scylla"), corev1listers.NewServiceLister(indexer).Services("scylla"), recorder, required(), resourceapply.ApplyOptions{})
		if err != nil {
			panic(err)
		}
		// The informer would do this.
		if err := indexer.Add(svc); err != nil {
			panic(err)
		}
		fmt.Printf("changed=%v writes=%d\n", changed, len(kubeClient.Actions()))
	}

	// Output:
	// changed=true writes=1
	// changed=false writes=1
}
