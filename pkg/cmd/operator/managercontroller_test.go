package operator

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"

	"github.com/scyllakube/managerclient"

	"github.com/scyllakube/scylla-operator/pkg/certs"
	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	"github.com/scyllakube/scylla-operator/pkg/test/apiserverfields"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

func TestManagerControllerOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		mutate  func(*ManagerControllerOptions)
		wantErr string
	}{
		{name: "defaults are valid", mutate: func(*ManagerControllerOptions) {}},
		{name: "https with a CA file is valid", mutate: func(o *ManagerControllerOptions) {
			o.ScyllaDBManagerURL = "https://scylla-manager.scylla-manager.svc"
			o.ScyllaDBManagerCAFile = "/etc/ca.crt"
		}},
		{name: "a URL without /api/v1 is valid", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "http://127.0.0.1:5080" }},
		{name: "URL with another scheme", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "ftp://scylla-manager/api/v1" }, wantErr: `--scylladb-manager-url "ftp://scylla-manager/api/v1" must use http or https`},
		{name: "URL without a scheme", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "scylla-manager:5080" }, wantErr: "must use http or https"},
		{name: "empty URL", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "" }, wantErr: `--scylladb-manager-url "" must use http or https`},
		{name: "URL that does not parse", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "http://[::1" }, wantErr: "is not a URL"},
		{name: "URL without a host", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "http:///api/v1" }, wantErr: "has no host"},
		{name: "URL with credentials, which are not echoed", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "http://admin:hunter2@scylla-manager/api/v1" }, wantErr: `"http://admin:xxxxx@scylla-manager/api/v1" must not carry credentials`},
		{name: "URL with a query", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "http://scylla-manager/api/v1?x=1" }, wantErr: "must not have a query or fragment"},
		{name: "CA file with plain http", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerCAFile = "/etc/ca.crt" }, wantErr: `--scylladb-manager-ca-file is only used with an https --scylladb-manager-url, got scheme "http"`},
		{name: "no workers", mutate: func(o *ManagerControllerOptions) { o.ConcurrentSyncs = 0 }, wantErr: "--concurrent-syncs must be at least 1, got 0"},
		{name: "resync too short", mutate: func(o *ManagerControllerOptions) { o.ResyncPeriod = 30 * time.Second }, wantErr: "--resync-period must be at least 1m, got 30s"},
		{name: "bad qps", mutate: func(o *ManagerControllerOptions) { o.QPS = 0 }, wantErr: "--qps must be greater than 0"},
		{name: "bad burst", mutate: func(o *ManagerControllerOptions) { o.Burst = 0 }, wantErr: "--burst must be at least 1"},
		{name: "bad serving address", mutate: func(o *ManagerControllerOptions) { o.Serving.Address = "8080" }, wantErr: "--serving-address"},
		{name: "bad lease timing", mutate: func(o *ManagerControllerOptions) { o.LeaderElection.LeaseDuration = time.Second }, wantErr: "--leader-election-lease-duration"},
		{name: "empty lease name", mutate: func(o *ManagerControllerOptions) { o.LeaderElection.LeaseName = "" }, wantErr: "--leader-election-lease-name must not be empty"},
		{name: "every error is reported at once", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "ftp://x"; o.ConcurrentSyncs = -1 }, wantErr: "--concurrent-syncs must be at least 1, got -1\n--scylladb-manager-url \"ftp://x\" must use http or https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := NewManagerControllerOptions()
			tc.mutate(o)
			err := o.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error reveals the URL's password: %v", err)
			}
		})
	}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestManagerControllerRejectsUnusableTokenAndCAFiles(t *testing.T) {
	t.Parallel()
	const secretToken = "s3cr3t-token"
	for _, tc := range []struct {
		name      string
		tokenFile func(t *testing.T) string
		caFile    func(t *testing.T) string
		wantErr   string
		wantErr2  string
	}{
		{name: "missing token file", tokenFile: func(t *testing.T) string { return filepath.Join(t.TempDir(), "absent") }, wantErr: "--scylladb-manager-auth-token-file \"", wantErr2: ": can't read file: "},
		{name: "empty token file", tokenFile: func(t *testing.T) string { return writeFile(t, "token", nil) }, wantErr: "holds no token"},
		{name: "token file of whitespace", tokenFile: func(t *testing.T) string { return writeFile(t, "token", []byte(" \n\t\n")) }, wantErr: "holds no token"},
		{name: "token of two lines", tokenFile: func(t *testing.T) string { return writeFile(t, "token", []byte(secretToken+"\n"+secretToken)) }, wantErr: "token must not contain line breaks"},
		{name: "missing CA file", caFile: func(t *testing.T) string { return filepath.Join(t.TempDir(), "absent") }, wantErr: "--scylladb-manager-ca-file \"", wantErr2: ": can't read file: "},
		{name: "CA file that is not PEM", caFile: func(t *testing.T) string { return writeFile(t, "ca.crt", []byte("not a certificate")) }, wantErr: "holds no PEM certificate"},
		{name: "CA file with a PEM key only", caFile: func(t *testing.T) string {
			return writeFile(t, "ca.crt", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("x")}))
		}, wantErr: "holds no PEM certificate"},
		{
			name:      "every problem of both files at once",
			tokenFile: func(t *testing.T) string { return writeFile(t, "token", []byte(secretToken+"\n"+secretToken)) },
			caFile:    func(t *testing.T) string { return writeFile(t, "ca.crt", []byte("not a certificate")) },
			wantErr:   "the token must not contain line breaks\n--scylladb-manager-ca-file",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := NewManagerControllerOptions()
			if tc.tokenFile != nil {
				o.ScyllaDBManagerAuthTokenFile = tc.tokenFile(t)
			}
			if tc.caFile != nil {
				o.ScyllaDBManagerURL = "https://scylla-manager"
				o.ScyllaDBManagerCAFile = tc.caFile(t)
			}
			err := o.completeScyllaDBManager()
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
			if !strings.Contains(err.Error(), tc.wantErr2) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr2, err)
			}
			if strings.Contains(err.Error(), secretToken) {
				t.Errorf("the error reveals the token: %v", err)
			}
		})
	}
}

