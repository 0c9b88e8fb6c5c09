package scylladbbackupentry

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	objectstorefake "github.com/scyllakube/scylla-operator/pkg/objectstore/fake"
)

// sizeOf returns the bytes the fixture's store holds for keys ("data of <key>" each).
func sizeOf(keys []string) int64 {
	var n int64
	for _, k := range keys {
		n += int64(len("data of " + k))
	}
	return n
}

// expectInventory checks that entry records a finished inventory of exactly keys.
func expectInventory(t *testing.T, entry *scyllav1alpha1.ScyllaDBBackupEntry, keys []string) {
	t.Helper()
	type inventory struct {
		Objects, Bytes int64
		Type           scyllav1alpha1.ScyllaDBBackupEntryOperationType
		State          scyllav1alpha1.ScyllaDBBackupEntryOperationState
		Cursor         bool
	}
	want := inventory{
		Objects: int64(len(keys)), Bytes: sizeOf(keys),
		Type: scyllav1alpha1.ScyllaDBBackupEntryOperationTypeInventory, State: scyllav1alpha1.ScyllaDBBackupEntryOperationStateSucceeded,
	}
	var got inventory
	if entry.Status.Objects != nil {
		got.Objects = *entry.Status.Objects
	}
	if entry.Status.Bytes != nil {
		got.Bytes = *entry.Status.Bytes
	}
	if op := entry.Status.LastOperation; op != nil {
		got.Type, got.State = op.Type, op.State
	}
	_, got.Cursor = entry.Annotations[naming.ScyllaDBBackupInventoryCursorAnnotation]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected inventory (-want +got):\n%s", diff)
	}
}

// manyClusterKeys returns n keys of the test cluster's directory, spread over its three prefixes, sorted.
func manyClusterKeys(n int) []string {
	var keys []string
	for i := range n {
		kind := []string{"meta", "schema", "sst"}[i%3]
		keys = append(keys, fmt.Sprintf("backup/%s/cluster/%s/dc/dc1/node/n1/object-%03d", kind, testClusterID, i))
	}
	slices.Sort(keys)
	return keys
}

func TestInventoryCountsExactlyTheClusterKeysOnceWhenTheGracePeriodStarts(t *testing.T) {
	t.Parallel()

	f := newFixture(t, testDeleted.Add(time.Minute), goneObjects(deleted(newEntry())), allKeys(), newCredentialsSecret())
	f.mustSync(t)

	entry := f.testEntry(t)
	expectInventory(t, entry, clusterKeys(testClusterID))
	if got := conditionStatuses(entry); !slices.Equal(got, []string{"Available=True/EntryUsable", "Degraded=False/AsExpected", "Progressing=True/WaitingForGracePeriod"}) {
		t.Errorf("unexpected conditions %q", got)
	}
	if msg := entry.Status.LastOperation.Message; !strings.Contains(msg, fmt.Sprintf("%d objects, %d bytes", len(clusterKeys(testClusterID)), sizeOf(clusterKeys(testClusterID)))) {
		t.Errorf("expected the message to give the counts, got %q", msg)
	}
	if events := f.events(); !slices.ContainsFunc(events, func(e string) bool { return strings.HasPrefix(e, "Normal "+directoryCountedReason) }) {
		t.Errorf("expected a %s event, got %q", directoryCountedReason, events)
	}
	expectOnlyListing(t, f)
	expectKeys(t, f, allKeys())

	// At rest, and after a restart, the inventory is not repeated: no store call, no write.
	for _, restart := range []bool{false, true} {
		f.writes()
		f.clock.Set(f.clock.Now().Add(time.Hour))
		if restart {
			f.restart(t)
		}
		f.mustSync(t)
		if w := f.writes(); len(w) != 0 {
			t.Errorf("restart=%v: expected no writes, got %q", restart, w)
		}
		expectNoStoreCalls(t, f)
	}
}

func TestLargeInventoryResumesFromItsProgressAfterARestart(t *testing.T) {
	t.Parallel()

	keys := manyClusterKeys(11)
	all := append(slices.Clone(keys), foreignKeys()...)
	slices.Sort(all)
	f := newFixture(t, testDeleted.Add(time.Minute), goneObjects(deleted(newEntry())), all, newCredentialsSecret())
	f.batchSize = 2
	f.restart(t)
	f.controller.purgeBatchesPerSync = 2

	f.mustSync(t)

	entry := f.testEntry(t)
	var progress inventoryProgress
	if err := json.Unmarshal([]byte(entry.Annotations[naming.ScyllaDBBackupInventoryCursorAnnotation]), &progress); err != nil {
		t.Fatalf("can't read the inventory progress: %v", err)
	}
	if diff := cmp.Diff(inventoryProgress{After: keys[3], Objects: 4, Bytes: sizeOf(keys[:4])}, progress); diff != "" {
		t.Errorf("unexpected progress (-want +got):\n%s", diff)
	}
	if op := entry.Status.LastOperation; op == nil || op.Type != scyllav1alpha1.ScyllaDBBackupEntryOperationTypeInventory || op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateRunning {
		t.Errorf("expected a running inventory, got %+v", op)
	}
	if got := conditionState(entry, controllerhelpers.ProgressingCondition); got != "True/"+gracePeriodReason+","+inventoryingReason {
		t.Errorf("unexpected Progressing %s", got)
	}
	if !slices.Equal(f.queue.added, []string{testNamespace + "/" + testEntryName}) {
		t.Errorf("expected the entry requeued at once, got %q", f.queue.added)
	}

	// A restarted controller lists after the recorded key, and the totals are exact.
	f.storeCalls()
	f.restart(t)
	for range 3 {
		f.mustSync(t)
	}
	calls := f.storeCalls()
	if len(calls) == 0 || calls[0].Op != objectstorefake.OpListObjects || calls[0].StartAfter != keys[3] {
		t.Errorf("expected the first call to list after %q, got %+v", keys[3], calls)
	}
	for _, c := range calls {
		if c.Op != objectstorefake.OpListObjects {
			t.Errorf("expected only listings, got %+v", c)
		}
	}
	expectInventory(t, f.testEntry(t), keys)
	expectKeys(t, f, all)
}

