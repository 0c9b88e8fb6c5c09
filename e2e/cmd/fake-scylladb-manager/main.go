// Command fake-scylladb-manager serves the in-memory fake ScyllaDB Manager REST API of package
// github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager on a local address, for hack/local-up.sh and e2e
// tests. It prints "Listening on <URL>" once it accepts connections, logs every request (never bodies), and stops on
// SIGINT or SIGTERM.
//
// Besides the ScyllaDB Manager API it serves /fake/state (read-only inspection), /fake/knobs (GET and PUT) and
// /fake/requests (GET, DELETE).
//
// Started backup tasks upload a small backup, laid out as ScyllaDB Manager's, to the buckets the "s3Endpoints"
// knob describes (by --knobs-file or PUT /fake/knobs), for example
// {"s3Endpoints":{"s3:backups":{"endpoint":"http://127.0.0.1:7070","region":"us-east-1","accessKeyID":"...","secretAccessKey":"..."}}};
// prefer the knobs file or the PUT to flags, which any local user can read.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

// shutdownTimeout bounds the graceful shutdown.
const shutdownTimeout = 5 * time.Second

type options struct {
	listenAddress       string
	addressFile         string
	managerVersion      string
	serverTimezone      string
	bearerToken         string
	knobsFile           string
	defaultTopologyFile string
	tlsCertFile         string
	tlsKeyFile          string
}

func newOptions() *options {
	return &options{
		listenAddress:  "127.0.0.1:0",
		managerVersion: fakescyllamanager.DefaultVersion,
		serverTimezone: "UTC",
	}
}

func (o *options) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.listenAddress, "listen-address", o.listenAddress,
		"Address to listen on. Port 0 picks a free port; the chosen address is printed as \"Listening on <URL>\".")
	fs.StringVar(&o.addressFile, "address-file", o.addressFile,
		"If set, the URL the server listens on is written to this file once it accepts connections.")
	fs.StringVar(&o.managerVersion, "manager-version", o.managerVersion, "ScyllaDB Manager version to report.")
	fs.StringVar(&o.serverTimezone, "server-timezone", o.serverTimezone,
		"IANA name of the server's local zone, given to the auto-created weekly repair task.")
	fs.StringVar(&o.bearerToken, "bearer-token", o.bearerToken,
		"If set, API requests must carry \"Authorization: Bearer <token>\" (a fake-only check).")
	fs.StringVar(&o.knobsFile, "knobs-file", o.knobsFile,
		"JSON file with the initial knobs, in the format of GET /fake/knobs.")
	fs.StringVar(&o.defaultTopologyFile, "default-topology-file", o.defaultTopologyFile,
		"JSON file with the topology of hosts that have none in the knobs: {\"datacenters\":[{\"name\":...,\"nodes\":[{\"address\":...}]}],\"keyspaces\":[...]}.")
	fs.StringVar(&o.tlsCertFile, "tls-cert-file", o.tlsCertFile, "PEM certificate to serve HTTPS with; requires --tls-key-file.")
	fs.StringVar(&o.tlsKeyFile, "tls-key-file", o.tlsKeyFile, "PEM key of --tls-cert-file.")
}

// complete reads the files the flags name and builds the server options and initial knobs.
func (o *options) complete() (fakescyllamanager.Options, *fakescyllamanager.Knobs, error) {
	opts := fakescyllamanager.Options{
		Version:        o.managerVersion,
		ServerTimezone: o.serverTimezone,
		BearerToken:    o.bearerToken,
	}
	if o.defaultTopologyFile != "" {
		var t fakescyllamanager.Topology
		if err := readJSONFile(o.defaultTopologyFile, &t); err != nil {
			return opts, nil, fmt.Errorf("--default-topology-file: %w", err)
		}
		opts.DefaultTopology = &t
	}
	var knobs *fakescyllamanager.Knobs
	if o.knobsFile != "" {
		knobs = &fakescyllamanager.Knobs{}
		if err := readJSONFile(o.knobsFile, knobs); err != nil {
			return opts, nil, fmt.Errorf("--knobs-file: %w", err)
		}
	}
	return opts, knobs, nil
}

func (o *options) validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(o.listenAddress); err != nil {
		errs = append(errs, fmt.Errorf("--listen-address %q must be host:port: %w", o.listenAddress, err))
	}
	if o.managerVersion == "" {
		errs = append(errs, errors.New("--manager-version must not be empty"))
	}
	if (o.tlsCertFile == "") != (o.tlsKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-key-file must be set together"))
	}
	return errors.Join(errs...)
}

func readJSONFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("can't decode %s: %w", path, err)
	}
	return nil
}

func main() {
	klog.InitFlags(nil)
	o := newOptions()
	o.addFlags(flag.CommandLine)
	flag.Parse()

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, o, os.Stdout, logRequest); err != nil {
		klog.ErrorS(err, "fake-scylladb-manager failed")
		klog.Flush()
		os.Exit(1)
	}
	klog.Flush()
}

// logRequest logs a handled request; bodies, which carry credentials, are never logged.
func logRequest(r fakescyllamanager.Request) {
	klog.InfoS("Handled request", "method", r.Method, "path", r.Path, "query", r.Query, "endpoint", r.Endpoint,
		"status", r.Status, "duration", r.Duration)
}

// run serves until ctx ends. It prints the URL it listens on to out.
func run(ctx context.Context, o *options, out io.Writer, onRequest func(fakescyllamanager.Request)) error {
	if err := o.validate(); err != nil {
		return err
	}
	opts, knobs, err := o.complete()
	if err != nil {
		return err
	}
	opts.OnRequest = onRequest
	srv, err := fakescyllamanager.NewServer(opts)
	if err != nil {
		return err
	}
	if knobs != nil {
		if err := srv.SetKnobs(*knobs); err != nil {
			return fmt.Errorf("--knobs-file: %w", err)
		}
	}

	ln, err := net.Listen("tcp", o.listenAddress)
	if err != nil {
		return fmt.Errorf("can't listen on %s: %w", o.listenAddress, err)
	}
	scheme := "http"
	if o.tlsCertFile != "" {
		scheme = "https"
	}
	url := scheme + "://" + ln.Addr().String()

	httpServer := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() {
		if o.tlsCertFile != "" {
			serveErr <- httpServer.ServeTLS(ln, o.tlsCertFile, o.tlsKeyFile)
			return
		}
		serveErr <- httpServer.Serve(ln)
	}()

	if o.addressFile != "" {
		if err := os.WriteFile(o.addressFile, []byte(url+"\n"), 0o644); err != nil {
			_ = httpServer.Close()
			return fmt.Errorf("can't write --address-file: %w", err)
		}
	}
	if _, err := fmt.Fprintf(out, "Listening on %s\n", url); err != nil {
		_ = httpServer.Close()
		return fmt.Errorf("can't print the address: %w", err)
	}
	klog.InfoS("Serving fake ScyllaDB Manager", "url", url, "version", opts.Version)

	select {
	case err := <-serveErr:
		return fmt.Errorf("can't serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := httpServer.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("can't shut down: %w", err)
	}
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("can't serve: %w", err)
	}
	return nil
}
