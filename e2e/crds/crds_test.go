//go:build e2e

package crds

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/scyllakube/scylla-operator/e2e/framework"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// establishTimeout bounds the wait for the CRDs; the suite installed them before the tests started.
const establishTimeout = time.Minute

// servedKind is what the API server must serve for one CRD.
type servedKind struct {
	CRD        string
	Kind       string
	Version    string
	Resource   string
	Namespaced bool
}

// wantKinds are the kinds of the scylla.scylladb.com API.
var wantKinds = []servedKind{
	{CRD: "remotekubernetesclusters.scylla.scylladb.com", Kind: "RemoteKubernetesCluster", Version: "v1alpha1", Resource: "remotekubernetesclusters", Namespaced: false},
	{CRD: "scyllaclusters.scylla.scylladb.com", Kind: "ScyllaCluster", Version: "v1", Resource: "scyllaclusters", Namespaced: true},
	{CRD: "scylladbbackupbuckets.scylla.scylladb.com", Kind: "ScyllaDBBackupBucket", Version: "v1alpha1", Resource: "scylladbbackupbuckets", Namespaced: false},
	{CRD: "scylladbbackupentries.scylla.scylladb.com", Kind: "ScyllaDBBackupEntry", Version: "v1alpha1", Resource: "scylladbbackupentries", Namespaced: true},
	{CRD: "scylladbclusters.scylla.scylladb.com", Kind: "ScyllaDBCluster", Version: "v1alpha1", Resource: "scylladbclusters", Namespaced: true},
	{CRD: "scylladbdatacenters.scylla.scylladb.com", Kind: "ScyllaDBDatacenter", Version: "v1alpha1", Resource: "scylladbdatacenters", Namespaced: true},
	{CRD: "scylladbmanagertasks.scylla.scylladb.com", Kind: "ScyllaDBManagerTask", Version: "v1alpha1", Resource: "scylladbmanagertasks", Namespaced: true},
}

func TestAllCRDsAreEstablishedAndServed(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	ctx := t.Context()

	var wantNames []string
	for _, k := range wantKinds {
		wantNames = append(wantNames, k.CRD)
	}
	installed := append([]string(nil), f.Suite().CRDs...)
	sort.Strings(installed)
	if diff := cmp.Diff(wantNames, installed); diff != "" {
		t.Fatalf("the CRDs installed from deploy/crds differ from the kinds of the API (-want +got):\n%s", diff)
	}
	waitCtx, cancel := context.WithTimeout(ctx, establishTimeout)
	defer cancel()
	if err := f.Clients().WaitForCRDsEstablished(waitCtx, wantNames); err != nil {
		t.Fatal(err)
	}

	apiextensions, err := apiextensionsclientset.NewForConfig(f.Clients().Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range wantKinds {
		crd, err := apiextensions.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, want.CRD, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []servedKind
		for _, v := range crd.Spec.Versions {
			if v.Served {
				got = append(got, servedKind{
					CRD:        crd.Name,
					Kind:       crd.Status.AcceptedNames.Kind,
					Version:    v.Name,
					Resource:   crd.Status.AcceptedNames.Plural,
					Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
				})
			}
		}
		if diff := cmp.Diff([]servedKind{want}, got); diff != "" {
			t.Errorf("CRD %s is served differently (-want +got):\n%s", want.CRD, diff)
		}
		for _, condition := range []apiextensionsv1.CustomResourceDefinitionConditionType{apiextensionsv1.NamesAccepted, apiextensionsv1.Established} {
			if !crdConditionTrue(crd, condition) {
				t.Errorf("CRD %s: condition %s is not True: %+v", want.CRD, condition, crd.Status.Conditions)
			}
		}
		if diff := cmp.Diff([]string{want.Version}, crd.Status.StoredVersions); diff != "" {
			t.Errorf("CRD %s: stored versions differ (-want +got):\n%s", want.CRD, diff)
		}
	}

	// Discovery is what kubectl and the generated clients rely on: each kind and its status subresource.
	for _, want := range wantKinds {
		groupVersion := "scylla.scylladb.com/" + want.Version
		resources, err := f.Clients().Kube.Discovery().ServerResourcesForGroupVersion(groupVersion)
		if err != nil {
			t.Fatalf("can't discover %s: %v", groupVersion, err)
		}
		found := map[string]metav1.APIResource{}
		for _, r := range resources.APIResources {
			found[r.Name] = r
		}
		main, ok := found[want.Resource]
		if !ok {
			t.Errorf("discovery of %s has no %s", groupVersion, want.Resource)
			continue
		}
		if main.Kind != want.Kind || main.Namespaced != want.Namespaced {
			t.Errorf("discovery of %s serves %s as kind %s, namespaced %v; want kind %s, namespaced %v", groupVersion, want.Resource, main.Kind, main.Namespaced, want.Kind, want.Namespaced)
		}
		if _, ok := found[want.Resource+"/status"]; !ok {
			t.Errorf("discovery of %s has no status subresource for %s", groupVersion, want.Resource)
		}
	}
}

func crdConditionTrue(crd *apiextensionsv1.CustomResourceDefinition, conditionType apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == conditionType {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}
