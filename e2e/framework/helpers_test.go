package framework

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeManifests(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name      string
		data      string
		wantKinds []string
		wantErr   string
	}{
		{
			name:      "several documents with empty ones between",
			data:      "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n# only a comment\n---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: b\n",
			wantKinds: []string{"ConfigMap", "StatefulSet"},
		},
		{
			name:    "document without kind",
			data:    "apiVersion: v1\nmetadata:\n  name: a\n",
			wantErr: "document 0 has no apiVersion or kind",
		},
		{
			name:    "broken YAML",
			data:    "apiVersion: v1\nkind: [\n",
			wantErr: "can't decode document 0",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			objs, err := DecodeManifests([]byte(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("expected error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, o := range objs {
				kinds = append(kinds, o.GetKind())
			}
			if diff := cmp.Diff(tc.wantKinds, kinds); diff != "" {
				t.Errorf("unexpected kinds (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSanitizeName(t *testing.T) {
	t.Parallel()

	tt := []struct {
		in     string
		maxLen int
		want   string
	}{
		{in: "TestSmoke/LoadBalancer_gets_an_IP", maxLen: 63, want: "testsmoke-loadbalancer-gets-an-ip"},
		{in: "TestA//B", maxLen: 63, want: "testa-b"},
		{in: "TestVeryLongName_here", maxLen: 13, want: "testverylongn"},
		{in: "Test_cut_at_dash", maxLen: 9, want: "test-cut"},
		{in: "///", maxLen: 10, want: "test"},
	}
	for _, tc := range tt {
		if got := sanitizeName(tc.in, tc.maxLen); got != tc.want {
			t.Errorf("sanitizeName(%q, %d): expected %q, got %q", tc.in, tc.maxLen, tc.want, got)
		}
	}
}

func TestPoll(t *testing.T) {
	t.Parallel()

	t.Run("returns once the condition holds", func(t *testing.T) {
		t.Parallel()
		calls := 0
		err := WaitFor(context.Background(), time.Minute, func(context.Context) (bool, error) {
			calls++
			return calls == 3, errors.New("not yet")
		})
		if err != nil || calls != 3 {
			t.Fatalf("expected success after 3 calls, got %v after %d", err, calls)
		}
	})
	t.Run("gives up at once on StopPolling", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("boom")
		err := WaitFor(context.Background(), time.Minute, func(context.Context) (bool, error) {
			return false, StopPolling(boom)
		})
		if !errors.Is(err, boom) {
			t.Fatalf("expected boom, got %v", err)
		}
	})
	t.Run("reports the last reason when the context ends", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		err := Poll(ctx, func(ctx context.Context) (bool, error) {
			calls++
			if calls == 1 {
				return false, errors.New("pod not ready")
			}
			// A condition that calls the API server after the deadline fails with the context's error; the
			// reason from before must survive it.
			cancel()
			return false, ctx.Err()
		})
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "pod not ready") {
			t.Fatalf("expected a cancellation naming the last reason, got %v", err)
		}
	})
}

func TestGeneratePKI(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	p, err := generatePKI(dir, net.ParseIP("10.96.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	readCert := func(path string) *x509.Certificate {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(data)
		if block == nil {
			t.Fatalf("%s holds no PEM block", path)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return cert
	}
	roots := x509.NewCertPool()
	roots.AddCert(readCert(p.CACert))

	serving := readCert(p.ServingCert)
	for _, host := range []string{"127.0.0.1", "localhost", "kubernetes.default.svc", "10.96.0.1"} {
		if _, err := serving.Verify(x509.VerifyOptions{DNSName: host, Roots: roots}); err != nil {
			t.Errorf("serving certificate does not verify for %s: %v", host, err)
		}
	}
	admin := readCert(p.AdminCert)
	if _, err := admin.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin certificate does not verify as a client certificate: %v", err)
	}
	if diff := cmp.Diff([]string{"system:masters"}, admin.Subject.Organization); diff != "" {
		t.Errorf("admin certificate is not in system:masters (-want +got):\n%s", diff)
	}
	for _, path := range []string{p.CAKey, p.ServingKey, p.AdminKey, p.ServiceAccountKey, p.ServiceAccountPub} {
		if info, err := os.Stat(path); err != nil || info.Size() == 0 {
			t.Errorf("expected a non-empty %s, got %v", filepath.Base(path), err)
		}
	}
}

func TestControlPlaneOptionsForKeepsControlPlanesApart(t *testing.T) {
	t.Parallel()

	base := ControlPlaneOptions{Dir: "/tmp/suite"}
	seen := map[string]int{}
	for i := range 5 {
		o := ControlPlaneOptionsFor(base, i)
		for _, v := range []string{o.Name, o.Dir, o.PodCIDR, o.NodeIP, o.LoadBalancerCIDR, o.Nodes[0].Name} {
			if prev, ok := seen[v]; ok {
				t.Errorf("control planes %d and %d share %q", prev, i, v)
			}
			seen[v] = i
		}
		if _, prefix, err := net.ParseCIDR(o.LoadBalancerCIDR); err != nil || prefix.IP.IsLoopback() {
			t.Errorf("control plane %d: bad load balancer range %q (%v)", i, o.LoadBalancerCIDR, err)
		}
	}
	if got := ControlPlaneOptionsFor(base, 0).Dir; got != "/tmp/suite/kcp-0" {
		t.Errorf("expected directory /tmp/suite/kcp-0, got %s", got)
	}
}

func TestFileTail(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := FileTail(path, 2); got != "two\nthree" {
		t.Errorf("expected the last two lines, got %q", got)
	}
	if got := FileTail(path+"-missing", 2); !strings.Contains(got, "can't read") {
		t.Errorf("expected a note about the missing file, got %q", got)
	}
}

func TestNodeInternalIPsAreDistinct(t *testing.T) {
	t.Parallel()

	nodes := []NodeSpec{{Name: "a"}, {Name: "b", InternalIP: "10.0.0.2"}, {Name: "c"}, {Name: "d"}}
	ips, err := nodeInternalIPs("10.0.0.1", nodes)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"}, ips); diff != "" {
		t.Errorf("unexpected IPs (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name    string
		first   string
		nodes   []NodeSpec
		wantErr string
	}{
		{name: "a bad first IP", first: "10.0.0", nodes: nodes, wantErr: `can't parse node IP "10.0.0"`},
		{name: "two nodes with one IP", first: "10.0.0.1", nodes: []NodeSpec{{Name: "a", InternalIP: "10.0.0.9"}, {Name: "b", InternalIP: "10.0.0.9"}},
			wantErr: `nodes "a" and "b" have the same InternalIP 10.0.0.9`},
		{name: "a bad node IP", first: "10.0.0.1", nodes: []NodeSpec{{Name: "a", InternalIP: "10.0.0.300"}},
			wantErr: `can't parse the InternalIP "10.0.0.300" of node "a"`},
		{name: "no address left", first: "255.255.255.255", nodes: []NodeSpec{{Name: "a"}, {Name: "b"}}, wantErr: `no address left after 255.255.255.255 for node "b"`},
	} {
		if _, err := nodeInternalIPs(tc.first, tc.nodes); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: expected an error containing %q, got %v", tc.name, tc.wantErr, err)
		}
	}
}
