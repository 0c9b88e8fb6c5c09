package sidecar

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaclient"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
)

type controllerFixture struct {
	kube       *fake.Clientset
	controller *MemberServiceController
	markerPath string
	restart    *Restart
}

func newControllerFixture(t *testing.T, svc *corev1.Service, scylla *scyllaclient.Client, dataDir string, scyllaDBRunning bool) *controllerFixture {
	t.Helper()
	f, factory := newUnstartedControllerFixture(t, fake.NewClientset(svc), svc, scylla, dataDir, scyllaDBRunning)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		factory.Shutdown()
	})
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return f
}

// newUnstartedControllerFixture returns a fixture on kube whose informer is not started: its cache holds what the
// test puts in it, and the factory is the caller's to start.
func newUnstartedControllerFixture(t *testing.T, kube *fake.Clientset, svc *corev1.Service, scylla *scyllaclient.Client, dataDir string, scyllaDBRunning bool) (*controllerFixture, informers.SharedInformerFactory) {
	t.Helper()
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(svc.Namespace))
	informer := factory.Core().V1().Services()
	restart := NewRestart()
	decommissioned := &atomic.Bool{}
	decommissioned.Store(!scyllaDBRunning)
	c, err := NewMemberServiceController(kube, informer, MemberServiceControllerConfig{
		Namespace:          svc.Namespace,
		Name:               svc.Name,
		Scylla:             scylla,
		DecommissionScylla: scylla,
		DataDir:            dataDir,
		Decommissioned:     decommissioned,
		BroadcastAddress:   "10.96.0.1",
		PodUID:             "uid-1",
		PollInterval:       5 * time.Millisecond,
		RetryCap:           20 * time.Millisecond,
		// The node broadcasts the Service's ClusterIP, 10.96.0.1 in memberServiceWithLabels.
		AddressOptions: AddressOptions{
			BroadcastNodes:   BroadcastOptions{Type: BroadcastServiceClusterIP},
			BroadcastClients: BroadcastOptions{Type: BroadcastServiceClusterIP},
			ListenNodes:      ListenOptions{Type: ListenAny},
			ListenClients:    ListenOptions{Type: ListenAny},
			IPFamily:         IPv4,
		},
		Addresses: Addresses{BroadcastAddress: "10.96.0.1", BroadcastRPCAddress: "10.96.0.1", ListenAddress: "0.0.0.0", RPCAddress: "0.0.0.0"},
		Restart:   restart,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &controllerFixture{kube: kube, controller: c, markerPath: filepath.Join(dataDir, decommissionedMarkerFileName), restart: restart}, factory
}

// waitForLister waits until the informer's copy of the Service satisfies cond.
func (f *controllerFixture) waitForLister(t *testing.T, cond func(*corev1.Service) bool) {
	t.Helper()
	for {
		svc, err := f.controller.lister.Services(f.controller.Namespace).Get(f.controller.Name)
		if err == nil && cond(svc) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (f *controllerFixture) writes() []string {
	var out []string
	for _, a := range f.kube.Actions() {
		if a.GetVerb() == "patch" {
			out = append(out, a.GetVerb()+" "+string(a.(k8stesting.PatchAction).GetPatch()))
		}
	}
	return out
}

func memberServiceWithLabels(labels map[string]string) *corev1.Service {
	svc := makeService(selfName, clusterIPService, baseTime, []string{"10.96.0.1"}, nil)
	svc.Labels = labels
	return svc
}

// hostIDPatch is the controller's write that records hostID.
func hostIDPatch(hostID string) string {
	return `patch {"metadata":{"annotations":{"internal.scylla-operator.scylladb.com/host-id":"` + hostID + `"}}}`
}

// checkWrites compares the fixture's writes with want.
func (f *controllerFixture) checkWrites(t *testing.T, want ...string) {
	t.Helper()
	if diff := cmp.Diff(want, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
}

const recordBroadcastAddressPatch = `patch {"metadata":{"annotations":{"internal.scylla-operator.scylladb.com/broadcast-address":"10.96.0.1","internal.scylla-operator.scylladb.com/broadcast-address-pod-uid":"uid-1"}}}`

func TestMemberServiceControllerRecordsBroadcastAddressAndHostIDOnce(t *testing.T) {
	t.Parallel()
	n := startInProcessNode(t, fakescylladb.Knobs{})
	f := newControllerFixture(t, memberServiceWithLabels(nil), n.client, t.TempDir(), true)
	ctx := context.Background()

	if _, err := f.controller.sync(ctx); err != nil {
		t.Fatal(err)
	}
	f.checkWrites(t, recordBroadcastAddressPatch, hostIDPatch(n.node.HostID()))

	f.waitForLister(t, func(s *corev1.Service) bool { return s.Annotations[naming.HostIDAnnotation] == n.node.HostID() })
	f.kube.ClearActions()
	if _, err := f.controller.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.writes(); len(got) != 0 {
		t.Errorf("a steady-state sync wrote %v", got)
	}
}

// TestMemberServiceControllerDoesNotWriteAgainWhatTheCacheDoesNotShowYet syncs again before the informer shows the
// first sync's writes, as a sync queued by the event of the first write, by a retry or by another writer's change
// does: nothing is written again. A later version of the Service without the records (someone removed them, or the
// Service was deleted and created again) gets them again.
func TestMemberServiceControllerDoesNotWriteAgainWhatTheCacheDoesNotShowYet(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	stub := newStubScyllaDB(t, dataDir)
	const hostID = "3f1c2a9e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"
	svc := memberServiceWithLabels(nil)
	svc.UID, svc.ResourceVersion = "svc-uid-1", "10"
	kube := fake.NewClientset(svc)
	// The fake API server keeps the resource version an object was stored with; a real one gives every write a new,
	// larger one.
	var resourceVersion atomic.Int64
	resourceVersion.Store(10)
	kube.PrependReactor("patch", "services", func(action k8stesting.Action) (bool, runtime.Object, error) {
		_, obj, err := k8stesting.ObjectReaction(kube.Tracker())(action)
		if err != nil {
			return true, nil, err
		}
		patched := obj.(*corev1.Service)
		patched.ResourceVersion = strconv.FormatInt(resourceVersion.Add(1), 10)
		return true, patched, kube.Tracker().Update(action.GetResource(), patched, patched.Namespace)
	})
	f, factory := newUnstartedControllerFixture(t, kube, svc, stub.client, dataDir, true)
	// The informer is never started: the test says what its cache holds.
	indexer := factory.Core().V1().Services().Informer().GetIndexer()
	cache := func(s *corev1.Service) {
		t.Helper()
		if err := indexer.Update(s); err != nil {
			t.Fatal(err)
		}
	}
	stored := func() *corev1.Service {
		t.Helper()
		s, err := kube.CoreV1().Services(svc.Namespace).Get(context.Background(), svc.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	syncAndCheck := func(what string, want ...string) {
		t.Helper()
		kube.ClearActions()
		if _, err := f.controller.sync(context.Background()); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if diff := cmp.Diff(want, f.writes()); diff != "" {
			t.Errorf("%s: unexpected writes (-want +got):\n%s", what, diff)
		}
	}

	cache(svc)
	syncAndCheck("the first sync", recordBroadcastAddressPatch, hostIDPatch(hostID))
	syncAndCheck("a sync before the cache shows the writes")
	firstWrite := svc.DeepCopy()
	firstWrite.ResourceVersion = "11"
	firstWrite.Annotations = map[string]string{naming.BroadcastAddressAnnotation: "10.96.0.1", naming.BroadcastAddressPodUIDAnnotation: "uid-1"}
	cache(firstWrite)
	syncAndCheck("a sync whose cache shows the first write only")
	cache(stored())
	syncAndCheck("a sync whose cache shows both writes")

	// Another writer's version of the Service, stored and then seen by the informer.
	write := func(s *corev1.Service) {
		t.Helper()
		s.ResourceVersion = strconv.FormatInt(resourceVersion.Add(1), 10)
		if err := kube.Tracker().Update(corev1.SchemeGroupVersion.WithResource("services"), s, s.Namespace); err != nil {
			t.Fatal(err)
		}
		cache(s)
	}
	removed := stored()
	removed.Annotations = nil
	write(removed)
	syncAndCheck("a sync whose cache shows the records removed", recordBroadcastAddressPatch, hostIDPatch(hostID))

	recreated := svc.DeepCopy()
	recreated.UID = "svc-uid-2"
	write(recreated)
	syncAndCheck("a sync whose cache shows the Service created again", recordBroadcastAddressPatch, hostIDPatch(hostID))
}

// TestMemberServiceControllerRecordsTheReplacingNodesHostID starts a node that replaced another: its member Service
// still records the replaced node's host ID, and the controller overwrites it with the node's own, which tells the
// operator that the replacement took place.
func TestMemberServiceControllerRecordsTheReplacingNodesHostID(t *testing.T) {
	t.Parallel()
	n := startInProcessNode(t, fakescylladb.Knobs{})
	svc := memberServiceWithLabels(map[string]string{naming.ReplaceLabel: "", naming.ReplacingNodeHostIDLabel: replacedHostID})
	svc.Annotations = map[string]string{
		naming.HostIDAnnotation:                 replacedHostID,
		naming.BroadcastAddressAnnotation:       "10.96.0.1",
		naming.BroadcastAddressPodUIDAnnotation: "uid-1",
	}
	f := newControllerFixture(t, svc, n.client, t.TempDir(), true)
	if _, err := f.controller.sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.checkWrites(t, hostIDPatch(n.node.HostID()))
}

// TestMemberServiceControllerRecordsOnlyAHostID keeps a host ID that ScyllaDB reports before it has one (the nil
// UUID) off the member Service, where the operator would take it for a new node's, and records the real one once
// ScyllaDB reports it.
func TestMemberServiceControllerRecordsOnlyAHostID(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	stub := newStubScyllaDB(t, dataDir)
	stub.setHostID("00000000-0000-0000-0000-000000000000")
	svc := memberServiceWithLabels(nil)
	svc.Annotations = map[string]string{naming.HostIDAnnotation: replacedHostID}
	f := newControllerFixture(t, svc, stub.client, dataDir, true)
	ctx := context.Background()
	_, err := f.controller.sync(ctx)
	wantErr := `ScyllaDB reports a host ID that can't be recorded: "00000000-0000-0000-0000-000000000000" is the nil UUID, which is no node's host ID`
	if diff := cmp.Diff(wantErr, errorString(err)); diff != "" {
		t.Errorf("unexpected error (-want +got):\n%s", diff)
	}
	f.checkWrites(t, recordBroadcastAddressPatch)

	f.kube.ClearActions()
	f.waitForLister(t, func(s *corev1.Service) bool { return f.controller.BroadcastAddressRecorded(s) })
	stub.setHostID("3f1c2a9e-5b7d-4e8f-9a0b-1c2d3e4f5a6b")
	if _, err := f.controller.sync(ctx); err != nil {
		t.Fatal(err)
	}
	f.checkWrites(t, hostIDPatch("3f1c2a9e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"))
}

func TestMemberServiceControllerRetriesWhileScyllaDBIsDown(t *testing.T) {
	t.Parallel()
	n := startInProcessNode(t, fakescylladb.Knobs{})
	n.setKnobs(t, `{"apiFailure": true}`)
	f := newControllerFixture(t, memberServiceWithLabels(map[string]string{naming.DecommissionedLabel: naming.DecommissionedLabelFalse}), n.client, t.TempDir(), true)
	if _, err := f.controller.sync(context.Background()); err == nil {
		t.Error("sync succeeded with ScyllaDB's API failing")
	}
	// The broadcast address needs no API; nothing else may be written.
	f.checkWrites(t, recordBroadcastAddressPatch)
}

func TestMemberServiceControllerDecommissions(t *testing.T) {
	t.Parallel()
	n := startInProcessNode(t, fakescylladb.Knobs{DecommissionDelay: fakescylladb.Duration(50 * time.Millisecond)})
	markerDir := t.TempDir()
	svc := memberServiceWithLabels(map[string]string{naming.DecommissionedLabel: naming.DecommissionedLabelFalse})
	f := newControllerFixture(t, svc, n.client, markerDir, true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.controller.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()

	f.waitForLister(t, func(s *corev1.Service) bool {
		return s.Labels[naming.DecommissionedLabel] == naming.DecommissionedLabelTrue
	})
	mode, err := n.client.OperationMode(context.Background())
	if err != nil || mode != scyllaclient.OperationModeDecommissioned {
		t.Errorf("OperationMode() = %q, %v; want DECOMMISSIONED", mode, err)
	}
	if rings := n.registry.Rings(); len(rings) != 0 {
		t.Errorf("the decommissioned node is still in a ring: %+v", rings)
	}
	if _, err := os.Stat(f.markerPath); err != nil {
		t.Errorf("no decommission marker: %v", err)
	}
	decommissionCalls := 0
	for _, a := range f.kube.Actions() {
		if a.GetVerb() == "patch" && string(a.(k8stesting.PatchAction).GetPatch()) == `{"metadata":{"labels":{"scylla/decommissioned":"true"}}}` {
			decommissionCalls++
		}
	}
	if decommissionCalls != 1 {
		t.Errorf("the label was set %d times, want once", decommissionCalls)
	}
}

// TestMemberServiceControllerFinishesAfterRestart covers a sidecar restarted after the node was decommissioned but
// before the label was set: ScyllaDB isn't running (it would refuse to start), and the marker suffices.
func TestMemberServiceControllerFinishesAfterRestart(t *testing.T) {
	t.Parallel()
	unreachable, err := scyllaclient.NewClient("127.0.0.1:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := memberServiceWithLabels(map[string]string{naming.DecommissionedLabel: naming.DecommissionedLabelFalse})
	f := newControllerFixture(t, svc, unreachable, t.TempDir(), false)
	if err := os.WriteFile(f.markerPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := f.controller.sync(ctx); err != nil {
		t.Fatal(err)
	}
	f.checkWrites(t, `patch {"metadata":{"labels":{"scylla/decommissioned":"true"}}}`)
	f.waitForLister(t, func(s *corev1.Service) bool {
		return s.Labels[naming.DecommissionedLabel] == naming.DecommissionedLabelTrue
	})
	f.kube.ClearActions()
	if _, err := f.controller.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.writes(); len(got) != 0 {
		t.Errorf("a second sync wrote %v", got)
	}
}

// TestRunDoesNotStartADecommissionedNode restarts a sidecar whose volume holds the decommission marker.
func TestRunDoesNotStartADecommissionedNode(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	n := datacenterNodes(1, 1, baseTime)[0]
	e.addNode(n)
	ctx := context.Background()
	e.updateService(n.namespace, n.name, func(svc *corev1.Service) {
		svc.Labels[naming.DecommissionedLabel] = naming.DecommissionedLabelFalse
	})
	o := e.options(n, nil)
	o.ScyllaDBEntrypoint = filepath.Join(t.TempDir(), "must-not-run")
	if err := os.MkdirAll(o.ScyllaDBDataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.ScyllaDBDataDir, decommissionedMarkerFileName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rs := e.start(o)
	rs.waitFor(t, "the decommissioned label", func() bool {
		svc, err := e.kube.CoreV1().Services(n.namespace).Get(ctx, n.name, metav1.GetOptions{})
		return err == nil && svc.Labels[naming.DecommissionedLabel] == naming.DecommissionedLabelTrue
	})
	if code := rs.probe(ReadyzPath); code != 503 {
		t.Errorf("readiness = %d, want 503", code)
	}
	if code := rs.probe(HealthzPath); code != 200 {
		t.Errorf("liveness = %d, want 200", code)
	}
	if err := rs.stop(); err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
}

// TestMemberServiceControllerRestartsForANewServiceAddress changes the ClusterIP the node broadcasts, as recreating
// the member Service does: the controller asks for a restart, once maintenance is over, and records nothing.
func TestMemberServiceControllerRestartsForANewServiceAddress(t *testing.T) {
	t.Parallel()
	unreachable, err := scyllaclient.NewClient("127.0.0.1:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	f := newControllerFixture(t, memberServiceWithLabels(map[string]string{naming.NodeMaintenanceLabel: ""}), unreachable, t.TempDir(), true)
	ctx := context.Background()
	update := func(change func(*corev1.Service)) {
		t.Helper()
		svc, err := f.kube.CoreV1().Services(testNamespace).Get(ctx, selfName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(svc)
		if _, err := f.kube.CoreV1().Services(testNamespace).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	update(func(svc *corev1.Service) {
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "10.96.0.9", []string{"10.96.0.9"}
	})
	f.waitForLister(t, func(s *corev1.Service) bool { return s.Spec.ClusterIP == "10.96.0.9" })

	// In maintenance the node is left alone.
	_, _ = f.controller.sync(ctx)
	if err := f.restart.Reason(); err != nil {
		t.Fatalf("a restart was requested in maintenance: %v", err)
	}

	update(func(svc *corev1.Service) { delete(svc.Labels, naming.NodeMaintenanceLabel) })
	f.waitForLister(t, func(s *corev1.Service) bool { _, ok := s.Labels[naming.NodeMaintenanceLabel]; return !ok })
	f.kube.ClearActions()
	if _, err := f.controller.sync(ctx); err != nil {
		t.Fatal(err)
	}
	want := `broadcast_address from exposeOptions.broadcastOptions.nodes (type ServiceClusterIP) is now 10.96.0.9, but the node runs with 10.96.0.1; broadcast_rpc_address from exposeOptions.broadcastOptions.clients (type ServiceClusterIP) is now 10.96.0.9, but the node runs with 10.96.0.1`
	if err := f.restart.Reason(); err == nil || err.Error() != want {
		t.Errorf("restart reason = %v, want %s", err, want)
	}
	select {
	case <-f.restart.Requested():
	default:
		t.Error("Requested() is not closed")
	}
	if got := f.writes(); len(got) != 0 {
		t.Errorf("wrote %v for an address the node doesn't run with", got)
	}
}

func TestDecommissionRetryDelayDoublesUpToTheCap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		failures int
		want     time.Duration
	}{
		{failures: 1, want: 5 * time.Second},
		{failures: 2, want: 10 * time.Second},
		{failures: 3, want: 20 * time.Second},
		{failures: 6, want: 160 * time.Second},
		{failures: 7, want: 5 * time.Minute},
		{failures: 8, want: 5 * time.Minute},
		{failures: 200, want: 5 * time.Minute},
	} {
		if got := decommissionRetryDelay(tc.failures, 5*time.Second, 5*time.Minute); got != tc.want {
			t.Errorf("decommissionRetryDelay(%d) = %v, want %v", tc.failures, got, tc.want)
		}
	}
}

// stubScyllaDB is a ScyllaDB REST API whose node stays NORMAL and whose decommission fails at once. It records, for
// each decommission call, whether the in-progress marker was on the volume.
type stubScyllaDB struct {
	client     *scyllaclient.Client
	markerPath string

	lock          sync.Mutex
	hostID        string
	markerAtCalls []bool
}

func newStubScyllaDB(t *testing.T, dataDir string) *stubScyllaDB {
	t.Helper()
	s := &stubScyllaDB{markerPath: filepath.Join(dataDir, decommissioningMarkerFileName), hostID: "3f1c2a9e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+scyllaclient.PathLocalHostID, func(w http.ResponseWriter, _ *http.Request) {
		s.lock.Lock()
		defer s.lock.Unlock()
		_, _ = fmt.Fprintf(w, "%q", s.hostID)
	})
	mux.HandleFunc("GET "+scyllaclient.PathOperationMode, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`"NORMAL"`)) })
	mux.HandleFunc("POST "+scyllaclient.PathDecommission, func(w http.ResponseWriter, _ *http.Request) {
		_, err := os.Stat(s.markerPath)
		s.lock.Lock()
		s.markerAtCalls = append(s.markerAtCalls, err == nil)
		s.lock.Unlock()
		http.Error(w, `{"message":"a node is down","code":500}`, http.StatusInternalServerError)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	client, err := scyllaclient.NewClient(srv.Listener.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.client = client
	return s
}

func (s *stubScyllaDB) setHostID(id string) {
	s.lock.Lock()
	defer s.lock.Unlock()
	s.hostID = id
}

func (s *stubScyllaDB) calls() []bool {
	s.lock.Lock()
	defer s.lock.Unlock()
	return slices.Clone(s.markerAtCalls)
}

// TestMemberServiceControllerBacksOffFailedDecommissions fails every decommission call: the controller writes the
// in-progress marker before each call and waits twice as long after each failure, up to the cap (20ms here).
func TestMemberServiceControllerBacksOffFailedDecommissions(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	stub := newStubScyllaDB(t, dataDir)
	f := newControllerFixture(t, memberServiceWithLabels(map[string]string{naming.DecommissionedLabel: naming.DecommissionedLabelFalse}), stub.client, dataDir, true)
	clock := testingclock.NewFakePassiveClock(baseTime)
	f.controller.clock = clock
	ctx := context.Background()
	waitForCall := func(n int) {
		t.Helper()
		for len(stub.calls()) < n || f.controller.decommissioning.Load() {
			time.Sleep(time.Millisecond)
		}
	}

	for i, delay := range []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond} {
		if _, err := f.controller.sync(ctx); err != nil {
			t.Fatal(err)
		}
		waitForCall(i + 1)
		// Right after a failure and until just before the delay is over, nothing is called again.
		requeue, err := f.controller.sync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if requeue != delay {
			t.Errorf("after failure %d: requeue after %v, want %v", i+1, requeue, delay)
		}
		clock.SetTime(clock.Now().Add(delay - time.Nanosecond))
		if requeue, err := f.controller.sync(ctx); err != nil || requeue != time.Nanosecond {
			t.Errorf("just before the delay: requeue after %v, %v; want 1ns", requeue, err)
		}
		if got := len(stub.calls()); got != i+1 {
			t.Fatalf("after failure %d and before its delay: %d calls", i+1, got)
		}
		clock.SetTime(clock.Now().Add(time.Nanosecond))
	}
	for i, marker := range stub.calls() {
		if !marker {
			t.Errorf("decommission call %d was made without the in-progress marker on the volume", i+1)
		}
	}
}
