package scylladbdatacenter

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// basicCreates are the writes of the first sync of newBasicSDC, in order.
var basicCreates = []string{
	"create serviceaccounts basic-member",
	"create rolebindings basic-member",
	"create configmaps basic-managed-config",
	"create secrets basic-auth-token",
	"create services basic-client",
	"create services basic-dc1-a-0",
	"create services basic-dc1-a-1",
	"create services basic-dc1-a-2",
	"create services basic-dc1-b-0",
	"create services basic-dc1-b-1",
	"create services basic-dc1-b-2",
	"create statefulsets basic-dc1-a",
	"create statefulsets basic-dc1-b",
	"create poddisruptionbudgets basic",
	"apply scylladbdatacenters/status basic",
}

// convergedWorld returns the world after newBasicSDC's first sync.
func convergedWorld(t *testing.T) world {
	t.Helper()
	f := newFixture(t, world{sdc: newBasicSDC()})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	return f.world()
}

func TestSyncCreatesEverythingThenWritesNothing(t *testing.T) {
	t.Parallel()

	f := newFixture(t, world{sdc: newBasicSDC()})
	if err := f.sync(); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if diff := cmp.Diff(basicCreates, f.writes()); diff != "" {
		t.Errorf("unexpected writes of the first sync (-want +got):\n%s", diff)
	}

	second := newFixture(t, f.world())
	if err := second.sync(); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if diff := cmp.Diff([]string(nil), second.writes()); diff != "" {
		t.Errorf("the second sync wrote (-want +got):\n%s", diff)
	}
	if events := second.events(); len(events) != 0 {
		t.Errorf("the second sync recorded events: %q", events)
	}
}

func TestSyncIgnoresMissingAndDeletedDatacenters(t *testing.T) {
	t.Parallel()

	deleting := newBasicSDC()
	deleting.DeletionTimestamp = new(testNow)
	f := newFixture(t, world{sdc: deleting})
	if err := f.sync(); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if diff := cmp.Diff([]string(nil), f.writes()); diff != "" {
		t.Errorf("a datacenter being deleted got writes (-want +got):\n%s", diff)
	}

	if err := f.controller.sync(t.Context(), testNamespace+"/gone"); err != nil {
		t.Fatalf("unexpected error for a missing datacenter: %v", err)
	}
	if err := f.controller.sync(t.Context(), "a/b/c"); err != nil {
		t.Fatalf("unexpected error for an invalid key: %v", err)
	}
}