// requestRecorder serves ScyllaDB Manager's /ping and remembers the headers of the last request.
type requestRecorder struct {
	header http.Header
}

func (r *requestRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.header = req.Header.Clone()
	if req.URL.Path != "/ping" {
		http.NotFound(w, req)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func TestManagerControllerClientSendsTheTrimmedTokenAndItsUserAgentAndCountsRequests(t *testing.T) {
	t.Parallel()
	rec := &requestRecorder{}
	server := httptest.NewServer(rec)
	defer server.Close()

	o := NewManagerControllerOptions()
	o.ScyllaDBManagerURL = server.URL + "/api/v1"
	o.ScyllaDBManagerAuthTokenFile = writeFile(t, "token", []byte("  the-token\n"))
	if err := o.completeScyllaDBManager(); err != nil {
		t.Fatal(err)
	}
	before := pingsCounted(t)
	if err := o.managerClient.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if got, want := rec.header.Get("Authorization"), "Bearer the-token"; got != want {
		t.Errorf("Authorization = %q, want %q", got, want)
	}
	if got := rec.header.Get("User-Agent"); !strings.HasPrefix(got, "scylla-manager-controller/") {
		t.Errorf("User-Agent = %q, want scylla-manager-controller/<version>", got)
	}
	if got := pingsCounted(t) - before; got < 1 {
		t.Errorf("the ping was not counted in scylla_operator_scylladb_manager_requests_total")
	}
}

// pingsCounted returns how many successful pings of ScyllaDB Manager the process counted.
func pingsCounted(t *testing.T) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != "scylla_operator_scylladb_manager_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if testutil.LabelsMatch(m, map[string]string{"method": http.MethodGet, "endpoint": "/ping", "code": "204"}) {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func TestManagerControllerTrustsTheCAFile(t *testing.T) {
	t.Parallel()
	server := httptest.NewTLSServer(&requestRecorder{})
	defer server.Close()
	caFile := writeFile(t, "ca.crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw}))

	withCA := NewManagerControllerOptions()
	withCA.ScyllaDBManagerURL = server.URL
	withCA.ScyllaDBManagerCAFile = caFile
	if err := withCA.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := withCA.completeScyllaDBManager(); err != nil {
		t.Fatal(err)
	}
	if err := withCA.managerClient.Ping(t.Context()); err != nil {
		t.Errorf("Ping with the CA file: %v", err)
	}

	withoutCA := NewManagerControllerOptions()
	withoutCA.ScyllaDBManagerURL = server.URL
	if err := withoutCA.completeScyllaDBManager(); err != nil {
		t.Fatal(err)
	}
	if err := withoutCA.managerClient.Ping(t.Context()); err == nil {
		t.Error("Ping without the CA file succeeded; the test server's certificate should be untrusted")
	}
}

// Flags are also read from SCYLLA_OPERATOR_* variables, and their errors come before anything is contacted.
func TestManagerControllerCommandReadsFlagsFromTheEnvironment(t *testing.T) {
	t.Setenv("SCYLLA_OPERATOR_SCYLLADB_MANAGER_URL", "ftp://from-env")
	t.Setenv("SCYLLA_OPERATOR_CONCURRENT_SYNCS", "0")
	var out bytes.Buffer
	root := NewScyllaOperatorCommand(genericclioptions.IOStreams{Out: &out, ErrOut: &out})
	root.SetArgs([]string{"manager-controller", "--kubeconfig=/nonexistent"})
	err := root.Execute()
	for _, want := range []string{`--scylladb-manager-url "ftp://from-env" must use http or https`, "--concurrent-syncs must be at least 1, got 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error containing %q, got %v", want, err)
		}
	}
}

