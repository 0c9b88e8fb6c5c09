package scylladbbackupentry

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	objectstorefake "github.com/scyllakube/scylla-operator/pkg/objectstore/fake"
)

// makeVersioned enables versioning on the fixture's bucket, whose keys hold a null version each, writes two more
// versions of every key, and deletes deleted (a delete marker each).
func makeVersioned(t *testing.T, f *fixture, deleted []string) {
	t.Helper()
	f.store.SetVersioning(testBucketName, objectstore.VersioningEnabled)
	keys := f.store.Keys(testBucketName)
	for range 2 {
		for _, k := range keys {
			if err := f.store.PutObject(t.Context(), testBucketName, k, []byte("newer data of "+k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.store.DeleteObjects(t.Context(), testBucketName, deleted); err != nil {
		t.Fatal(err)
	}
	f.store.ResetCalls()
}

// directoryVersions returns the versions of the bucket under the test directory's prefixes, or outside them.
func directoryVersions(t *testing.T, f *fixture, inside bool) []objectstore.ObjectVersion {
	t.Helper()
	prefixes, err := objectstore.ClusterPrefixes(testClusterID)
	if err != nil {
		t.Fatal(err)
	}
	var out []objectstore.ObjectVersion
	for _, v := range f.store.Versions(testBucketName) {
		in := slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(v.Key, p) })
		if in == inside {
			out = append(out, v)
		}
	}
	return out
}

func TestPurgeOfAVersionedBucketFreesEveryVersionAndResumesAfterARestart(t *testing.T) {
	t.Parallel()

	f := newFixture(t, afterGracePeriod, goneObjects(deleted(newEntry())), allKeys(), newCredentialsSecret())
	f.batchSize = 4
	f.restart(t)
	makeVersioned(t, f, []string{clusterKeys(testClusterID)[0], clusterKeys(testClusterID)[4], foreignKeys()[0]})
	others := directoryVersions(t, f, false)
	var dataVersions int64
	for _, v := range directoryVersions(t, f, true) {
		if !v.DeleteMarker {
			dataVersions++
		}
	}
	if dataVersions != 3*int64(len(clusterKeys(testClusterID))) {
		t.Fatalf("the directory holds %d versions, want 3 per key", dataVersions)
	}

	// Two batches of four, then a restart, as if the manager-controller were killed between two syncs.
	f.controller.purgeBatchesPerSync = 2
	f.mustSync(t)
	entry := f.testEntry(t)
	if cursor := entry.Annotations[naming.ScyllaDBBackupPurgeCursorAnnotation]; !strings.HasPrefix(cursor, "versions:") {
		t.Errorf("expected a cursor through versions, got %q", cursor)
	}
	if op := entry.Status.LastOperation; op == nil || op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateRunning {
		t.Errorf("unexpected lastOperation %+v", op)
	}
	f.restart(t)
	f.controller.purgeBatchesPerSync = 2
	for i := 0; len(f.testEntry(t).Finalizers) != 0; i++ {
		if i == 20 {
			t.Fatal("the purge did not finish in 20 syncs")
		}
		f.mustSync(t)
	}

	if left := directoryVersions(t, f, true); len(left) != 0 {
		t.Errorf("expected no version or delete marker left in the directory, got %v", left)
	}
	if diff := cmp.Diff(others, directoryVersions(t, f, false)); diff != "" {
		t.Errorf("versions outside the directory differ (-want +got):\n%s", diff)
	}
	if op := f.testEntry(t).Status.LastOperation; op == nil || op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateSucceeded ||
		op.ObjectsDeleted == nil || *op.ObjectsDeleted != dataVersions {
		t.Errorf("expected a succeeded purge of %d versions, got %+v", dataVersions, op)
	}
	versioning := 0
	for _, c := range f.store.Calls() {
		switch c.Op {
		case objectstorefake.OpGetBucketVersioning:
			versioning++
		case objectstorefake.OpListObjectVersions, objectstorefake.OpDeleteObjectVersions:
		default:
			t.Errorf("unexpected call %+v in a versioned bucket", c)
		}
	}
	if versioning != 1 {
		t.Errorf("expected the versioning asked once for the whole purge, got %d times", versioning)
	}
}

func TestPurgeOfAVersionObjectLockKeepsIsDegradedWithTheStoresMessage(t *testing.T) {
	t.Parallel()

	f := newFixture(t, afterGracePeriod, goneObjects(deleted(newEntry())), allKeys(), newCredentialsSecret())
	makeVersioned(t, f, nil)
	locked := directoryVersions(t, f, true)[2]
	const lockMessage = "Access Denied because object protected by object lock."
	f.store.SetErrorFunc(func(c objectstorefake.Call) error {
		if c.Op == objectstorefake.OpDeleteObjectVersions && c.Key == locked.Key && c.VersionID == locked.VersionID {
			return objectstorefake.ErrorResponse(objectstore.ErrorCodeAccessDenied, lockMessage, http.StatusForbidden)
		}
		return nil
	})

	if err := f.sync(t, testNamespace, testEntryName); err == nil {
		t.Fatal("expected the sync to fail, so that the queue backs off")
	}
	entry := f.testEntry(t)
	if got := conditionState(entry, controllerhelpers.DegradedCondition); got != "True/"+storeAuthErrorReason {
		t.Errorf("expected Degraded True/%s, got %s", storeAuthErrorReason, got)
	}
	msg := conditionMessage(entry, controllerhelpers.DegradedCondition)
	for _, want := range []string{lockMessage, locked.Key, locked.VersionID} {
		if !strings.Contains(msg, want) {
			t.Errorf("expected the Degraded message to say %q, got %q", want, msg)
		}
	}
	if op := entry.Status.LastOperation; op == nil || op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateFailed || !strings.Contains(op.Message, lockMessage) {
		t.Errorf("unexpected lastOperation %+v", op)
	}
	if !slices.Equal(entry.Finalizers, []string{naming.ScyllaDBBackupEntryFinalizer}) {
		t.Errorf("unexpected finalizers %q", entry.Finalizers)
	}
	if left := directoryVersions(t, f, true); !slices.Equal(left, []objectstore.ObjectVersion{locked}) {
		t.Errorf("expected only the locked version left, got %v", left)
	}
	f.writes()

	// A retry that meets the same refusal writes nothing: no update event takes the entry up again before its
	// back-off.
	f.store.ResetCalls()
	if err := f.sync(t, testNamespace, testEntryName); err == nil {
		t.Fatal("expected the retry to fail")
	}
	if w := f.writes(); len(w) != 0 {
		t.Errorf("expected no write on a retry that fails the same way, got %q", w)
	}
	if len(f.queue.added) != 0 {
		t.Errorf("expected no immediate requeue, got %q", f.queue.added)
	}
}

// TestPurgeWithCredentialsThatMayNotReadTheVersioningSaysSo: credentials refused the bucket's versioning (ScyllaDB
// Manager's S3 policy grants no s3:GetBucketVersioning) purge current keys, as before versioned buckets were purged,
// and a Warning event says that in a versioned bucket the older versions stay.
func TestPurgeWithCredentialsThatMayNotReadTheVersioningSaysSo(t *testing.T) {
	t.Parallel()

	f := newFixture(t, afterGracePeriod, goneObjects(deleted(newEntry())), allKeys(), newCredentialsSecret())
	f.store.SetErrorFunc(func(c objectstorefake.Call) error {
		if c.Op == objectstorefake.OpGetBucketVersioning {
			return objectstorefake.ErrorResponse(objectstore.ErrorCodeAccessDenied, "Access Denied.", http.StatusForbidden)
		}
		return nil
	})
	for i := 0; f.testEntry(t).Status.LastOperation == nil || f.testEntry(t).Status.LastOperation.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateSucceeded; i++ {
		if i == 20 {
			t.Fatal("the purge did not finish in 20 syncs")
		}
		f.mustSync(t)
	}
	var warnings []string
	for _, e := range f.events() {
		if strings.HasPrefix(e, "Warning "+bucketVersioningUnknownReason) {
			warnings = append(warnings, e)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "Access Denied.") || !strings.Contains(warnings[0], "s3:GetBucketVersioning") {
		t.Errorf("expected one %s warning naming the refusal and the permission, got %q", bucketVersioningUnknownReason, warnings)
	}
}
