package crdvalidation

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// v1alpha1ExamplePatterns match the example files of the v1alpha1 kinds.
var v1alpha1ExamplePatterns = []string{
	"scylladbdatacenter*.yaml",
	"scylladbcluster*.yaml",
	"remotekubernetescluster*.yaml",
	"scylladbmanagertask*.yaml",
}

func TestV1alpha1KindsAreServedWithTheirScope(t *testing.T) {
	t.Parallel()

	v := newTestValidator(t)
	want := map[string]bool{
		"ScyllaDBDatacenter":      true,
		"ScyllaDBCluster":         true,
		"RemoteKubernetesCluster": false,
		"ScyllaDBManagerTask":     true,
	}
	for kind, namespaced := range want {
		gvk := scyllav1alpha1.SchemeGroupVersion.WithKind(kind)
		kv, ok := v.kinds[gvk]
		if !ok {
			t.Errorf("%s is not among the served kinds %v", gvk, v.Kinds())
			continue
		}
		if kv.namespaced != namespaced {
			t.Errorf("%s: namespaced is %v, want %v", kind, kv.namespaced, namespaced)
		}
	}
}

// v1alpha1Examples decodes every document of the v1alpha1 example files, keyed by "file#index".
func v1alpha1Examples(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	v := newTestValidator(t)
	objs := map[string]*unstructured.Unstructured{}
	for _, pattern := range v1alpha1ExamplePatterns {
		for _, path := range globFiles(t, filepath.Join(examplesDir, pattern)) {
			for i, doc := range splitDocuments(t, readFile(t, path)) {
				obj, errs := v.ValidateCreate(context.Background(), doc)
				if len(errs) != 0 {
					t.Fatalf("%s document %d is invalid: %v", path, i, errs.ToAggregate())
				}
				objs[fmt.Sprintf("%s#%d", filepath.Base(path), i)] = obj
			}
		}
	}
	return objs
}

func exampleObjectKey(kind, namespace, name string) string {
	return kind + " " + namespace + "/" + name
}

func TestV1alpha1ExamplesCoverEveryKindAndReferToEachOther(t *testing.T) {
	t.Parallel()

	objs := v1alpha1Examples(t)
	present := map[string]*unstructured.Unstructured{}
	for _, obj := range objs {
		present[exampleObjectKey(obj.GetKind(), obj.GetNamespace(), obj.GetName())] = obj
	}

	kinds := map[string]bool{}
	taskKinds := map[string]bool{}
	for file, obj := range objs {
		kinds[obj.GetKind()] = true
		switch obj.GetKind() {
		case "ScyllaDBManagerTask":
			refKind, _, _ := unstructured.NestedString(obj.Object, "spec", "scyllaDBClusterRef", "kind")
			refName, _, _ := unstructured.NestedString(obj.Object, "spec", "scyllaDBClusterRef", "name")
			taskType, _, _ := unstructured.NestedString(obj.Object, "spec", "type")
			taskKinds[taskType+" of "+refKind] = true
			if _, ok := present[exampleObjectKey(refKind, obj.GetNamespace(), refName)]; !ok {
				t.Errorf("%s: the task refers to %s, which no example defines", file, exampleObjectKey(refKind, obj.GetNamespace(), refName))
			}
		case "ScyllaDBCluster":
			dcs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "datacenters")
			if len(dcs) < 2 {
				t.Errorf("%s: want a multi-datacenter ScyllaDBCluster, got %d datacenters", file, len(dcs))
			}
			for _, dc := range dcs {
				remote, _, _ := unstructured.NestedString(dc.(map[string]interface{}), "remoteKubernetesClusterName")
				if _, ok := present[exampleObjectKey("RemoteKubernetesCluster", "", remote)]; !ok {
					t.Errorf("%s: datacenter runs in RemoteKubernetesCluster %q, which no example defines", file, remote)
				}
			}
		case "RemoteKubernetesCluster":
			name, _, _ := unstructured.NestedString(obj.Object, "spec", "kubeconfigSecretRef", "name")
			namespace, _, _ := unstructured.NestedString(obj.Object, "spec", "kubeconfigSecretRef", "namespace")
			secret, ok := present[exampleObjectKey("Secret", namespace, name)]
			if !ok {
				t.Errorf("%s: the kubeconfig Secret %s/%s is not among the examples", file, namespace, name)
				continue
			}
			if kubeconfig, _, _ := unstructured.NestedString(secret.Object, "stringData", "kubeconfig"); kubeconfig == "" {
				t.Errorf("%s: the Secret %s/%s has no kubeconfig key", file, namespace, name)
			}
		}
	}

	for _, kind := range []string{"ScyllaDBDatacenter", "ScyllaDBCluster", "RemoteKubernetesCluster", "ScyllaDBManagerTask"} {
		if !kinds[kind] {
			t.Errorf("no example of %s", kind)
		}
	}
	for _, tk := range []string{"Backup of ScyllaDBCluster", "Repair of ScyllaDBCluster", "Backup of ScyllaDBDatacenter", "Repair of ScyllaDBDatacenter"} {
		if !taskKinds[tk] {
			t.Errorf("no example ScyllaDBManagerTask for a %s", tk)
		}
	}
}

