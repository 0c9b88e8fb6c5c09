package controllerhelpers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	discoveryv1informers "k8s.io/client-go/informers/discovery/v1"
)

// OperatorEndpointSlices returns the informer of the EndpointSlices the operator writes itself, selected by selector
// (naming.OperatorEndpointSlicesSelector, or naming.RemoteOperatorEndpointSlicesSelector in a remote cluster), on
// factory, which starts it and applies its transform. The factory's own selector of managed objects would also cache
// the EndpointSlices Kubernetes makes for every member and client Service, which inherit their labels, and decode
// each of their updates: nothing reads them. A factory holds one informer per type, so every user of a factory's
// EndpointSlices must take them from here, with the same selector, before the factory starts.
func OperatorEndpointSlices(factory kubeinformers.SharedInformerFactory, selector labels.Selector) discoveryv1informers.EndpointSliceInformer {
	return discoveryv1informers.New(factory, metav1.NamespaceAll, func(options *metav1.ListOptions) {
		options.LabelSelector = selector.String()
	}).EndpointSlices()
}
