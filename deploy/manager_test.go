package deploy

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"

	"github.com/scyllakube/scylla-operator/pkg/cmd/operator"
	"github.com/scyllakube/scylla-operator/pkg/crdvalidation"
	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// crdValidator validates manifests like the API server with deploy/crds installed; built once, as compiling the CEL
// rules takes a while.
var crdValidator = sync.OnceValues(func() (*crdvalidation.Validator, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, scyllav1.AddToScheme, scyllav1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return crdvalidation.NewValidatorFromDir(context.Background(), scheme, "crds")
})

// managerObjects decodes every document of deploy/manager/, validating scylla.scylladb.com objects against the CRDs
// (schema and CEL rules) and every object strictly (no unknown fields).
func managerObjects(t *testing.T) []runtime.Object {
	t.Helper()
	v, err := crdValidator()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("manager/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in manager/: %v", err)
	}
	decoder := clientgoscheme.Codecs.UniversalDeserializer()
	var objs []runtime.Object
	for _, f := range files {
		docs, err := crdvalidation.SplitDocuments(readFile(t, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(docs) == 0 {
			t.Errorf("%s has no objects", f)
		}
		for i, doc := range docs {
			u, errs := v.ValidateCreate(t.Context(), doc)
			if len(errs) != 0 {
				t.Fatalf("%s document %d is invalid: %v", f, i, errs.ToAggregate())
			}
			if u.GroupVersionKind().Group == scyllav1.GroupName {
				continue
			}
			obj, _, err := decoder.Decode(doc, nil, nil)
			if err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			objs = append(objs, obj)
		}
	}
	return objs
}

func TestManagerManifestsAreValid(t *testing.T) {
	t.Parallel()
	if objs := managerObjects(t); len(objs) == 0 {
		t.Fatal("deploy/manager/ has no objects")
	}
}

func TestManagerControllerRBACGrantsExactlyWhatItUses(t *testing.T) {
	t.Parallel()
	objs := managerObjects(t)
	ns, name := naming.ScyllaDBManagerNamespace, naming.ManagerControllerProgramName

	clusterRole := installedObject[*rbacv1.ClusterRole](t, objs, "", name)
	if diff := cmp.Diff(operator.ManagerControllerClusterRoleRules(), clusterRole.Rules); diff != "" {
		wantYAML, _ := yaml.Marshal(operator.ManagerControllerClusterRoleRules())
		t.Errorf("ClusterRole rules differ (-code +manifest):\n%s\nthe manifest's rules should be:\n%s", diff, wantYAML)
	}
	role := installedObject[*rbacv1.Role](t, objs, ns, name+"-leader-election")
	if diff := cmp.Diff(operator.ManagerControllerLeaderElectionRules(), role.Rules); diff != "" {
		t.Errorf("leader election Role rules differ (-code +manifest):\n%s", diff)
	}

	// Both are bound to the ServiceAccount the Deployment runs as.
	deployment := installedObject[*appsv1.Deployment](t, objs, ns, name)
	sa := installedObject[*corev1.ServiceAccount](t, objs, ns, deployment.Spec.Template.Spec.ServiceAccountName)
	wantSubjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}}
	crb := installedObject[*rbacv1.ClusterRoleBinding](t, objs, "", name)
	if diff := cmp.Diff(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole.Name}, crb.RoleRef); diff != "" {
		t.Errorf("ClusterRoleBinding roleRef differs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantSubjects, crb.Subjects); diff != "" {
		t.Errorf("ClusterRoleBinding subjects differ (-want +got):\n%s", diff)
	}
	rb := installedObject[*rbacv1.RoleBinding](t, objs, ns, role.Name)
	if diff := cmp.Diff(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}, rb.RoleRef); diff != "" {
		t.Errorf("RoleBinding roleRef differs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantSubjects, rb.Subjects); diff != "" {
		t.Errorf("RoleBinding subjects differ (-want +got):\n%s", diff)
	}
}