func TestV1alpha1HasAnInvalidManifestPerRule(t *testing.T) {
	t.Parallel()

	// TestInvalidManifestsAreRejected checks each of them; this guards against losing them.
	const atLeast = 40
	files := globFiles(t, filepath.Join("testdata", "invalid", "v1alpha1-*.yaml"))
	if len(files) < atLeast {
		t.Errorf("want at least %d v1alpha1 invalid manifests, got %d", atLeast, len(files))
	}
	kinds := map[string]int{}
	for _, f := range files {
		kind, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(f), "v1alpha1-"), "-")
		kinds[kind]++
	}
	for _, kind := range []string{"scylladbdatacenter", "scylladbcluster", "remotekubernetescluster", "scylladbmanagertask"} {
		if kinds[kind] == 0 {
			t.Errorf("no invalid manifest for %s", kind)
		}
	}
}

// manifestEdit changes a decoded manifest in place.
type manifestEdit func(t *testing.T, obj map[string]interface{})

// set puts value, written in YAML, at a dotted path such as spec.racks[1].nodes. An index one past the end of a
// list appends.
func setField(path, value string) manifestEdit {
	return func(t *testing.T, obj map[string]interface{}) {
		t.Helper()
		var v interface{}
		if err := yaml.Unmarshal([]byte(value), &v); err != nil {
			t.Fatalf("can't parse value %q for %s: %v", value, path, err)
		}
		walkManifest(t, obj, path, func(parent interface{}, key string, index int) interface{} {
			switch p := parent.(type) {
			case map[string]interface{}:
				p[key] = v
				return p
			case []interface{}:
				if index == len(p) {
					return append(p, v)
				}
				p[index] = v
				return p
			}
			t.Fatalf("can't set %s: the parent is a %T", path, parent)
			return nil
		})
	}
}

// remove deletes the map key or list item at a dotted path.
func removeField(path string) manifestEdit {
	return func(t *testing.T, obj map[string]interface{}) {
		t.Helper()
		walkManifest(t, obj, path, func(parent interface{}, key string, index int) interface{} {
			switch p := parent.(type) {
			case map[string]interface{}:
				if _, ok := p[key]; !ok {
					t.Fatalf("can't remove %s: it doesn't exist", path)
				}
				delete(p, key)
				return p
			case []interface{}:
				return append(p[:index:index], p[index+1:]...)
			}
			t.Fatalf("can't remove %s: the parent is a %T", path, parent)
			return nil
		})
	}
}

// manifestPathStep is one step of a dotted path: a map key or a list index.
type manifestPathStep struct {
	key   string
	index int
}

func parseManifestPath(t *testing.T, path string) []manifestPathStep {
	t.Helper()
	var steps []manifestPathStep
	for _, part := range strings.Split(path, ".") {
		name, rest, hasIndex := strings.Cut(part, "[")
		steps = append(steps, manifestPathStep{key: name, index: -1})
		if hasIndex {
			i, err := strconv.Atoi(strings.TrimSuffix(rest, "]"))
			if err != nil {
				t.Fatalf("can't parse index in %q: %v", path, err)
			}
			steps = append(steps, manifestPathStep{index: i})
		}
	}
	return steps
}