func TestManagerControllerCommandIsRegistered(t *testing.T) {
	t.Parallel()
	root := NewScyllaOperatorCommand(genericclioptions.IOStreams{})
	cmd, _, err := root.Find([]string{"manager-controller"})
	if err != nil || cmd == root {
		t.Fatalf("the root command has no manager-controller subcommand: %v", err)
	}
	for _, flag := range []string{
		"scylladb-manager-url", "scylladb-manager-auth-token-file", "scylladb-manager-ca-file", "kubeconfig", "qps", "burst",
		"concurrent-syncs", "resync-period", "leader-elect", "leader-election-namespace", "leader-election-lease-name",
		"leader-election-lease-duration", "leader-election-renew-deadline", "leader-election-retry-period", "serving-address",
		"profiling",
	} {
		if cmd.Flags().Lookup(flag) == nil {
			t.Errorf("manager-controller has no flag --%s", flag)
		}
	}
	if got := cmd.Flags().Lookup("profiling").DefValue; got != "false" {
		t.Errorf("--profiling defaults to %s, want false: profiles are served only when asked for", got)
	}
	if got := cmd.Flags().Lookup("leader-election-lease-name").DefValue; got != "scylla-manager-controller-lock" {
		t.Errorf("the default lease is %q, want its own, scylla-manager-controller-lock", got)
	}
}

