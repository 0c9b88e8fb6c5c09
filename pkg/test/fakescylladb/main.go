package fakescylladb

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

// Main runs the fake-scylladb program and returns its exit code. With "registry" as the first argument it serves a
// ring registry; otherwise it is a ScyllaDB node started with ScyllaDB's arguments (see the package documentation).
func Main(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	logger := log.New(stderr, "fake-scylladb: ", log.LstdFlags|log.Lmicroseconds)
	var err error
	if len(args) > 0 && args[0] == "registry" {
		err = runRegistry(ctx, args[1:], logger)
	} else {
		err = runNode(ctx, args, getenv, logger)
	}
	var exit exitCodeError
	switch {
	case errors.As(err, &exit):
		return int(exit)
	case err != nil:
		logger.Printf("error: %v", err)
		return 1
	}
	return 0
}

type exitCodeError int

func (e exitCodeError) Error() string { return fmt.Sprintf("exit code %d", int(e)) }

func runRegistry(ctx context.Context, args []string, logger *log.Logger) error {
	fs := flag.NewFlagSet("registry", flag.ContinueOnError)
	fs.SetOutput(logger.Writer())
	listen := fs.String("listen-address", "127.0.0.1:0", "host:port to serve the registry on.")
	addressFile := fs.String("address-file", "", "If set, the registry's base URL is written to this file once it listens.")
	ttl := fs.Duration("ttl", 5*time.Second, "A node that hasn't heartbeated for this long reads as Down; 0 disables expiry.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	if *ttl < 0 {
		return fmt.Errorf("--ttl must not be negative, got %v", *ttl)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("can't listen on %q: %w", *listen, err)
	}
	url := "http://" + l.Addr().String()
	if *addressFile != "" {
		if err := os.WriteFile(*addressFile, []byte(url+"\n"), 0o644); err != nil {
			return fmt.Errorf("can't write the address file: %w", err)
		}
	}
	logger.Printf("registry serving on %s", url)
	srv := &http.Server{Handler: NewRegistry(*ttl).Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func runNode(ctx context.Context, args []string, getenv func(string) string, logger *log.Logger) error {
	recordPath := getenv(EnvRecordPath)
	inv, err := ParseInvocation(args, getenv(ConfigDirEnv))
	if err != nil {
		appendRecordOrLog(recordPath, Record{Args: args, Error: err.Error()}, logger)
		return err
	}
	knobs, err := KnobsFromEnv(getenv)
	if err != nil {
		return err
	}
	registry, err := NewRegistryClient(getenv(EnvRegistryURL))
	if err != nil {
		return fmt.Errorf("%s: %w", EnvRegistryURL, err)
	}
	var resolver Resolver
	if v := getenv(EnvResolverURL); v != "" {
		if resolver, err = NewResolverClient(v); err != nil {
			return fmt.Errorf("%s: %w", EnvResolverURL, err)
		}
	}
	heartbeat := time.Second
	if v := getenv(EnvHeartbeatInterval); v != "" {
		heartbeat, err = time.ParseDuration(v)
		if err != nil || heartbeat <= 0 {
			return fmt.Errorf("%s must be a positive Go duration, got %q", EnvHeartbeatInterval, v)
		}
	}
	node, err := NewNode(NodeOptions{
		Invocation:        inv,
		Registry:          registry,
		Resolver:          resolver,
		RecordPath:        recordPath,
		Aliases:           SplitList(getenv(EnvAliasAddresses)),
		Knobs:             knobs,
		HeartbeatInterval: heartbeat,
		Logger:            logger,
	})
	if err != nil {
		appendRecordOrLog(recordPath, Record{Invocation: inv, Args: args, Error: err.Error()}, logger)
		return err
	}
	appendRecordOrLog(recordPath, node.record, logger)
	logger.Printf("starting node %s: cluster %q, dc %q, rack %q, broadcast %s, seeds %v, API %s",
		node.HostID(), inv.Settings.ClusterName, inv.Settings.Datacenter, inv.Settings.Rack,
		inv.Settings.BroadcastAddress, inv.Settings.Seeds, node.APIAddress())
	if id := node.ReplaceHostID(); id != "" {
		logger.Printf("node %s replaces node %s", node.HostID(), id)
	}
	if knobs.ExitCode != nil {
		logger.Printf("exiting with code %d as %s asks", *knobs.ExitCode, EnvExitCode)
		return exitCodeError(*knobs.ExitCode)
	}
	if node.IsDecommissioned() {
		return ErrDecommissioned
	}
	l, err := net.Listen("tcp", node.APIAddress())
	if err != nil {
		return fmt.Errorf("can't serve the REST API: %w", err)
	}
	if err := node.Run(ctx, l); err != nil {
		node.recordError(err)
		return err
	}
	return nil
}

func appendRecordOrLog(path string, r Record, logger *log.Logger) {
	if path == "" {
		return
	}
	if err := AppendRecord(path, r); err != nil {
		logger.Printf("can't record the invocation: %v", err)
	}
}

// AppendRecord adds r to the JSON array in the file at path, creating it if needed.
func AppendRecord(path string, r Record) error {
	records, err := ReadRecords(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	return writeRecords(path, append(records, r))
}

// writeRecords replaces the file at path with records, atomically.
func writeRecords(path string, records []Record) error {
	data, err := json.MarshalIndent(records, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// replaceLastRecord puts r in place of the last record in the file at path, this start's. A file without records
// gets r appended.
func replaceLastRecord(path string, r Record) error {
	records, err := ReadRecords(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if len(records) == 0 {
		return AppendRecord(path, r)
	}
	records[len(records)-1] = r
	return writeRecords(path, records)
}

// ReadRecords reads the records of every start from the file at path, oldest first.
func ReadRecords(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var records []Record
	if err := json.Unmarshal(data, &records); err != nil {
		return nil, fmt.Errorf("can't parse record file %q: %w", path, err)
	}
	return records, nil
}