func TestInventoryFailureIsDegradedRetriedAndNeverDelaysThePurge(t *testing.T) {
	t.Parallel()

	keys := manyClusterKeys(5)
	f := newFixture(t, testDeleted.Add(time.Minute), goneObjects(deleted(newEntry())), keys, newCredentialsSecret())
	f.batchSize = 2
	f.restart(t)

	// The second listing fails: the first batch was counted.
	lists := 0
	f.store.SetErrorFunc(func(c objectstorefake.Call) error {
		if c.Op == objectstorefake.OpListObjects {
			lists++
			if lists >= 2 {
				return errStoreDown
			}
		}
		return nil
	})
	f.controller.purgeBatchesPerSync = 1
	f.mustSync(t)
	f.controller.purgeBatchesPerSync = 10
	err := f.sync(t, testNamespace, testEntryName)
	if err == nil || !strings.Contains(err.Error(), errStoreDown.Error()) {
		t.Fatalf("expected the store's error, got %v", err)
	}
	entry := f.testEntry(t)
	if got := conditionState(entry, controllerhelpers.DegradedCondition); got != "True/"+inventoryFailedReason {
		t.Errorf("unexpected Degraded %s", got)
	}
	msg := conditionMessage(entry, controllerhelpers.DegradedCondition)
	if strings.Count(msg, "can't inventory") != 1 || !strings.Contains(msg, testClusterID) || !strings.Contains(msg, testBucketName) {
		t.Errorf("expected one message naming the cluster and the bucket, got %q", msg)
	}
	if op := entry.Status.LastOperation; op == nil || op.Type != scyllav1alpha1.ScyllaDBBackupEntryOperationTypeInventory || op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateFailed {
		t.Errorf("expected a failed inventory, got %+v", op)
	}
	if want, got := testGracePeriod-time.Minute, f.queue.after[testNamespace+"/"+testEntryName]; got != want {
		t.Errorf("expected the purge still scheduled after %v, got %v", want, got)
	}

	// Back, the inventory resumes where it was and the counts are exact.
	f.store.SetErrorFunc(nil)
	f.mustSync(t)
	expectInventory(t, f.testEntry(t), keys)

	// The grace period ends while the store is down again: the purge is not held back by the inventory, and the
	// store's error is reported once, with its context.
	f.clock.Set(afterGracePeriod)
	f.store.SetErrorFunc(func(objectstorefake.Call) error { return errStoreDown })
	if err := f.sync(t, testNamespace, testEntryName); err == nil {
		t.Fatal("expected the purge to fail")
	}
	entry = f.testEntry(t)
	msg = conditionMessage(entry, controllerhelpers.DegradedCondition)
	if got := conditionState(entry, controllerhelpers.DegradedCondition); got != "True/"+purgeFailedReason || strings.Count(msg, "can't purge") != 1 {
		t.Errorf("expected PurgeFailed saying so once, got %s %q", got, msg)
	}
	f.store.SetErrorFunc(nil)
	f.mustSync(t)
	expectKeys(t, f, nil)
}

func TestUnreadableInventoryProgressCountsFromTheStart(t *testing.T) {
	t.Parallel()

	for _, value := range []string{"not json", `{"after":"","objects":3,"bytes":10}`, `{"after":"x","objects":-1,"bytes":10}`} {
		t.Run(value, func(t *testing.T) {
			t.Parallel()
			entry := deleted(newEntry())
			entry.Annotations = map[string]string{naming.ScyllaDBBackupInventoryCursorAnnotation: value}
			entry.Status.LastOperation = inventoryOperation(scyllav1alpha1.ScyllaDBBackupEntryOperationStateRunning, "counting")
			f := newFixture(t, testDeleted.Add(time.Minute), goneObjects(entry), allKeys(), newCredentialsSecret())
			f.mustSync(t)
			calls := f.storeCalls()
			if len(calls) == 0 || calls[0].StartAfter != "" {
				t.Errorf("expected a listing from the start, got %+v", calls)
			}
			expectInventory(t, f.testEntry(t), clusterKeys(testClusterID))
		})
	}
}

func TestNoInventoryWhenTheGracePeriodIsOverOrTheEntryIsKept(t *testing.T) {
	t.Parallel()

	t.Run("grace period over: purged without an inventory first", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, afterGracePeriod, goneObjects(deleted(newEntry())), allKeys(), newCredentialsSecret())
		f.mustSync(t)
		// One walk through the three prefixes: the purge's.
		lists := 0
		for _, c := range f.storeCalls() {
			if c.Op == objectstorefake.OpListObjects {
				lists++
			}
		}
		if lists != 3 {
			t.Errorf("expected the three prefixes listed once, got %d listings", lists)
		}
		if events := f.events(); slices.ContainsFunc(events, func(e string) bool { return strings.Contains(e, directoryCountedReason) }) {
			t.Errorf("expected no inventory, got events %q", events)
		}
	})
	t.Run("keep: released without listing", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, testDeleted.Add(time.Minute), goneObjects(annotated(deleted(newEntry()), naming.ScyllaDBBackupRetentionKeep)), allKeys(), newCredentialsSecret())
		f.mustSync(t)
		expectNoStoreCalls(t, f)
	})
}