// walk finds the parent of the last step of path and replaces it with what change returns, creating missing maps.
func walkManifest(t *testing.T, obj map[string]interface{}, path string, change func(parent interface{}, key string, index int) interface{}) {
	t.Helper()
	steps := parseManifestPath(t, path)
	var replace func(cur interface{}, steps []manifestPathStep) interface{}
	replace = func(cur interface{}, steps []manifestPathStep) interface{} {
		step := steps[0]
		if len(steps) == 1 {
			return change(cur, step.key, step.index)
		}
		switch c := cur.(type) {
		case map[string]interface{}:
			child, ok := c[step.key]
			if !ok {
				child = map[string]interface{}{}
			}
			c[step.key] = replace(child, steps[1:])
			return c
		case []interface{}:
			if step.index < 0 || step.index >= len(c) {
				t.Fatalf("%s: index %d is out of range", path, step.index)
			}
			c[step.index] = replace(c[step.index], steps[1:])
			return c
		}
		t.Fatalf("%s: can't descend into a %T", path, cur)
		return nil
	}
	replace(obj, steps)
}

func applyManifestEdits(t *testing.T, base string, edits []manifestEdit) []byte {
	t.Helper()
	obj := map[string]interface{}{}
	if err := yaml.Unmarshal([]byte(base), &obj); err != nil {
		t.Fatal(err)
	}
	for _, e := range edits {
		e(t, obj)
	}
	data, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

const v1alpha1DatacenterBase = `
apiVersion: scylla.scylladb.com/v1alpha1
kind: ScyllaDBDatacenter
metadata:
  name: analytics
  namespace: scylla
spec:
  clusterName: analytics
  datacenterName: europe-west1
  scyllaDB:
    image: docker.io/scylladb/scylla:2025.1.2
  scyllaDBManagerAgent:
    image: docker.io/scylladb/scylla-manager-agent:3.5.0
  exposeOptions:
    nodeService:
      type: ClusterIP
    broadcastOptions:
      nodes:
        type: PodIP
      clients:
        type: ServiceClusterIP
  rackTemplate:
    nodes: 3
    scyllaDB:
      storage:
        capacity: 100Gi
  racks:
  - name: a
  - name: b
    nodes: 2
    scyllaDB:
      storage:
        capacity: 200Gi
        storageClassName: fast
`

const v1alpha1ClusterBase = `
apiVersion: scylla.scylladb.com/v1alpha1
kind: ScyllaDBCluster
metadata:
  name: dev
  namespace: scylla
spec:
  scyllaDB:
    image: docker.io/scylladb/scylla:2025.1.2
  scyllaDBManagerAgent:
    image: docker.io/scylladb/scylla-manager-agent:3.5.0
  datacenterTemplate:
    scyllaDB:
      storage:
        capacity: 1Ti
    rackTemplate:
      nodes: 3
      scyllaDB:
        storage:
          capacity: 1Ti
    racks:
    - name: a
  datacenters:
  - name: us-east-1
    remoteKubernetesClusterName: dev-us-east-1
    scyllaDB:
      storage:
        capacity: 500Gi
    rackTemplate:
      scyllaDB:
        storage:
          capacity: 500Gi
    racks:
    - name: b
      scyllaDB:
        storage:
          capacity: 250Gi
`

const v1alpha1BackupTaskBase = `
apiVersion: scylla.scylladb.com/v1alpha1
kind: ScyllaDBManagerTask
metadata:
  name: backup
  namespace: scylla
spec:
  scyllaDBClusterRef:
    kind: ScyllaDBDatacenter
    name: analytics
  type: Backup
  backup:
    cron: "0 1 * * *"
    location:
    - gcs:analytics-backups
`

const v1alpha1RemoteKubernetesClusterBase = `
apiVersion: scylla.scylladb.com/v1alpha1
kind: RemoteKubernetesCluster
metadata:
  name: dev-us-east-1
spec:
  kubeconfigSecretRef:
    name: dev-us-east-1-kubeconfig
    namespace: remotekubernetescluster-credentials
`

func TestV1alpha1Updates(t *testing.T) {
	t.Parallel()

	v := newTestValidator(t)
	tt := []struct {
		name string
		base string
		// old edits the base into the old object, new edits the old object into the new one.
		old, new []manifestEdit
		// want lists the errors the update must produce, each as "<field path>: <message substring>"; empty means
		// the update is accepted.
		want []string
	}{
		// ScyllaDBDatacenter
		{
			name: "ScyllaDBDatacenter: scaling a rack, adding a rack and changing images is allowed",
			base: v1alpha1DatacenterBase,
			new: []manifestEdit{
				setField("spec.racks[1].nodes", "5"),
				setField("spec.racks[2]", "{name: c, scyllaDB: {storage: {capacity: 50Gi}}}"),
				setField("spec.scyllaDB.image", "docker.io/scylladb/scylla:2025.1.3"),
			},
		},
		{
			name: "ScyllaDBDatacenter: clusterName can't change",
			base: v1alpha1DatacenterBase,
			new:  []manifestEdit{setField("spec.clusterName", "other")},
			want: []string{"spec.clusterName: clusterName is immutable"},
		},
		{
			name: "ScyllaDBDatacenter: an empty clusterName can be written out as the object's name",
			base: v1alpha1DatacenterBase,
			old:  []manifestEdit{removeField("spec.clusterName")},
			new:  []manifestEdit{setField("spec.clusterName", "analytics")},
		},
		{
			name: "ScyllaDBDatacenter: an empty clusterName can't become another name",
			base: v1alpha1DatacenterBase,
			old:  []manifestEdit{removeField("spec.clusterName")},
			new:  []manifestEdit{setField("spec.clusterName", "other")},
			want: []string{"spec.clusterName: clusterName is immutable"},
		},
		{
			name: "ScyllaDBDatacenter: datacenterName can't change",
			base: v1alpha1DatacenterBase,
			new:  []manifestEdit{setField("spec.datacenterName", "europe-west4")},
			want: []string{"spec.datacenterName: datacenterName is immutable"},
		},
		{
			name: "ScyllaDBDatacenter: an unset datacenterName can be written out as the object's name",
			base: v1alpha1DatacenterBase,
			old:  []manifestEdit{removeField("spec.datacenterName")},
			new:  []manifestEdit{setField("spec.datacenterName", "analytics")},
		},
		{
			name: "ScyllaDBDatacenter: an unset datacenterName can't be set to another name",
			base: v1alpha1DatacenterBase,
			old:  []manifestEdit{removeField("spec.datacenterName")},
			new:  []manifestEdit{setField("spec.datacenterName", "europe-west1")},
			want: []string{"spec.datacenterName: datacenterName is immutable"},
		},
		{
			name: "ScyllaDBDatacenter: nodeService.type can't change",
			base: v1alpha1DatacenterBase,
			new:  []manifestEdit{setField("spec.exposeOptions.nodeService.type", "LoadBalancer")},
			want: []string{"spec.exposeOptions.nodeService.type: exposeOptions.nodeService.type is immutable"},
		},
		{
			name: "ScyllaDBDatacenter: adding a nodeService of another type than the default is a change",
			base: v1alpha1DatacenterBase,
			old:  []manifestEdit{removeField("spec.exposeOptions")},
			new: []manifestEdit{setField("spec.exposeOptions", `
nodeService: {type: LoadBalancer}
broadcastOptions: {nodes: {type: ServiceClusterIP}, clients: {type: ServiceClusterIP}}`)},
			want: []string{"spec.exposeOptions.nodeService.type: exposeOptions.nodeService.type is immutable"},
		},
		{
			name: "ScyllaDBDatacenter: writing out the default expose options is not a change",
			base: v1alpha1DatacenterBase,
			old:  []manifestEdit{removeField("spec.exposeOptions")},
			new: []manifestEdit{setField("spec.exposeOptions", `
nodeService: {type: ClusterIP}
broadcastOptions: {nodes: {type: ServiceClusterIP}, clients: {type: ServiceClusterIP}}`)},
		},
		{
			name: "ScyllaDBDatacenter: removing broadcastOptions changes the advertised node address",
			base: v1alpha1DatacenterBase,
			new:  []manifestEdit{removeField("spec.exposeOptions.broadcastOptions")},
			want: []string{"spec.exposeOptions.broadcastOptions.nodes.type: exposeOptions.broadcastOptions.nodes.type is immutable"},
		},
		{
			name: "ScyllaDBDatacenter: the client broadcast type can't change",
			base: v1alpha1DatacenterBase,
			new:  []manifestEdit{setField("spec.exposeOptions.broadcastOptions.clients.type", "PodIP")},
			want: []string{"spec.exposeOptions.broadcastOptions.clients.type: exposeOptions.broadcastOptions.clients.type is immutable"},
		},
		{
			name: "ScyllaDBDatacenter: switching between ServiceLoadBalancerIngress and its IP spelling is not a change",
			base: v1alpha1DatacenterBase,
			old: []manifestEdit{
				setField("spec.exposeOptions.nodeService.type", "LoadBalancer"),
				setField("spec.exposeOptions.broadcastOptions.clients.type", "ServiceLoadBalancerIngress"),
			},
			new: []manifestEdit{setField("spec.exposeOptions.broadcastOptions.clients.type", "ServiceLoadBalancerIngressIP")},
		},
		{
			name: "ScyllaDBDatacenter: a rack's storage can't change",
			base: v1alpha1DatacenterBase,
			new:  []manifestEdit{setField("spec.racks[1].scyllaDB.storage.capacity", "300Gi")},
			want: []string{"spec.racks[1].scyllaDB.storage: storage of an existing rack is immutable"},
		},
		{
			name: "ScyllaDBDatacenter: storage can't be added to an existing rack",
			base: v1alpha1DatacenterBase,
			new:  []manifestEdit{setField("spec.racks[0].scyllaDB", "{storage: {capacity: 100Gi}}")},
			want: []string{"spec.racks[0].scyllaDB.storage: storage of an existing rack is immutable"},
		},
		{
			name: "ScyllaDBDatacenter: storage can't be removed from an existing rack",
			base: v1alpha1DatacenterBase,
			new:  []manifestEdit{removeField("spec.racks[1].scyllaDB.storage")},
			want: []string{"spec.racks[1].scyllaDB.storage: storage of an existing rack is immutable"},
		},
		{
			name: "ScyllaDBDatacenter: the rack template's storage can't change",
			base: v1alpha1DatacenterBase,
			new:  []manifestEdit{setField("spec.rackTemplate.scyllaDB.storage.storageClassName", "fast")},
			want: []string{"spec.rackTemplate.scyllaDB.storage: rackTemplate.scyllaDB.storage is immutable"},
		},
		{
			name: "ScyllaDBDatacenter: a rack with nodes can't be removed",
			base: v1alpha1DatacenterBase,
			new:  []manifestEdit{removeField("spec.racks[1]")},
			want: []string{"spec.racks: a rack can only be removed after it has been scaled to 0 nodes"},
		},
		{
			name: "ScyllaDBDatacenter: a rack whose nodes come from the template can't be removed",
			base: v1alpha1DatacenterBase,
			new:  []manifestEdit{removeField("spec.racks[0]")},
			want: []string{"spec.racks: a rack can only be removed after it has been scaled to 0 nodes"},
		},
		{
			name: "ScyllaDBDatacenter: renaming a rack with nodes removes it",
			base: v1alpha1DatacenterBase,
			new:  []manifestEdit{setField("spec.racks[1].name", "c")},
			want: []string{"spec.racks: a rack can only be removed after it has been scaled to 0 nodes"},
		},
		{
			name: "ScyllaDBDatacenter: a rack scaled to 0 can be removed",
			base: v1alpha1DatacenterBase,
			old:  []manifestEdit{setField("spec.racks[1].nodes", "0")},
			new:  []manifestEdit{removeField("spec.racks[1]")},
		},
		{
			name: "ScyllaDBDatacenter: a rack that inherits 0 nodes can be removed",
			base: v1alpha1DatacenterBase,
			old:  []manifestEdit{setField("spec.rackTemplate.nodes", "0")},
			new:  []manifestEdit{removeField("spec.racks[0]")},
		},
		// ScyllaDBCluster
		{
			name: "ScyllaDBCluster: scaling and adding datacenters and racks is allowed",
			base: v1alpha1ClusterBase,
			new: []manifestEdit{
				setField("spec.datacenterTemplate.rackTemplate.nodes", "5"),
				setField("spec.datacenters[0].racks[1]", "{name: c, scyllaDB: {storage: {capacity: 100Gi}}}"),
				setField("spec.datacenters[1]", "{name: us-west-2, remoteKubernetesClusterName: dev-us-west-2, scyllaDB: {storage: {capacity: 2Ti}}}"),
			},
		},
		{
			name: "ScyllaDBCluster: clusterName can't change",
			base: v1alpha1ClusterBase,
			old:  []manifestEdit{setField("spec.clusterName", "dev")},
			new:  []manifestEdit{setField("spec.clusterName", "prod")},
			want: []string{"spec.clusterName: clusterName is immutable"},
		},
		{
			name: "ScyllaDBCluster: an unset clusterName can be written out as the object's name",
			base: v1alpha1ClusterBase,
			new:  []manifestEdit{setField("spec.clusterName", "dev")},
		},
		{
			name: "ScyllaDBCluster: an unset clusterName can't be set to another name",
			base: v1alpha1ClusterBase,
			new:  []manifestEdit{setField("spec.clusterName", "prod")},
			want: []string{"spec.clusterName: clusterName is immutable"},
		},
		{
			name: "ScyllaDBCluster: writing out the default Headless node Service is not a change",
			base: v1alpha1ClusterBase,
			new:  []manifestEdit{setField("spec.exposeOptions", "{nodeService: {type: Headless}, broadcastOptions: {nodes: {type: PodIP}, clients: {type: PodIP}}}")},
		},
		{
			name: "ScyllaDBCluster: adding a ClusterIP node Service changes the default Headless one",
			base: v1alpha1ClusterBase,
			new:  []manifestEdit{setField("spec.exposeOptions", "{nodeService: {type: ClusterIP}}")},
			want: []string{"spec.exposeOptions.nodeService.type: exposeOptions.nodeService.type is immutable"},
		},
		{
			name: "ScyllaDBCluster: the node broadcast type can't change",
			base: v1alpha1ClusterBase,
			old:  []manifestEdit{setField("spec.exposeOptions", "{nodeService: {type: LoadBalancer}}")},
			new:  []manifestEdit{setField("spec.exposeOptions.broadcastOptions", "{nodes: {type: ServiceLoadBalancerIngressIP}}")},
			want: []string{"spec.exposeOptions.broadcastOptions.nodes.type: exposeOptions.broadcastOptions.nodes.type is immutable"},
		},
		{
			name: "ScyllaDBCluster: the datacenter template's storage can't change",
			base: v1alpha1ClusterBase,
			new:  []manifestEdit{setField("spec.datacenterTemplate.scyllaDB.storage.capacity", "2Ti")},
			want: []string{"spec.datacenterTemplate.scyllaDB.storage: datacenterTemplate.scyllaDB.storage is immutable"},
		},
		{
			name: "ScyllaDBCluster: the datacenter template's rack template storage can't be removed",
			base: v1alpha1ClusterBase,
			new:  []manifestEdit{removeField("spec.datacenterTemplate.rackTemplate.scyllaDB")},
			want: []string{"spec.datacenterTemplate.rackTemplate.scyllaDB.storage: datacenterTemplate.rackTemplate.scyllaDB.storage is immutable"},
		},
		{
			name: "ScyllaDBCluster: storage can't be added to a template rack",
			base: v1alpha1ClusterBase,
			new:  []manifestEdit{setField("spec.datacenterTemplate.racks[0].scyllaDB", "{storage: {capacity: 1Ti}}")},
			want: []string{"spec.datacenterTemplate.racks[0].scyllaDB.storage: storage of an existing rack is immutable"},
		},
		{
			name: "ScyllaDBCluster: a datacenter's storage can't change",
			base: v1alpha1ClusterBase,
			new:  []manifestEdit{setField("spec.datacenters[0].scyllaDB.storage.capacity", "600Gi")},
			want: []string{"spec.datacenters[0].scyllaDB.storage: storage of an existing datacenter is immutable"},
		},
		{
			name: "ScyllaDBCluster: a datacenter's rack template storage can't change",
			base: v1alpha1ClusterBase,
			new:  []manifestEdit{setField("spec.datacenters[0].rackTemplate.scyllaDB.storage.storageClassName", "fast")},
			want: []string{"spec.datacenters[0].rackTemplate.scyllaDB.storage: rackTemplate storage of an existing datacenter is immutable"},
		},
		{
			name: "ScyllaDBCluster: a datacenter rack's storage can't change",
			base: v1alpha1ClusterBase,
			new:  []manifestEdit{setField("spec.datacenters[0].racks[0].scyllaDB.storage.capacity", "300Gi")},
			want: []string{"spec.datacenters[0].racks[0].scyllaDB.storage: storage of an existing rack is immutable"},
		},
		// ScyllaDBManagerTask
		{
			name: "ScyllaDBManagerTask: type can't change",
			base: v1alpha1BackupTaskBase,
			new: []manifestEdit{
				setField("spec.type", "Repair"),
				removeField("spec.backup"),
				setField("spec.repair", "{cron: '0 2 * * *'}"),
			},
			want: []string{"spec.type: type is immutable"},
		},
		{
			name: "ScyllaDBManagerTask: the schedule, locations and target can change",
			base: v1alpha1BackupTaskBase,
			new: []manifestEdit{
				setField("spec.backup.cron", "'@hourly'"),
				setField("spec.backup.location[1]", "europe-west1:gcs:analytics-backups-eu"),
				setField("spec.backup.retention", "14"),
				setField("spec.scyllaDBClusterRef", "{kind: ScyllaDBCluster, name: dev}"),
			},
		},
		// RemoteKubernetesCluster
		{
			name: "RemoteKubernetesCluster: the credentials and probe period can change",
			base: v1alpha1RemoteKubernetesClusterBase,
			new: []manifestEdit{
				setField("spec.kubeconfigSecretRef.name", "dev-us-east-1-kubeconfig-rotated"),
				setField("spec.clientHealthcheckProbes.periodSeconds", "15"),
			},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			oldManifest := applyManifestEdits(t, tc.base, tc.old)
			newManifest := applyManifestEdits(t, string(oldManifest), tc.new)
			// Each object must be valid on its own, so a rejection can only come from an update rule.
			for name, m := range map[string][]byte{"old": oldManifest, "new": newManifest} {
				if _, errs := v.ValidateCreate(context.Background(), m); len(errs) != 0 {
					t.Fatalf("the %s object is invalid on its own: %v\n%s", name, errs.ToAggregate(), m)
				}
			}

			_, errs := v.ValidateUpdate(context.Background(), oldManifest, newManifest)
			if len(tc.want) == 0 {
				if len(errs) != 0 {
					t.Fatalf("the update was rejected: %v", errs.ToAggregate())
				}
				return
			}
			var expectations []Expectation
			for _, w := range tc.want {
				path, message, ok := strings.Cut(w, ": ")
				if !ok {
					t.Fatalf("bad expectation %q", w)
				}
				expectations = append(expectations, Expectation{Path: path, Message: message})
			}
			checkExpectations(t, expectations, errs)
		})
	}
}