func TestSyncKeepsWhatOtherActorsAddAndRollsOnChanges(t *testing.T) {
	t.Parallel()

	w := withNodes(convergedWorld(t))
	object[*appsv1.StatefulSet](t, w, "basic-dc1-a").Labels["team"] = "db"
	object[*corev1.Service](t, w, "basic-dc1-a-0").Annotations["internal.scylla-operator.scylladb.com/host-id"] = "host-a-0"
	w, _ = step(t, "foreign label and annotation", w)

	tt := []struct {
		name   string
		modify func(sdc *scyllav1alpha1.ScyllaDBDatacenter)
		check  func(t *testing.T, template *corev1.PodTemplateSpec)
	}{
		{
			name: "a version change",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ScyllaDB.Image = "docker.io/scylladb/scylla:2026.2.1"
			},
			check: func(t *testing.T, template *corev1.PodTemplateSpec) {
				if got := template.Spec.Containers[0].Image; got != "docker.io/scylladb/scylla:2026.2.1" {
					t.Errorf("unexpected image %q", got)
				}
			},
		},
		{
			name: "a forceRedeploymentReason",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ForceRedeploymentReason = new("now")
			},
			check: func(t *testing.T, template *corev1.PodTemplateSpec) {
				if got := template.Annotations["scylla-operator.scylladb.com/force-redeployment-reason"]; got != "now" {
					t.Errorf("unexpected force-redeployment-reason annotation %q", got)
				}
			},
		},
		{
			name: "a managed config change",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/alternator-insecure-enable-http": "true"}
				sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{}
			},
			check: func(t *testing.T, template *corev1.PodTemplateSpec) {
				old := object[*appsv1.StatefulSet](t, w, "basic-dc1-a").Spec.Template.Annotations["scylla-operator.scylladb.com/managed-config-hash"]
				if got := template.Annotations["scylla-operator.scylladb.com/managed-config-hash"]; got == old {
					t.Errorf("the managed config hash did not change: %q", got)
				}
			},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			changed := world{sdc: w.sdc.DeepCopy(), objects: w.objects}
			tc.modify(changed.sdc)
			changed.sdc.Generation++
			f := newFixture(t, changed)
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			writes := slices.DeleteFunc(f.kubeWrites(), func(w string) bool {
				return strings.HasPrefix(w, "update configmaps ") || strings.HasPrefix(w, "update services ")
			})
			if diff := cmp.Diff([]string{"update statefulsets basic-dc1-a", "update statefulsets basic-dc1-b"}, writes); diff != "" {
				t.Fatalf("unexpected writes (-want +got):\n%s", diff)
			}
			sts := f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet)
			if sts.Labels["team"] != "db" {
				t.Errorf("the label another actor added is gone: %v", sts.Labels)
			}
			tc.check(t, &sts.Spec.Template)
			// Rack a rolls; rack b gets the new template but holds every pod at the old one until rack a is done.
			checkRollout(t, sts, 0)
			held := f.written("statefulsets", "basic-dc1-b").(*appsv1.StatefulSet)
			tc.check(t, &held.Spec.Template)
			checkRollout(t, held, 3)
		})
	}
}

func TestSyncAuthTokenPrecedence(t *testing.T) {
	t.Parallel()

	secret := func(name, key, data string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name},
			Data:       map[string][]byte{key: []byte(data)},
		}
	}
	withCustomConfig := func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
		sdc.Spec.Racks[1].ScyllaDBManagerAgent = &scyllav1alpha1.ScyllaDBManagerAgentTemplate{CustomConfigSecretRef: new("agent-config")}
	}
	withOverride := func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
		sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/scylladb-manager-agent-auth-token-override-secret-ref": "cluster-token"}
	}

	tt := []struct {
		name      string
		modify    func(sdc *scyllav1alpha1.ScyllaDBDatacenter)
		objects   []runtime.Object
		wantToken string
		wantErr   string
	}{
		{
			name:      "a new token is generated",
			wantToken: testToken,
		},
		{
			name:      "the custom agent config's token wins over the override",
			modify:    func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { withCustomConfig(sdc); withOverride(sdc) },
			objects:   []runtime.Object{secret("agent-config", "scylla-manager-agent.yaml", "auth_token: custom\n"), secret("cluster-token", "auth-token.yaml", "auth_token: cluster\n")},
			wantToken: "custom",
		},
		{
			name:      "a custom agent config without a token leaves it to the override",
			modify:    func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { withCustomConfig(sdc); withOverride(sdc) },
			objects:   []runtime.Object{secret("agent-config", "scylla-manager-agent.yaml", "s3: {}\n"), secret("cluster-token", "auth-token.yaml", "auth_token: cluster\n")},
			wantToken: "cluster",
		},
		{
			name:    "a missing override Secret is an error that is retried",
			modify:  withOverride,
			wantErr: `SecretController: can't get the agent auth-token Secret "cluster-token" named by annotation "internal.scylla-operator.scylladb.com/scylladb-manager-agent-auth-token-override-secret-ref": secrets "cluster-token" not found`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sdc := newBasicSDC()
			if tc.modify != nil {
				tc.modify(sdc)
			}
			f := newFixture(t, world{sdc: sdc, objects: tc.objects})
			err := f.sync()
			if len(tc.wantErr) != 0 {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("expected error %q, got %v", tc.wantErr, err)
				}
				// Nothing that needs the token is created, the rest is.
				if diff := cmp.Diff(slices.DeleteFunc(slices.Clone(basicCreates), func(w string) bool {
					return strings.HasPrefix(w, "create secrets ") || strings.HasPrefix(w, "create statefulsets ")
				}), f.writes()); diff != "" {
					t.Errorf("unexpected writes (-want +got):\n%s", diff)
				}
				status := f.written("scylladbdatacenters", "basic").(*scyllav1alpha1.ScyllaDBDatacenter).Status
				if c := meta.FindStatusCondition(status.Conditions, "Degraded"); c == nil || c.Status != metav1.ConditionTrue || c.Reason != "Error" {
					t.Errorf("expected Degraded to be True with reason Error, got %+v", c)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := scyllaagent.AuthTokenFromConfig(f.written("secrets", "basic-auth-token").(*corev1.Secret).Data["auth-token.yaml"])
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.wantToken {
				t.Errorf("expected token %q, got %q", tc.wantToken, got)
			}
		})
	}
}

