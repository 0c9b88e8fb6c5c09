package scylladbcluster

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMakeSeedServiceAndEndpointSlices(t *testing.T) {
	t.Parallel()
	sc := newBasicScyllaDBCluster()
	dc := &sc.Spec.Datacenters[1]
	s := seedService{datacenterName: "dc1", name: naming.ScyllaDBClusterSeedServiceName("basic", "dc1"), addresses: []string{"10.0.0.2", "10.0.0.1", "fd00::1"}}

	svc, err := makeSeedService(sc, dc, s)
	if err != nil {
		t.Fatal(err)
	}
	if svc.Namespace != naming.ScyllaDBClusterRemoteNamespaceName(testNamespace, "dc2") || svc.Name != "basic-dc1-seed" {
		t.Errorf("seed Service %s/%s, want basic-dc1-seed in dc2's remote namespace", svc.Namespace, svc.Name)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Selector != nil || svc.Spec.Ports[0].Port != 7000 {
		t.Errorf("want a headless, selector-less Service on the inter-node port, got %+v", svc.Spec)
	}
	if diff := cmp.Diff(naming.ScyllaDBClusterRemoteLabels(testNamespace, "basic", "dc2"), svc.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}

	slices, err := makeSeedEndpointSlices(sc, dc, s, map[string]bool{"10.0.0.1": true, "10.0.0.2": false})
	if err != nil {
		t.Fatal(err)
	}
	type ep struct {
		Address string
		Ready   bool
	}
	got := map[string][]ep{}
	for _, slice := range slices {
		if slice.Labels[discoveryv1.LabelServiceName] != s.name || slice.Labels[discoveryv1.LabelManagedBy] != naming.EndpointSliceManagedByValue {
			t.Errorf("slice %s labels %v", slice.Name, slice.Labels)
		}
		for _, e := range slice.Endpoints {
			got[slice.Name+" "+string(slice.AddressType)] = append(got[slice.Name+" "+string(slice.AddressType)], ep{e.Addresses[0], *e.Conditions.Ready})
		}
	}
	want := map[string][]ep{
		"basic-dc1-seed-ipv4 IPv4": {{"10.0.0.1", true}, {"10.0.0.2", false}},
		// An address the readiness map does not know is taken as ready.
		"basic-dc1-seed-ipv6 IPv6": {{"fd00::1", true}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("endpoints by slice (-want +got):\n%s", diff)
	}

	if _, err := makeSeedEndpointSlices(sc, dc, seedService{name: "x", addresses: []string{"lb.example.com"}}, nil); err == nil || !strings.Contains(err.Error(), `"lb.example.com" is not an IP address`) {
		t.Errorf("want a hostname refused, got %v", err)
	}
	invalid := sc.DeepCopy()
	invalid.Spec.ScyllaDB.Image = ""
	if _, err := makeSeedService(invalid, &invalid.Spec.Datacenters[1], s); err == nil {
		t.Error("a seed Service was built for an invalid ScyllaDBCluster")
	}
}

func TestMakeClientServiceIsControlledByTheScyllaDBCluster(t *testing.T) {
	t.Parallel()
	sc := newBasicScyllaDBCluster()
	sc.UID = "sc-uid"
	svc := makeClientService(sc)
	if svc.Name != naming.ScyllaDBClusterClientServiceName("basic") || svc.Namespace != testNamespace {
		t.Errorf("client Service %s/%s", svc.Namespace, svc.Name)
	}
	if ref := metav1.GetControllerOf(svc); ref == nil || ref.UID != "sc-uid" || ref.Kind != "ScyllaDBCluster" {
		t.Errorf("want the ScyllaDBCluster as controller, got %+v", ref)
	}
	var ports []int32
	for _, p := range svc.Spec.Ports {
		ports = append(ports, p.Port)
	}
	if diff := cmp.Diff([]int32{9042, 10001}, ports); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	slices, err := makeClientEndpointSlices(sc, "dc1", []endpoint{{"10.0.0.1", true}, {"10.0.0.1", true}, {"fd00::1", true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(slices) != 2 || len(slices[0].Endpoints) != 1 || metav1.GetControllerOf(slices[0]) == nil {
		t.Fatalf("want one controlled slice per family, the IPv4 one with one endpoint, got %+v", slices)
	}
	for _, slice := range slices {
		if want := naming.ScyllaDBClusterClientEndpointSliceName("basic", "dc1", slice.AddressType); slice.Name != want {
			t.Errorf("want the %s slice named %q, got %q", slice.AddressType, want, slice.Name)
		}
		if slice.Labels[naming.ScyllaDBClusterDatacenterNameLabel] != "dc1" || slice.Labels[discoveryv1.LabelServiceName] != svc.Name {
			t.Errorf("want the %s slice labelled with its datacenter and Service, got %v", slice.AddressType, slice.Labels)
		}
	}
	if slices, _ := makeClientEndpointSlices(sc, "dc1", nil); len(slices) != 0 {
		t.Errorf("want no slice without endpoints, got %d", len(slices))
	}
}

func TestReferencedObjects(t *testing.T) {
	t.Parallel()
	sdc := &scyllav1alpha1.ScyllaDBDatacenter{Spec: scyllav1alpha1.ScyllaDBDatacenterSpec{
		RackTemplate: &scyllav1alpha1.RackTemplate{
			ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{
				CustomConfigMapRef: new("scylla-config"),
				Volumes: []corev1.Volume{
					{Name: "a", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "maybe"}, Optional: new(true)}}},
					{Name: "b", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
						{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "projected"}}},
						{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "maybe"}}},
					}}}},
				},
			},
		},
		Racks: []scyllav1alpha1.RackSpec{{Name: "a", RackTemplate: scyllav1alpha1.RackTemplate{
			ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgentTemplate{
				CustomConfigSecretRef: new("agent-config"),
				Volumes:               []corev1.Volume{{Name: "c", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "optional-secret", Optional: new(true)}}}},
			},
		}}},
	}}
	refs := referencedObjects(sdc)
	// "maybe" is optional in one reference and required in another: required wins.
	if diff := cmp.Diff(map[string]bool{"scylla-config": false, "maybe": false}, refs.configMaps); diff != "" {
		t.Errorf("ConfigMaps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{"projected": false, "agent-config": false, "optional-secret": true}, refs.secrets); diff != "" {
		t.Errorf("Secrets (-want +got):\n%s", diff)
	}
}

func TestRemoteCopiesKeepDataTypeAndName(t *testing.T) {
	t.Parallel()
	sc := newBasicScyllaDBCluster()
	dc := &sc.Spec.Datacenters[0]
	secret, err := makeRemoteSecret(sc, dc, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "tls", Labels: map[string]string{"user": "label"}, UID: "u"},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": []byte("c")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if secret.Name != "tls" || secret.Namespace != naming.ScyllaDBClusterRemoteNamespaceName(testNamespace, "dc1") || secret.Type != corev1.SecretTypeTLS ||
		string(secret.Data["tls.crt"]) != "c" || secret.UID != "" || secret.Labels["user"] != "" {
		t.Errorf("unexpected copy %+v", secret)
	}
	cm, err := makeRemoteConfigMap(sc, dc, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "conf"}, Data: map[string]string{"k": "v"}, BinaryData: map[string][]byte{"b": {1}}})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["k"] != "v" || cm.BinaryData["b"][0] != 1 || cm.Labels[naming.ParentScyllaDBClusterDatacenterNameLabel] != "dc1" {
		t.Errorf("unexpected copy %+v", cm)
	}
}
