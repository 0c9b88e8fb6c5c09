// Command fake-scylladb stands in for ScyllaDB in tests and the local demo. Run as "fake-scylladb registry" it serves
// the ring registry; run with ScyllaDB's arguments it is one ScyllaDB node. See package
// github.com/scyllakube/scylla-operator/pkg/test/fakescylladb for its configuration and endpoints.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := fakescylladb.Main(ctx, os.Args[1:], os.Getenv, os.Stderr)
	stop()
	os.Exit(code)
}
