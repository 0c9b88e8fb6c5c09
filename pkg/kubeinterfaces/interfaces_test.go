package kubeinterfaces

import (
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1client "github.com/scyllakube/client/scylla/clientset/versioned/typed/scylla/v1alpha1"
	scyllav1alpha1listers "github.com/scyllakube/client/scylla/listers/scylla/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
)

// Generated clients and listers, built-in and ours, satisfy the interfaces as they are; a mismatch fails the build.
var (
	_ CreateUpdateDeleterInterface[*corev1.Service] = corev1client.ServiceInterface(nil)
	_ PatcherInterface[*corev1.Service]             = corev1client.ServiceInterface(nil)
	_ GetterInterface[*corev1.Service]              = corev1listers.ServiceNamespaceLister(nil)

	_ CreateUpdateDeleterInterface[*corev1.Namespace] = corev1client.NamespaceInterface(nil)
	_ GetterInterface[*corev1.Namespace]              = corev1listers.NamespaceLister(nil)

	_ CreateUpdateDeleterInterface[*appsv1.StatefulSet] = appsv1client.StatefulSetInterface(nil)
	_ GetterInterface[*appsv1.StatefulSet]              = appsv1listers.StatefulSetNamespaceLister(nil)

	_ CreateUpdateDeleterInterface[*scyllav1alpha1.ScyllaDBDatacenter] = scyllav1alpha1client.ScyllaDBDatacenterInterface(nil)
	_ PatcherInterface[*scyllav1alpha1.ScyllaDBDatacenter]             = scyllav1alpha1client.ScyllaDBDatacenterInterface(nil)
	_ GetterInterface[*scyllav1alpha1.ScyllaDBDatacenter]              = scyllav1alpha1listers.ScyllaDBDatacenterNamespaceLister(nil)
)