// The ScyllaDB Manager of deploy/manager/ is reachable at the manager-controller's default URL: the Service the URL
// names sends the URL's port to the port ScyllaDB Manager's configuration listens on.
func TestManagerIsReachableAtTheDefaultURL(t *testing.T) {
	t.Parallel()
	objs := managerObjects(t)
	u, err := url.Parse(naming.DefaultScyllaDBManagerURL)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.Split(u.Hostname(), ".")
	if len(host) != 3 || host[2] != "svc" {
		t.Fatalf("the default URL %q does not name a Service as <name>.<namespace>.svc", naming.DefaultScyllaDBManagerURL)
	}
	port := int32(80)
	if len(u.Port()) != 0 {
		p, err := strconv.Atoi(u.Port())
		if err != nil {
			t.Fatal(err)
		}
		port = int32(p)
	}
	svc := installedObject[*corev1.Service](t, objs, host[1], host[0])
	var servicePort *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			servicePort = &svc.Spec.Ports[i]
		}
	}
	if servicePort == nil {
		t.Fatalf("Service %s/%s has no port %d", svc.Namespace, svc.Name, port)
	}

	manager := installedObject[*appsv1.Deployment](t, objs, naming.ScyllaDBManagerNamespace, naming.ScyllaDBManagerServiceName)
	for k, v := range svc.Spec.Selector {
		if manager.Spec.Template.Labels[k] != v {
			t.Errorf("Service %s/%s does not select the pods of Deployment %s", svc.Namespace, svc.Name, manager.Name)
		}
	}
	container := manager.Spec.Template.Spec.Containers[0]
	var containerPort int32
	for _, p := range container.Ports {
		if p.Name == servicePort.TargetPort.String() || p.ContainerPort == servicePort.TargetPort.IntVal {
			containerPort = p.ContainerPort
		}
	}
	if containerPort == 0 {
		t.Fatalf("Service port %d targets %s, which container %s does not declare", port, servicePort.TargetPort.String(), container.Name)
	}

	config := managerConfig(t, objs, manager)
	_, listenPort, err := net.SplitHostPort(config.HTTP)
	if err != nil {
		t.Fatalf("ScyllaDB Manager's http setting %q: %v", config.HTTP, err)
	}
	if listenPort != strconv.Itoa(int(containerPort)) {
		t.Errorf("ScyllaDB Manager listens on %q, but the Service sends port %d to %d", config.HTTP, port, containerPort)
	}
}

// scyllaDBManagerConfig is the part of scylla-manager.yaml the tests check.
type scyllaDBManagerConfig struct {
	HTTP     string `json:"http"`
	Database struct {
		Hosts    []string `json:"hosts"`
		Keyspace string   `json:"keyspace"`
	} `json:"database"`
}

// managerConfig returns the configuration file ScyllaDB Manager's Deployment reads (--config-file) from its ConfigMap.
func managerConfig(t *testing.T, objs []runtime.Object, manager *appsv1.Deployment) *scyllaDBManagerConfig {
	t.Helper()
	container := manager.Spec.Template.Spec.Containers[0]
	var configFile string
	for _, arg := range container.Args {
		if v, ok := strings.CutPrefix(arg, "--config-file="); ok {
			configFile = v
		}
	}
	if len(configFile) == 0 {
		t.Fatalf("Deployment %s passes no --config-file", manager.Name)
	}
	for _, m := range container.VolumeMounts {
		if filepath.Dir(configFile) != m.MountPath {
			continue
		}
		for _, v := range manager.Spec.Template.Spec.Volumes {
			if v.Name != m.Name || v.ConfigMap == nil {
				continue
			}
			cm := installedObject[*corev1.ConfigMap](t, objs, manager.Namespace, v.ConfigMap.Name)
			data, ok := cm.Data[filepath.Base(configFile)]
			if !ok {
				t.Fatalf("ConfigMap %s has no key %s", cm.Name, filepath.Base(configFile))
			}
			config := &scyllaDBManagerConfig{}
			if err := yaml.Unmarshal([]byte(data), config); err != nil {
				t.Fatalf("ConfigMap %s key %s: %v", cm.Name, filepath.Base(configFile), err)
			}
			return config
		}
	}
	t.Fatalf("no ConfigMap volume of Deployment %s is mounted at %s", manager.Name, filepath.Dir(configFile))
	return nil
}

// ScyllaDB Manager keeps its state in the ScyllaCluster of deploy/manager/, through its client Service.
func TestManagerStoresItsStateInTheScyllaClusterOfItsNamespace(t *testing.T) {
	t.Parallel()
	objs := managerObjects(t)
	manager := installedObject[*appsv1.Deployment](t, objs, naming.ScyllaDBManagerNamespace, naming.ScyllaDBManagerServiceName)
	config := managerConfig(t, objs, manager)

	var clusters []string
	files, _ := filepath.Glob("manager/*.yaml")
	for _, f := range files {
		docs, err := crdvalidation.SplitDocuments(readFile(t, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range docs {
			sc := &scyllav1.ScyllaCluster{}
			if err := yaml.Unmarshal(doc, sc); err != nil || sc.Kind != "ScyllaCluster" {
				continue
			}
			if sc.Namespace != manager.Namespace {
				t.Errorf("ScyllaCluster %s/%s is not in ScyllaDB Manager's namespace %s", sc.Namespace, sc.Name, manager.Namespace)
			}
			clusters = append(clusters, fmt.Sprintf("%s.%s.svc", naming.ClientServiceName(sc.Name), sc.Namespace))
		}
	}
	if diff := cmp.Diff(clusters, config.Database.Hosts); diff != "" {
		t.Errorf("ScyllaDB Manager's database hosts are not the client Service of the ScyllaCluster (-ScyllaClusters +config):\n%s", diff)
	}
}