func TestSyncKeepsTheExistingTokenAndRollsAgentsWhenItChanges(t *testing.T) {
	t.Parallel()

	w := convergedWorld(t)
	_, _ = step(t, "existing token kept", w)

	// A ScyllaDBCluster takes over the token: the Secret gets it and the pods roll.
	w.sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/scylladb-manager-agent-auth-token-override-secret-ref": "cluster-token"}
	w.objects = append(w.objects, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "cluster-token"},
		Data:       map[string][]byte{"auth-token.yaml": []byte("auth_token: cluster\n")},
	})
	_, f := step(t, "override", w, "update secrets basic-auth-token", "update statefulsets basic-dc1-a", "update statefulsets basic-dc1-b")
	for _, e := range f.events() {
		if strings.Contains(e, "cluster") && !strings.Contains(e, "cluster-token") {
			t.Errorf("an event may leak the token: %q", e)
		}
	}
}

func TestSyncRemovesARackOnlyAtZeroNodes(t *testing.T) {
	t.Parallel()

	w := withNodes(convergedWorld(t))
	w.sdc.Spec.Racks = w.sdc.Spec.Racks[:1]
	w.sdc.Generation++

	f := syncSpecError(t, w, `StatefulSetControllerDegraded: rack "b" was removed from spec.racks while its StatefulSet "basic-dc1-b" still runs 3 nodes: `+
		`add the rack back with nodes: 0, wait until its nodes are decommissioned, then remove it`)
	if diff := cmp.Diff([]string{"apply scylladbdatacenters/status basic"}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}

	// Once its StatefulSet runs no node, the rack goes.
	sts := object[*appsv1.StatefulSet](t, w, "basic-dc1-b")
	sts.Spec.Replicas = new(int32(0))
	settle(sts)
	for _, name := range []string{"basic-dc1-b-0", "basic-dc1-b-1", "basic-dc1-b-2"} {
		w = without[*corev1.Pod](w, name)
		w = without[*corev1.Service](w, name)
	}
	_, f = step(t, "rack at zero", w, "update configmaps basic-managed-config", "delete statefulsets basic-dc1-b")
	f.checkDegraded("")
}

func TestSyncKeepsKubectlRolloutRestart(t *testing.T) {
	t.Parallel()

	const restartedAt = "kubectl.kubernetes.io/restartedAt"
	w := withNodes(convergedWorld(t))
	// kubectl rollout restart sets the annotation on the pod template of every StatefulSet.
	for _, name := range []string{"basic-dc1-a", "basic-dc1-b"} {
		object[*appsv1.StatefulSet](t, w, name).Spec.Template.Annotations[restartedAt] = "2026-01-02T03:04:05Z"
	}
	w, _ = step(t, "restarted by kubectl", w, "update statefulsets basic-dc1-a", "update statefulsets basic-dc1-b")
	w, _ = step(t, "steady", w)

	w.sdc.Spec.ScyllaDB.Image = "docker.io/scylladb/scylla:2026.2.1"
	w.sdc.Generation++
	f := newFixture(t, w)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"basic-dc1-a", "basic-dc1-b"} {
		sts := f.written("statefulsets", name).(*appsv1.StatefulSet)
		if got := sts.Spec.Template.Annotations[restartedAt]; got != "2026-01-02T03:04:05Z" {
			t.Errorf("StatefulSet %s lost the restart annotation: %q", name, got)
		}
	}
}

