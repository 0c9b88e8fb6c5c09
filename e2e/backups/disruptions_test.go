//go:build e2e

package backups

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// s3Downtime is how long the S3 server stays down once the purge has failed; the queue's back-off after it grows
// with it.
const s3Downtime = 10 * time.Second

// TestPurgeWaitsForTheS3ServerAndSurvivesKilledManagerControllers: a deleted cluster's entry outlives a
// manager-controller SIGKILLed during the grace period (the next replica keeps the purgeAfter computed from the
// timestamps); with the S3 server down when the grace period ends, the purge fails, the entry keeps its finalizer
// and says why, also across another SIGKILL; once the server is back the purge completes, removing exactly the
// deleted cluster's keys.
func TestPurgeWaitsForTheS3ServerAndSurvivesKilledManagerControllers(t *testing.T) {
	sc := newScenario(t, "e2e-disrupted", "doomed", "survivor")
	ctx := t.Context()
	s, scylla, ns := sc.s, sc.scylla, sc.ns
	doomed, survivor := sc.clusters["doomed"], sc.clusters["survivor"]

	deletedAt := time.Now()
	if err := scylla.ScyllaV1().ScyllaClusters(ns).Delete(ctx, doomed.name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("can't delete ScyllaCluster %q: %v", doomed.name, err)
	}
	purgeAfter := sc.waitForHeld(doomed, deletedAt)
	t.Logf("ScyllaDBBackupEntry %q is held until %s", doomed.entry, purgeAfter.UTC().Format(time.RFC3339))

	// A replica SIGKILLed during the grace period; the S3 server goes down before the grace period ends.
	s.killManagerController()
	if err := s.s3.Stop(); err != nil {
		t.Fatalf("can't stop the S3 server: %v", err)
	}
	t.Logf("stopped the S3 server %v before purgeAfter", time.Until(purgeAfter).Round(time.Millisecond))
	s.startManagerController()

	getEntry := func(ctx context.Context) (*scyllav1alpha1.ScyllaDBBackupEntry, error) {
		e, err := scylla.ScyllaV1alpha1().ScyllaDBBackupEntries(ns).Get(ctx, doomed.entry, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("ScyllaDBBackupEntry %q must stay while its directory can't be purged: %w", doomed.entry, err)
		}
		if !slices.Contains(e.Finalizers, naming.ScyllaDBBackupEntryFinalizer) {
			return nil, framework.StopPolling(fmt.Errorf("the entry lost its finalizer while its directory can't be purged: %s", describeEntry(e)))
		}
		if e.Status.PurgeAfter == nil || !e.Status.PurgeAfter.Time.Equal(purgeAfter) {
			return nil, framework.StopPolling(fmt.Errorf("status.purgeAfter moved from %s: %s", purgeAfter.UTC().Format(time.RFC3339), describeEntry(e)))
		}
		return e, nil
	}
	purgeFailed := func(ctx context.Context) (bool, error) {
		e, err := getEntry(ctx)
		if err != nil {
			return false, err
		}
		op := e.Status.LastOperation
		if op == nil || op.Type != scyllav1alpha1.ScyllaDBBackupEntryOperationTypePurge || op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateFailed {
			return false, fmt.Errorf("no failed purge yet: %s", describeEntry(e))
		}
		if c := meta.FindStatusCondition(e.Status.Conditions, "Degraded"); c == nil || c.Status != metav1.ConditionTrue {
			return false, fmt.Errorf("not Degraded: %s", describeEntry(e))
		}
		return true, nil
	}
	s.waitFor(time.Until(purgeAfter)+purgeTimeout, fmt.Sprintf("the purge of ScyllaDBBackupEntry %q to fail while the S3 server is down, keeping the finalizer and purgeAfter", doomed.entry), purgeFailed)
	if now := time.Now(); now.Before(purgeAfter.Add(-clockSkew)) {
		t.Errorf("the purge was tried at %s, before purgeAfter %s", now.UTC().Format(time.RFC3339Nano), purgeAfter.UTC().Format(time.RFC3339))
	}
	if e, err := getEntry(ctx); err == nil {
		t.Logf("the purge failed as the S3 server is down: %s", describeEntry(e))
	}

	// Another SIGKILL while the purge fails and is retried: the next replica picks the purge up again.
	s.killManagerController()
	s.startManagerController()
	downUntil := time.Now().Add(s3Downtime)
	for time.Now().Before(downUntil) {
		if _, err := getEntry(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
	}
	if err := s.s3.Restart(ctx); err != nil {
		t.Fatalf("can't restart the S3 server: %v", err)
	}
	t.Logf("restarted the S3 server")

	sc.waitForEntryGone(doomed.entry, 2*time.Minute, fmt.Sprintf("ScyllaDBBackupEntry %q to purge its directory once the S3 server is back, and be gone", doomed.entry))
	if left := sc.listDirectory(doomed.clusterID); len(left) != 0 {
		t.Errorf("%d keys of the purged cluster %q remain in the bucket:\n  %s", len(left), doomed.name, strings.Join(left, "\n  "))
	}
	if diff := cmp.Diff(survivor.keys, sc.listAll()); diff != "" {
		t.Errorf("after the purge, the bucket is not exactly the surviving cluster's directory as listed before (-before +now):\n%s", diff)
	}
}
