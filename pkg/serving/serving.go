// Package serving serves a program's /healthz, /readyz and /metrics endpoints, and its profiles when asked.
package serving

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"github.com/scyllakube/scylla-operator/pkg/profiling"

	// Registers client-go's request and workqueue metrics with the legacy registry served on /metrics.
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
)

// Checker is one health or readiness check. client-go's leader election HealthzAdaptor is one.
type Checker interface {
	Name() string
	Check(req *http.Request) error
}

// CheckFunc adapts a function to a Checker.
type CheckFunc struct {
	CheckName string
	F         func() error
}

// Name returns the check's name.
func (c CheckFunc) Name() string { return c.CheckName }

// Check runs the check.
func (c CheckFunc) Check(*http.Request) error { return c.F() }

// Options hold the serving flags.
type Options struct {
	Address string
	// Profiling also serves net/http/pprof's profiles under /debug/pprof/. Off by default: they expose the program's
	// memory and command line, and a CPU profile or trace costs CPU, to whoever reaches Address.
	Profiling bool
}

// NewOptions returns serving options with the given default address.
func NewOptions(defaultAddress string) Options {
	return Options{Address: defaultAddress}
}

// AddFlags registers the serving flags.
func (o *Options) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.Address, "serving-address", o.Address, "Address of the /healthz, /readyz and /metrics endpoints; empty turns them off.")
	cmd.Flags().BoolVar(&o.Profiling, "profiling", o.Profiling, "Also serve net/http/pprof's profiles under /debug/pprof/ on --serving-address; they expose the program's memory to whoever reaches that address.")
}

// Validate rejects an address that can't be listened on, and profiling with nothing to serve it on.
func (o *Options) Validate() error {
	if len(o.Address) == 0 {
		if o.Profiling {
			return errors.New("--profiling needs a --serving-address")
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(o.Address); err != nil {
		return fmt.Errorf("--serving-address %q is not host:port: %w", o.Address, err)
	}
	return nil
}

// Handler returns the mux serving /healthz, /readyz and /metrics, and with Profiling the profiles under
// profiling.Path.
func (o *Options) Handler(healthz, readyz []Checker) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/healthz", checksHandler(healthz))
	mux.Handle("/readyz", checksHandler(readyz))
	mux.Handle("/metrics", legacyregistry.Handler())
	if o.Profiling {
		profiling.Register(mux)
	}
	return mux
}

func checksHandler(checks []Checker) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var failed []string
		for _, c := range checks {
			if err := c.Check(req); err != nil {
				failed = append(failed, fmt.Sprintf("%s: %v", c.Name(), err))
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if len(failed) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintln(w, strings.Join(failed, "\n"))
			return
		}
		_, _ = fmt.Fprintln(w, "ok")
	})
}

// Run serves until ctx is done, then shuts the server down. It returns once the listener is closed.
func (o *Options) Run(ctx context.Context, handler http.Handler) error {
	if len(o.Address) == 0 {
		<-ctx.Done()
		return nil
	}
	l, err := net.Listen("tcp", o.Address)
	if err != nil {
		return fmt.Errorf("can't listen on %q: %w", o.Address, err)
	}
	klog.InfoS("Serving health and metrics endpoints", "address", l.Addr().String(), "profiling", o.Profiling)
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("can't serve on %q: %w", o.Address, err)
	}
	return nil
}