func TestSyncReportsAlternatorItCannotServe(t *testing.T) {
	t.Parallel()

	sdc := newBasicSDC()
	sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{}
	f := syncSpecError(t, world{sdc: sdc}, `ConfigMapControllerDegraded: spec.scyllaDB.alternatorOptions: Alternator serves HTTPS only and its `+
		`servingCertificate is OperatorManaged, but the operator issues no certificates: automatic TLS is off (--automatic-tls=false). `+
		`Turn automatic TLS on, use a UserManaged certificate from a kubernetes.io/tls Secret (servingCertificate.userManagedOptions.secretName), `+
		`or set insecureEnableHTTP (ScyllaCluster spec.alternator.insecureEnableHTTP, or annotation `+
		`"internal.scylla-operator.scylladb.com/alternator-insecure-enable-http": "true") to serve plain HTTP. Alternator stays off until then`)
	// Everything else is created, without Alternator.
	if diff := cmp.Diff(basicCreates, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	for _, port := range f.written("services", "basic-client").(*corev1.Service).Spec.Ports {
		if strings.HasPrefix(port.Name, "alternator") {
			t.Errorf("the client Service exposes Alternator: %+v", port)
		}
	}
}

// TestSyncDoesNotActOnASpecTheWebhookWouldRefuse: a seed the sidecar would refuse is refused by
// validation.ValidateScyllaDBDatacenter, as the admission webhook does; an object created while the webhook was down
// only gets its status written.
func TestSyncDoesNotActOnASpecTheWebhookWouldRefuse(t *testing.T) {
	t.Parallel()

	w := withNodes(convergedWorld(t))
	w.sdc.Spec.ScyllaDB.ExternalSeeds = []string{"10.0.0.1:7000"}
	w.sdc.Generation++
	f := syncSpecError(t, w, `SpecValidationDegraded: spec.scyllaDB.externalSeeds[0]: Invalid value: "10.0.0.1:7000": "10.0.0.1:7000" is neither an IP address nor a DNS name`)
	// The running pods are left alone rather than rolled into a crash loop.
	if diff := cmp.Diff([]string{"apply scylladbdatacenters/status basic"}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	status := f.written("scylladbdatacenters", f.sdcName()).(*scyllav1alpha1.ScyllaDBDatacenter).Status
	if c := meta.FindStatusCondition(status.Conditions, "Progressing"); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("want Progressing False: nothing happens until the spec changes, got %+v", c)
	}
	if c := meta.FindStatusCondition(status.Conditions, "Degraded"); c == nil || c.Reason != invalidSpecReason {
		t.Errorf("want Degraded with reason %s, got %+v", invalidSpecReason, c)
	}
}

// checkRollout fails t unless sts rolls its pods with partition (0: all of them).
func checkRollout(t *testing.T, sts *appsv1.StatefulSet, partition int32) {
	t.Helper()
	if sts.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType {
		t.Errorf("StatefulSet %s: unexpected update strategy %q", sts.Name, sts.Spec.UpdateStrategy.Type)
	}
	var got int32
	if r := sts.Spec.UpdateStrategy.RollingUpdate; r != nil && r.Partition != nil {
		got = *r.Partition
	}
	if got != partition {
		t.Errorf("StatefulSet %s: expected partition %d, got %d", sts.Name, partition, got)
	}
}

// BenchmarkSyncAtRest measures one sync of a converged datacenter that has nothing to write: three racks of three
// ready nodes, with automatic TLS on as the operator runs by default. It is what most of the syncs of a cluster at
// rest cost. The controller keeps its memory (certificate decisions) from one sync to the next, as it does running,
// and the objects carry UIDs and resourceVersions, as the API server's do.
func BenchmarkSyncAtRest(b *testing.B) {
	sdc := newBasicSDC()
	sdc.Spec.Racks = []scyllav1alpha1.RackSpec{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	f := newTLSFixture(b, world{sdc: sdc})
	if err := f.sync(); err != nil {
		b.Fatal(err)
	}
	w := withNodes(f.world())
	// Each round's writes reach the caches of the next round's fixture only; a fixture whose sync wrote nothing is
	// at rest.
	for round := 0; ; round++ {
		if round == 5 {
			b.Fatalf("the datacenter does not come to rest; the last sync wrote %q", f.writes())
		}
		f = newTLSFixture(b, w)
		if err := f.sync(); err != nil {
			b.Fatal(err)
		}
		if len(f.writes()) == 0 {
			break
		}
		w = f.world()
	}
	for _, c := range []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue}, {Type: "Progressing", Status: metav1.ConditionFalse}} {
		if got := meta.FindStatusCondition(w.sdc.Status.Conditions, c.Type); got == nil || got.Status != c.Status {
			b.Fatalf("the datacenter at rest must be %s %s, got %+v", c.Type, c.Status, got)
		}
	}
	f = newTLSFixture(b, withServerFields(w))
	for range 2 {
		// The first sync remembers the certificate objects as applied.
		if err := f.sync(); err != nil {
			b.Fatal(err)
		}
	}
	if writes := f.writes(); len(writes) != 0 {
		b.Fatalf("a sync at rest wrote %q", writes)
	}
	f.kubeClient.ClearActions()
	f.scyllaClient.ClearActions()

	for b.Loop() {
		if err := f.sync(); err != nil {
			b.Fatal(err)
		}
	}
	if writes := f.writes(); len(writes) != 0 {
		b.Fatalf("a sync at rest wrote %q", writes)
	}
}