func TestV1alpha1DefaultsAreApplied(t *testing.T) {
	t.Parallel()

	v := newTestValidator(t)
	tt := []struct {
		name     string
		manifest string
		want     string
	}{
		{
			name: "ScyllaDBDatacenter: IP families, expose, listen and certificate defaults",
			manifest: `
apiVersion: scylla.scylladb.com/v1alpha1
kind: ScyllaDBDatacenter
metadata:
  name: minimal
spec:
  scyllaDB:
    image: docker.io/scylladb/scylla:2025.1.2
    alternatorOptions: {}
  scyllaDBManagerAgent:
    image: docker.io/scylladb/scylla-manager-agent:3.5.0
  exposeOptions:
    broadcastOptions:
      nodes:
        type: PodIP
        podIP: {}
    listenOptions: {}
`,
			want: `
apiVersion: scylla.scylladb.com/v1alpha1
kind: ScyllaDBDatacenter
metadata:
  name: minimal
  namespace: default
spec:
  scyllaDB:
    image: docker.io/scylladb/scylla:2025.1.2
    alternatorOptions:
      servingCertificate:
        type: OperatorManaged
  scyllaDBManagerAgent:
    image: docker.io/scylladb/scylla-manager-agent:3.5.0
  ipFamilyPolicy: SingleStack
  ipFamilies:
  - IPv4
  exposeOptions:
    nodeService:
      type: ClusterIP
    broadcastOptions:
      nodes:
        type: PodIP
        podIP:
          source: Status
      clients:
        type: PodIP
    listenOptions:
      nodes:
        type: Any
      clients:
        type: Any
`,
		},
		{
			name: "ScyllaDBCluster: the node Service is headless and nodes advertise Pod IPs",
			manifest: `
apiVersion: scylla.scylladb.com/v1alpha1
kind: ScyllaDBCluster
metadata:
  name: minimal
  namespace: scylla
spec:
  scyllaDB:
    image: docker.io/scylladb/scylla:2025.1.2
  scyllaDBManagerAgent:
    image: docker.io/scylladb/scylla-manager-agent:3.5.0
  exposeOptions:
    broadcastOptions: {}
  datacenters:
  - name: dc1
    remoteKubernetesClusterName: dc1
`,
			want: `
apiVersion: scylla.scylladb.com/v1alpha1
kind: ScyllaDBCluster
metadata:
  name: minimal
  namespace: scylla
spec:
  scyllaDB:
    image: docker.io/scylladb/scylla:2025.1.2
  scyllaDBManagerAgent:
    image: docker.io/scylladb/scylla-manager-agent:3.5.0
  exposeOptions:
    nodeService:
      type: Headless
    broadcastOptions:
      nodes:
        type: PodIP
      clients:
        type: PodIP
  datacenters:
  - name: dc1
    remoteKubernetesClusterName: dc1
`,
		},
		{
			name: "RemoteKubernetesCluster: the client is probed every 60 seconds",
			manifest: `
apiVersion: scylla.scylladb.com/v1alpha1
kind: RemoteKubernetesCluster
metadata:
  name: minimal
spec:
  kubeconfigSecretRef:
    name: kubeconfig
    namespace: credentials
`,
			want: `
apiVersion: scylla.scylladb.com/v1alpha1
kind: RemoteKubernetesCluster
metadata:
  name: minimal
spec:
  kubeconfigSecretRef:
    name: kubeconfig
    namespace: credentials
  clientHealthcheckProbes:
    periodSeconds: 60
`,
		},
		{
			name: "ScyllaDBManagerTask: nothing is defaulted, ScyllaDB Manager picks its own defaults",
			manifest: `
apiVersion: scylla.scylladb.com/v1alpha1
kind: ScyllaDBManagerTask
metadata:
  name: minimal
  namespace: scylla
spec:
  scyllaDBClusterRef:
    kind: ScyllaDBCluster
    name: dev
  type: Repair
  repair: {}
`,
			want: `
apiVersion: scylla.scylladb.com/v1alpha1
kind: ScyllaDBManagerTask
metadata:
  name: minimal
  namespace: scylla
spec:
  scyllaDBClusterRef:
    kind: ScyllaDBCluster
    name: dev
  type: Repair
  repair: {}
`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			got, errs := v.ValidateCreate(context.Background(), []byte(tc.manifest))
			if len(errs) != 0 {
				t.Fatalf("the manifest is invalid: %v", errs.ToAggregate())
			}
			want := map[string]interface{}{}
			if err := yaml.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			// Compare the JSON forms: YAML numbers decode as float64, defaulted ones are int64.
			gotJSON, err := got.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			gotObj := map[string]interface{}{}
			if err := yaml.Unmarshal(gotJSON, &gotObj); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, gotObj); diff != "" {
				t.Errorf("defaulted object differs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestV1alpha1ImageReferences(t *testing.T) {
	t.Parallel()

	v := newTestValidator(t)
	tt := []struct {
		image string
		valid bool
	}{
		{image: "docker.io/scylladb/scylla:2025.1.2", valid: true},
		{image: "scylladb/scylla-enterprise:2024.1.12", valid: true},
		{image: "scylla", valid: true},
		{image: "registry.example.com:5000/mirror/scylladb/scylla:2025.1.2-rc1", valid: true},
		{image: "docker.io/scylladb/scylla@sha256:" + strings.Repeat("ab", 32), valid: true},
		{image: "localhost:5000/scylla:6.2@sha256:" + strings.Repeat("0f", 32), valid: true},
		{image: "docker.io/ScyllaDB/scylla:2025.1.2", valid: false},
		{image: "docker.io/scylladb/scylla 2025.1.2", valid: false},
		{image: "docker.io/scylladb/scylla:", valid: false},
		{image: "docker.io/scylladb/scylla@sha256:abc", valid: false},
		{image: "https://docker.io/scylladb/scylla", valid: false},
	}
	for _, tc := range tt {
		t.Run(tc.image, func(t *testing.T) {
			t.Parallel()

			manifest := applyManifestEdits(t, v1alpha1DatacenterBase, []manifestEdit{setField("spec.scyllaDB.image", strconv.Quote(tc.image))})
			_, errs := v.ValidateCreate(context.Background(), manifest)
			if tc.valid {
				if len(errs) != 0 {
					t.Fatalf("the image was rejected: %v", errs.ToAggregate())
				}
				return
			}
			checkExpectations(t, []Expectation{{Path: "spec.scyllaDB.image", Message: "image must be a container image reference"}}, errs)
		})
	}
}
