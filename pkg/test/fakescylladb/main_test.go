package fakescylladb

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMainServesARegistry(t *testing.T) {
	t.Parallel()
	addressFile := filepath.Join(t.TempDir(), "address")
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		code <- Main(ctx, []string{"registry", "--listen-address=127.0.0.1:0", "--address-file=" + addressFile, "--ttl=0"}, func(string) string { return "" }, &stderr)
	}()
	var url string
	for url == "" {
		if data, err := os.ReadFile(addressFile); err == nil && strings.HasSuffix(string(data), "\n") {
			url = strings.TrimSpace(string(data))
		}
		time.Sleep(5 * time.Millisecond)
	}
	c, err := NewRegistryClient(url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Join(context.Background(), join("a", "c", "10.0.0.1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	rings, err := c.Rings(context.Background())
	if err != nil || len(rings) != 1 {
		t.Fatalf("Rings() = %v, %v", rings, err)
	}
	cancel()
	if got := <-code; got != 0 {
		t.Errorf("registry exited with %d: %s", got, stderr.String())
	}
}

func TestMainNodeRecordsAndHonoursTheExitCodeKnob(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t, "cluster_name: prod\nworkdir: "+filepath.Join(t.TempDir(), "data")+"\n", "dc=dc1\nrack=r1\n")
	record := filepath.Join(t.TempDir(), "record.json")
	env := map[string]string{
		ConfigDirEnv:   dir,
		EnvRecordPath:  record,
		EnvRegistryURL: "http://127.0.0.1:1",
		EnvExitCode:    "9",
	}
	var stderr bytes.Buffer
	args := []string{"--seeds=10.0.0.1", "--broadcast-address=10.0.0.1"}
	for i := 0; i < 2; i++ {
		if code := Main(context.Background(), args, func(k string) string { return env[k] }, &stderr); code != 9 {
			t.Fatalf("exit code %d, want 9: %s", code, stderr.String())
		}
	}
	records, err := ReadRecords(record)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 2 || records[0].HostID == "" || records[0].HostID != records[1].HostID {
		t.Fatalf("want two starts with one host ID, got %+v", records)
	}
	if s := records[1].Invocation.Settings; s.ClusterName != "prod" || s.BroadcastAddress != "10.0.0.1" || s.Datacenter != "dc1" {
		t.Errorf("unexpected settings %+v", s)
	}
}

func TestMainNodeFailsWithoutALiveSeed(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	srvURL := serveRegistry(t, reg)
	dir := writeConfig(t, "cluster_name: prod\napi_address: 127.0.0.1\napi_port: 0\nworkdir: "+filepath.Join(t.TempDir(), "data")+"\n", "")
	env := map[string]string{ConfigDirEnv: dir, EnvRegistryURL: srvURL}
	var stderr bytes.Buffer
	code := Main(context.Background(), []string{"--seeds=10.0.0.1", "--broadcast-address=10.0.0.2"}, func(k string) string { return env[k] }, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "no live node at any of its seeds [10.0.0.1]") {
		t.Errorf("exit code %d, stderr %s", code, stderr.String())
	}
}

func serveRegistry(t *testing.T, reg *Registry) string {
	t.Helper()
	srv := httptest.NewServer(reg.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}