func TestMembersAreMatchedToTheRackWhoseStatefulSetNamesThem(t *testing.T) {
	t.Parallel()

	racks := []*rackObjects{{name: "a", statefulSetName: "basic-dc1-a"}, {name: "a-1", statefulSetName: "basic-dc1-a-1"}}
	tt := []struct {
		name        string
		wantRack    string
		wantOrdinal int32
	}{
		{name: "basic-dc1-a-0", wantRack: "a", wantOrdinal: 0},
		{name: "basic-dc1-a-1", wantRack: "a", wantOrdinal: 1},
		{name: "basic-dc1-a-1-0", wantRack: "a-1", wantOrdinal: 0},
		{name: "basic-dc1-a-1-12", wantRack: "a-1", wantOrdinal: 12},
		{name: "basic-dc1-a-01"},
		{name: "basic-dc1-b-0"},
		{name: "basic-client"},
		{name: "basic-dc1-a--1"},
	}
	// One matcher for every name, as collectRacks uses it.
	members := newMemberMatcher(racks)
	for _, tc := range tt {
		r, ordinal, ok := members.rackOf(tc.name)
		var gotRack string
		if ok {
			gotRack = r.name
		}
		if gotRack != tc.wantRack || ordinal != tc.wantOrdinal {
			t.Errorf("%s: got rack %q ordinal %d, want rack %q ordinal %d", tc.name, gotRack, ordinal, tc.wantRack, tc.wantOrdinal)
		}
		if _, wantOK := memberOrdinal(racks[0].statefulSetName, tc.name); wantOK && gotRack != "a" {
			t.Errorf("%s: memberOrdinal puts it in rack a, the matcher in %q", tc.name, gotRack)
		}
	}
}
