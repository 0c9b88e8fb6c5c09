package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/scyllakube/scylla-operator/pkg/profiling"
)

// profiler collects the programs' pprof profiles over the converge phase: a CPU profile of the first seconds after
// the ScyllaClusters are created, and the heap (in use) once they converged.
type profiler struct {
	dir       string
	seconds   int
	addresses map[string]string

	wg   sync.WaitGroup
	lock sync.Mutex
	errs []error
}

// startProfiles starts a CPU profile of seconds of every program at addresses (their serving addresses, started with
// --profiling), written under dir; nil when seconds is 0.
func startProfiles(ctx context.Context, dir string, seconds int, addresses map[string]string) (*profiler, error) {
	if seconds == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p := &profiler{dir: dir, seconds: seconds, addresses: addresses}
	for name, address := range addresses {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			// The profile takes seconds to record; the client waits that long plus some.
			timeout := time.Duration(seconds)*time.Second + 30*time.Second
			if err := fetchProfile(ctx, timeout, "http://"+address+profiling.Path+"profile?seconds="+strconv.Itoa(seconds), filepath.Join(dir, name+"-cpu.pprof")); err != nil {
				p.lock.Lock()
				p.errs = append(p.errs, fmt.Errorf("%s CPU profile: %w", name, err))
				p.lock.Unlock()
			}
		}()
	}
	return p, nil
}

// finish records every program's heap profile, waits for the CPU profiles and returns the files' directory.
func (p *profiler) finish(ctx context.Context) error {
	if p == nil {
		return nil
	}
	for name, address := range p.addresses {
		if err := fetchProfile(ctx, 30*time.Second, "http://"+address+profiling.Path+"heap", filepath.Join(p.dir, name+"-heap.pprof")); err != nil {
			p.errs = append(p.errs, fmt.Errorf("%s heap profile: %w", name, err))
		}
	}
	p.wg.Wait()
	if len(p.errs) != 0 {
		return fmt.Errorf("%v", p.errs)
	}
	logf("profiles in %s (go tool pprof -top <file>)", p.dir)
	return nil
}

func fetchProfile(ctx context.Context, timeout time.Duration, url, path string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