// A cluster ScyllaDB Manager lost (its database reset, or sctool cluster delete) is registered again under the same ID
// as soon as the task controller finds it missing, not at the registration controller's next resync: the whole
// manager-controller runs against fake API servers and a fake ScyllaDB Manager, with a resync period far longer than
// the test.
func TestManagerControllerRegistersALostClusterAgainWhenItsTasksFindItMissing(t *testing.T) {
	t.Parallel()
	const (
		namespace = "scylla"
		name      = "basic"
	)
	manager, err := fakescyllamanager.NewServer(fakescyllamanager.Options{})
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewServer(manager)
	defer server.Close()

	token, err := scyllaagent.MakeAuthTokenConfig("token")
	if err != nil {
		t.Fatal(err)
	}
	kubeClient := kubefake.NewClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace,
			Name:      naming.AgentAuthTokenSecretName(name),
			Labels:    map[string]string{naming.ManagedByLabel: naming.ManagedByLabelValue},
		},
		Data: map[string][]byte{naming.ScyllaDBManagerAgentAuthTokenKey: token},
	})
	sdc := &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       namespace,
			Name:            name,
			UID:             "5d0c3f6e-1b2a-4c8d-9e7f-0a1b2c3d4e5f",
			Generation:      1,
			ResourceVersion: "1",
			Labels:          map[string]string{naming.RegisterWithScyllaDBManagerLabel: "true"},
		},
		Status: scyllav1alpha1.ScyllaDBDatacenterStatus{ObservedGeneration: new(int64(1)), Conditions: []metav1.Condition{
			{Type: "Available", Status: metav1.ConditionTrue, Reason: "AsExpected", ObservedGeneration: 1, LastTransitionTime: metav1.Now()},
		}},
	}
	clusterID := naming.ScyllaDBManagerClusterID("ScyllaDBDatacenter", sdc.UID)
	// Two tasks of the cluster: both find it missing, and one registration sync follows.
	taskNames := []string{"weekly", "daily"}
	objects := []runtime.Object{sdc}
	for i, taskName := range taskNames {
		objects = append(objects, &scyllav1alpha1.ScyllaDBManagerTask{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: taskName, UID: types.UID(fmt.Sprintf("6e1d4a7f-2c3b-4d9e-8f0a-1b2c3d4e5f6%d", i)), Generation: 1, ResourceVersion: "1"},
			Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
				ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBDatacenter", Name: name},
				Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeRepair,
				Repair: &scyllav1alpha1.ScyllaDBManagerRepairTaskOptions{
					ScyllaDBManagerTaskSchedule: scyllav1alpha1.ScyllaDBManagerTaskSchedule{Cron: new(fmt.Sprintf("0 %d * * SUN", i))},
				},
			},
		})
	}
	scyllaClient, tracker, err := apiserverfields.NewScyllaClientset(objects...)
	if err != nil {
		t.Fatal(err)
	}

	o := NewManagerControllerOptions()
	o.ScyllaDBManagerURL = server.URL
	o.ConcurrentSyncs = 1
	// No resync during the test: only the hand-off brings the cluster back.
	o.ResyncPeriod = time.Hour
	if err := o.completeScyllaDBManager(); err != nil {
		t.Fatal(err)
	}
	o.kubeClient, o.scyllaClient = kubeClient, scyllaClient

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	p := &controllerProgram{newControllers: o.newControllers}
	go func() { done <- p.runControllers(ctx, func() {}) }()

	liveTasks := func() int {
		n := 0
		for _, ts := range manager.State().LiveTasks() {
			if ts.ClusterID == clusterID && ts.Type == "repair" {
				n++
			}
		}
		return n
	}
	registered := func() bool {
		st := manager.State()
		return len(st.Clusters) == 1 && st.Clusters[0].ID == clusterID
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return cond(), nil
		}); err != nil {
			var tasks []string
			for _, taskName := range taskNames {
				obj, _ := tracker.Get(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbmanagertasks"), namespace, taskName)
				if task, ok := obj.(*scyllav1alpha1.ScyllaDBManagerTask); ok {
					tasks = append(tasks, fmt.Sprintf("%s: %+v", taskName, task.Status.Conditions))
				}
			}
			sdcObj, _ := tracker.Get(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), namespace, name)
			t.Fatalf("waiting for %s: %v\nScyllaDB Manager: %+v\nScyllaDBDatacenter: %+v\nScyllaDBManagerTasks: %v", what, err, manager.State(), sdcObj, tasks)
		}
	}
	// touchTasks changes the tasks as another actor would, which syncs them: it stands in for the task controller's
	// own looks (its status refresh every 5 minutes, its poll of a missing cluster every 30 seconds).
	touches := 0
	touchTasks := func() {
		t.Helper()
		touches++
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"example.com/touched":"%d"}}}`, touches)
		for _, taskName := range taskNames {
			if _, err := scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(namespace).Patch(ctx, taskName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}

	waitFor("the datacenter's registration", func() bool {
		obj, err := tracker.Get(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), namespace, name)
		return err == nil && obj.(*scyllav1alpha1.ScyllaDBDatacenter).Annotations[naming.ScyllaDBManagerClusterIDAnnotation] == clusterID && registered()
	})
	// The registration annotation's arrival alone syncs the tasks (the task controller watches the datacenter),
	// which creates them in ScyllaDB Manager: nothing stands in for a look here.
	waitFor("the tasks in ScyllaDB Manager", func() bool { return liveTasks() == len(taskNames) })
	// At rest nothing reads ScyllaDB Manager: no periodic GETs come with the hand-off. The wait also outlasts the task
	// controller's memo of the task list (15 s), so that the tasks' next look reads ScyllaDB Manager.
	time.Sleep(time.Second)
	manager.ResetRequests()
	time.Sleep(15 * time.Second)
	if requests := manager.Requests(); len(requests) != 0 {
		t.Errorf("expected no ScyllaDB Manager requests at rest, got %d: %+v", len(requests), requests)
	}

	// ScyllaDB Manager loses the cluster and its tasks; the tasks' next look finds it missing.
	deleteReq, err := http.NewRequestWithContext(ctx, http.MethodDelete, server.URL+"/api/v1/cluster/"+clusterID, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(deleteReq)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if registered() {
		t.Fatal("expected ScyllaDB Manager to have lost the cluster")
	}
	manager.ResetRequests()
	touchTasks()
	waitFor("the cluster to be registered again under the same ID", registered)
	// Let the reports of both tasks arrive.
	time.Sleep(300 * time.Millisecond)
	counts := map[fakescyllamanager.Endpoint]int{}
	for _, r := range manager.Requests() {
		counts[r.Endpoint]++
	}
	if counts[fakescyllamanager.EndpointGetCluster] != 1 || counts[fakescyllamanager.EndpointCreateCluster] != 1 {
		t.Errorf("expected one registration sync (one GET and one create of the cluster) for the reports of both tasks, got %v", counts)
	}

	// The tasks' next look creates them again in the cluster.
	touchTasks()
	waitFor("the tasks to be created again", func() bool { return liveTasks() == len(taskNames) })

	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// swapMountedFile replaces the content of <dir>/<key>, a symlink to ..data/<key>, the way the kubelet updates a
// mounted Secret: a new directory, then a new ..data link renamed over the old one.
func swapMountedFile(t *testing.T, dir, key string, gen int, data []byte) {
	t.Helper()
	ts := fmt.Sprintf("..2026_11_25_15_00_%02d.%d", gen, gen)
	if err := os.Mkdir(filepath.Join(dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ts, key), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ts, filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

// newMountedFile returns the path of <dir>/<key> laid out as a mounted Secret's key, holding data.
func newMountedFile(t *testing.T, key string, data []byte) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	swapMountedFile(t, dir, key, 0, data)
	if err := os.Symlink(filepath.Join("..data", key), filepath.Join(dir, key)); err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(dir, key)
}

func TestManagerControllerFollowsARotatedTokenAndCAWithoutARestart(t *testing.T) {
	t.Parallel()
	now := time.Now()
	oldCA, err := certs.NewSelfSignedCA("old-ca", time.Hour, certs.ECDSAP256, now)
	if err != nil {
		t.Fatal(err)
	}
	newCA, err := certs.NewSelfSignedCA("new-ca", time.Hour, certs.ECDSAP256, now)
	if err != nil {
		t.Fatal(err)
	}
	serving, err := newCA.Sign(certs.CertificateRequest{CommonName: "scylla-manager", IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, Usage: certs.ServingUsage, Validity: time.Hour}, now)
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	accepted := "old-token"
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+accepted {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	server.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{serving.Certificate.Raw}, PrivateKey: serving.Key}}}
	server.StartTLS()
	defer server.Close()

	tokenDir, tokenFile := newMountedFile(t, "token", []byte("old-token\n"))
	caDir, caFile := newMountedFile(t, "ca.crt", certs.EncodeCertificatesPEM(oldCA.Certificate))
	o := NewManagerControllerOptions()
	o.ScyllaDBManagerURL = server.URL + "/api/v1"
	o.ScyllaDBManagerAuthTokenFile = tokenFile
	o.ScyllaDBManagerCAFile = caFile
	// Every request may read the files again, so the test needs no clock.
	o.scyllaDBManagerFileCheckInterval = time.Nanosecond
	if err := o.completeScyllaDBManager(); err != nil {
		t.Fatal(err)
	}
	if err := o.managerClient.Ping(t.Context()); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("ping while the CA file holds only the old CA: want an unknown authority, got %v", err)
	}

	swapMountedFile(t, caDir, "ca.crt", 1, certs.EncodeCertificatesPEM(oldCA.Certificate, newCA.Certificate))
	time.Sleep(time.Millisecond)
	if err := o.managerClient.Ping(t.Context()); err != nil {
		t.Fatalf("ping once the CA file holds the new CA: %v", err)
	}

	mu.Lock()
	accepted = "new-token"
	mu.Unlock()
	if err := o.managerClient.Ping(t.Context()); managerclient.StatusCode(err) != http.StatusUnauthorized {
		t.Fatalf("ping with the old token after ScyllaDB Manager moved on: want 401, got %v", err)
	}
	swapMountedFile(t, tokenDir, "token", 1, []byte("new-token\n"))
	time.Sleep(time.Millisecond)
	if err := o.managerClient.Ping(t.Context()); err != nil {
		t.Fatalf("ping once the token file holds the new token: %v", err)
	}
}
