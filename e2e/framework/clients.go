package framework

import (
	"fmt"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Clients are the API clients of one identity (REST config and user agent) on one control plane. To add a typed
// clientset (such as the generated scylla one), add a field and construct it in NewClients.
type Clients struct {
	// Config is the REST config the clients were built from.
	Config *rest.Config
	// Kube is the typed client for built-in APIs.
	Kube kubernetes.Interface
	// Dynamic reaches any resource, custom ones included.
	Dynamic dynamic.Interface
	// Mapper maps kinds to resources through cached discovery; call Mapper.Reset() after installing CRDs.
	Mapper *restmapper.DeferredDiscoveryRESTMapper
}

// NewClients builds every client from config.
func NewClients(config *rest.Config) (*Clients, error) {
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("can't create Kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("can't create dynamic client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("can't create discovery client: %w", err)
	}
	return &Clients{
		Config:  config,
		Kube:    kube,
		Dynamic: dyn,
		Mapper:  restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)),
	}, nil
}
