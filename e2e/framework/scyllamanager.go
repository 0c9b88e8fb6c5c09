package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

// FakeScyllaDBManager is a fake ScyllaDB Manager server (e2e/cmd/fake-scylladb-manager) running as a process beside
// a control plane, as ScyllaDB Manager runs beside the manager-controller.
type FakeScyllaDBManager struct {
	Process *Process
	// URL is the server's base URL, such as http://127.0.0.1:41234.
	URL string
}

// StartFakeScyllaDBManager starts a fake ScyllaDB Manager for the rest of the test and waits until it listens.
func (f *Framework) StartFakeScyllaDBManager(c *Cluster, name string) *FakeScyllaDBManager {
	f.t.Helper()
	return f.StartFakeScyllaDBManagerWithArgs(c, name)
}

// StartFakeScyllaDBManagerWithArgs is StartFakeScyllaDBManager with more arguments for the fake, such as
// --bearer-token or --knobs-file.
func (f *Framework) StartFakeScyllaDBManagerWithArgs(c *Cluster, name string, args ...string) *FakeScyllaDBManager {
	f.t.Helper()
	addressFile := filepath.Join(c.ControlPlane.Dir, name+".address")
	_ = os.Remove(addressFile)
	p := f.StartProgram(c, Program{
		Name:    name,
		Package: "./e2e/cmd/fake-scylladb-manager",
		Args:    append([]string{"--listen-address=127.0.0.1:0", "--address-file=" + addressFile}, args...),
	})
	var url string
	f.WaitFor(30*time.Second, "the fake ScyllaDB Manager to listen", func(context.Context) (bool, error) {
		if exited, err := p.Exited(); exited {
			return false, StopPolling(fmt.Errorf("the fake ScyllaDB Manager exited: %v", err))
		}
		b, err := os.ReadFile(addressFile)
		if err != nil {
			return false, nil
		}
		url = strings.TrimSpace(string(b))
		return url != "", nil
	})
	return &FakeScyllaDBManager{Process: p, URL: url}
}

// State returns what the fake ScyllaDB Manager holds (clusters, tasks with their properties, deleted ones
// included) through its read-only inspection endpoint, without going through the client under test.
func (m *FakeScyllaDBManager) State(ctx context.Context) (fakescyllamanager.State, error) {
	var st fakescyllamanager.State
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.URL+"/fake/state", nil)
	if err != nil {
		return st, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, fmt.Errorf("can't get the fake ScyllaDB Manager's state: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("can't get the fake ScyllaDB Manager's state: HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("can't decode the fake ScyllaDB Manager's state: %w", err)
	}
	return st, nil
}
