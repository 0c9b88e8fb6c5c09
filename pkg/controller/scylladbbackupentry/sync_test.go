package scylladbbackupentry

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	objectstorefake "github.com/scyllakube/scylla-operator/pkg/objectstore/fake"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
)

// afterGracePeriod is a time past the test bucket's grace period of an entry deleted at testDeleted.
var afterGracePeriod = testDeleted.Add(testGracePeriod + time.Minute)

// usedObjects are the API objects of a cluster that uses the test bucket.
func usedObjects() []runtime.Object {
	return []runtime.Object{newBucket(), newDatacenter(), newEntry()}
}

// goneObjects are the API objects once the test cluster is deleted: its entry, deleted, and the bucket.
func goneObjects(entry *scyllav1alpha1.ScyllaDBBackupEntry) []runtime.Object {
	return []runtime.Object{newBucket(), entry}
}

func expectNoStoreCalls(t *testing.T, f *fixture) {
	t.Helper()
	if len(f.storeConfigs) != 0 {
		t.Errorf("expected no object store to be built, got %d", len(f.storeConfigs))
	}
	if calls := f.storeCalls(); len(calls) != 0 {
		t.Errorf("expected no object store calls, got %+v", calls)
	}
}

// expectOnlyListing checks that the object store was only listed since the last check (an inventory), after
// being asked its versioning at most once, and forgets the stores built.
func expectOnlyListing(t *testing.T, f *fixture) {
	t.Helper()
	calls := f.storeCalls()
	if len(calls) == 0 {
		t.Error("expected the directory to be listed, got no object store calls")
	}
	versioning := 0
	for _, c := range calls {
		switch c.Op {
		case objectstorefake.OpGetBucketVersioning:
			versioning++
		case objectstorefake.OpListObjects, objectstorefake.OpListObjectVersions:
		default:
			t.Errorf("expected only listings, got %+v", c)
		}
	}
	if versioning > 1 {
		t.Errorf("expected the versioning asked at most once, got %d times", versioning)
	}
	f.storeConfigs = nil
}

func expectKeys(t *testing.T, f *fixture, want []string) {
	t.Helper()
	if diff := cmp.Diff(want, f.store.Keys(testBucketName)); diff != "" {
		t.Errorf("unexpected keys in the bucket (-want +got):\n%s", diff)
	}
}

func TestSyncAddsTheFinalizerFirst(t *testing.T) {
	t.Parallel()

	entry := newEntry()
	entry.Finalizers = nil
	f := newFixture(t, testCreated, []runtime.Object{newBucket(), newDatacenter(), entry}, allKeys())

	f.mustSync(t)

	if diff := cmp.Diff([]string{mergePatch}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	if got := f.testEntry(t).Finalizers; !slices.Equal(got, []string{naming.ScyllaDBBackupEntryFinalizer}) {
		t.Errorf("unexpected finalizers %q", got)
	}
	expectNoStoreCalls(t, f)
}

func TestInUseEntryIsAvailableAndConvergesWithoutWritesOrStoreCalls(t *testing.T) {
	t.Parallel()

	f := newFixture(t, testCreated, usedObjects(), allKeys())

	f.mustSync(t)
	if diff := cmp.Diff([]string{statusApply}, f.writes()); diff != "" {
		t.Errorf("unexpected writes of the first sync (-want +got):\n%s", diff)
	}
	entry := f.testEntry(t)
	if diff := cmp.Diff([]string{"Available=True/EntryUsable", "Degraded=False/AsExpected", "Progressing=False/AsExpected"}, conditionStatuses(entry)); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	if entry.Status.ObservedGeneration == nil || *entry.Status.ObservedGeneration != 1 {
		t.Errorf("unexpected observedGeneration %v", entry.Status.ObservedGeneration)
	}
	if entry.Status.PurgeAfter != nil || entry.Status.ClusterDeletedAt != nil || entry.Status.LastOperation != nil {
		t.Errorf("expected no deletion state on an entry in use, got %+v", entry.Status)
	}

	// Converged, even long after and after a restart: no write, no store call, no requeue.
	f.clock.Set(afterGracePeriod.Add(365 * 24 * time.Hour))
	f.mustSync(t)
	f.restart(t)
	f.mustSync(t)
	if w := f.writes(); len(w) != 0 {
		t.Errorf("expected no writes once converged, got %q", w)
	}
	if len(f.queue.after) != 0 || len(f.queue.added) != 0 {
		t.Errorf("expected no requeue, got %v %v", f.queue.after, f.queue.added)
	}
	expectNoStoreCalls(t, f)
	expectKeys(t, f, allKeys())
	if e := f.events(); len(e) != 0 {
		t.Errorf("unexpected events %q", e)
	}
}

func TestEntryWhoseClusterIsGoneButNotDeletedKeepsItsDirectory(t *testing.T) {
	t.Parallel()

	f := newFixture(t, afterGracePeriod, []runtime.Object{newBucket(), newEntry()}, allKeys())
	f.mustSync(t)
	f.mustSync(t)

	expectNoStoreCalls(t, f)
	expectKeys(t, f, allKeys())
	if got := f.testEntry(t).Finalizers; !slices.Equal(got, []string{naming.ScyllaDBBackupEntryFinalizer}) {
		t.Errorf("unexpected finalizers %q", got)
	}
}

func TestDeletedEntryWaitsForTheGracePeriod(t *testing.T) {
	t.Parallel()

	now := testDeleted.Add(time.Hour)
	f := newFixture(t, now, goneObjects(deleted(newEntry())), allKeys(), newCredentialsSecret())

	f.mustSync(t)

	entry := f.testEntry(t)
	wantPurgeAfter := metav1.NewTime(testDeleted.Add(testGracePeriod))
	if entry.Status.ClusterDeletedAt == nil || !entry.Status.ClusterDeletedAt.Equal(&metav1.Time{Time: testDeleted}) {
		t.Errorf("expected clusterDeletedAt %v, got %v", testDeleted, entry.Status.ClusterDeletedAt)
	}
	if entry.Status.PurgeAfter == nil || !entry.Status.PurgeAfter.Equal(&wantPurgeAfter) {
		t.Errorf("expected purgeAfter %v, got %v", wantPurgeAfter, entry.Status.PurgeAfter)
	}
	if diff := cmp.Diff([]string{"Available=True/EntryUsable", "Degraded=False/AsExpected", "Progressing=True/WaitingForGracePeriod"}, conditionStatuses(entry)); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	if want, got := testGracePeriod-time.Hour, f.queue.after[testNamespace+"/"+testEntryName]; got != want {
		t.Errorf("expected a requeue after %v, got %v", want, got)
	}
	if !slices.Equal(entry.Finalizers, []string{naming.ScyllaDBBackupEntryFinalizer}) {
		t.Errorf("unexpected finalizers %q", entry.Finalizers)
	}
	// The directory is inventoried once, when the grace period starts.
	expectOnlyListing(t, f)
	expectInventory(t, entry, clusterKeys(testClusterID))
	expectKeys(t, f, allKeys())

	// A second before the end, still nothing.
	f.clock.Set(wantPurgeAfter.Add(-time.Second))
	f.writes()
	f.mustSync(t)
	if w := f.writes(); len(w) != 0 {
		t.Errorf("expected no writes while waiting, got %q", w)
	}
	if want, got := time.Second, f.queue.after[testNamespace+"/"+testEntryName]; got != want {
		t.Errorf("expected a requeue after %v, got %v", want, got)
	}
	expectNoStoreCalls(t, f)
	expectKeys(t, f, allKeys())
}

func TestDeletionTimestampsSurviveARestart(t *testing.T) {
	t.Parallel()

	f := newFixture(t, testDeleted.Add(time.Hour), goneObjects(deleted(newEntry())), allKeys(), newCredentialsSecret())
	f.mustSync(t)
	expectOnlyListing(t, f)
	before := f.testEntry(t).Status

	f.clock.Set(testDeleted.Add(30 * time.Hour))
	f.restart(t)
	f.mustSync(t)

	if w := f.writes(); len(w) != 0 {
		t.Errorf("expected a restarted controller to compute the same status, got writes %q", w)
	}
	after := f.testEntry(t).Status
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("status changed across a restart (-before +after):\n%s", diff)
	}
	if want, got := testGracePeriod-30*time.Hour, f.queue.after[testNamespace+"/"+testEntryName]; got != want {
		t.Errorf("expected a requeue after %v, got %v", want, got)
	}
	expectNoStoreCalls(t, f)
}

func TestDefaultGracePeriodIs720Hours(t *testing.T) {
	t.Parallel()

	bucket := newBucket()
	bucket.Spec.DeletionGracePeriod = nil
	f := newFixture(t, testDeleted.Add(719*time.Hour), []runtime.Object{bucket, deleted(newEntry())}, allKeys(), newCredentialsSecret())

	f.mustSync(t)

	want := metav1.NewTime(testDeleted.Add(720 * time.Hour))
	if got := f.testEntry(t).Status.PurgeAfter; got == nil || !got.Equal(&want) {
		t.Errorf("expected purgeAfter %v, got %v", want, got)
	}
	expectOnlyListing(t, f)
}

func TestPurgeAfterTheGracePeriodDeletesExactlyTheClusterKeys(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name    string
		objects func() []runtime.Object
		now     time.Time
	}{
		{
			name:    "the cluster is gone and the grace period is over",
			objects: func() []runtime.Object { return goneObjects(deleted(newEntry())) },
			now:     afterGracePeriod,
		},
		{
			name: "the cluster is being deleted and the grace period is over",
			objects: func() []runtime.Object {
				dc := newDatacenter()
				dc.DeletionTimestamp = new(metav1.NewTime(testDeleted))
				dc.Finalizers = []string{"example.com/other"}
				return append(goneObjects(deleted(newEntry())), dc)
			},
			now: afterGracePeriod,
		},
		{
			name: "a new cluster of the same name exists and the grace period is over",
			objects: func() []runtime.Object {
				dc := newDatacenter()
				dc.UID = "recreated-sdc-uid"
				return append(goneObjects(deleted(newEntry())), dc)
			},
			now: afterGracePeriod,
		},
		{
			name: "the entry is annotated purge-now inside the grace period",
			objects: func() []runtime.Object {
				return goneObjects(annotated(deleted(newEntry()), naming.ScyllaDBBackupRetentionPurgeNow))
			},
			now: testDeleted.Add(time.Minute),
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, tc.now, tc.objects(), allKeys(), newCredentialsSecret())

			f.mustSync(t)

			want := foreignKeys()
			slices.Sort(want)
			expectKeys(t, f, want)
			entry := f.testEntry(t)
			if len(entry.Finalizers) != 0 {
				t.Errorf("expected the finalizer removed, got %q", entry.Finalizers)
			}
			op := entry.Status.LastOperation
			if op == nil || op.Type != scyllav1alpha1.ScyllaDBBackupEntryOperationTypePurge || op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateSucceeded ||
				op.ObjectsDeleted == nil || *op.ObjectsDeleted != int64(len(clusterKeys(testClusterID))) {
				t.Errorf("unexpected lastOperation %+v", op)
			}
			if diff := cmp.Diff([]objectstore.Config{{Endpoint: testEndpoint, Region: testRegion, AccessKeyID: testAccessKeyID, SecretAccessKey: testSecretKey}}, f.storeConfigs); diff != "" {
				t.Errorf("unexpected store configuration (-want +got):\n%s", diff)
			}
			for _, call := range f.storeCalls() {
				if call.Op == objectstorefake.OpDeleteObjects {
					for _, k := range call.Keys {
						if !objectstore.IsClusterKey(testClusterID, k) {
							t.Errorf("deleted key %q outside the directory", k)
						}
					}
				}
			}
			events := f.events()
			if !slices.ContainsFunc(events, func(e string) bool { return strings.HasPrefix(e, "Normal "+purgeStartedReason+" Purging ") }) {
				t.Errorf("expected a %s event, got %q", purgeStartedReason, events)
			}
			if !slices.ContainsFunc(events, func(e string) bool { return strings.HasPrefix(e, "Normal "+directoryPurgedReason+" Purged 6 objects") }) {
				t.Errorf("expected a %s event, got %q", directoryPurgedReason, events)
			}
			for _, e := range events {
				if strings.Contains(e, testSecretKey) {
					t.Errorf("event %q contains the secret key", e)
				}
			}
		})
	}
}

func TestPurgeWithoutCredentialsSecretUsesTheControllersOwnRole(t *testing.T) {
	t.Parallel()

	bucket := newBucket()
	bucket.Spec.CredentialsSecretRef = nil
	f := newFixture(t, afterGracePeriod, []runtime.Object{bucket, deleted(newEntry())}, allKeys())

	f.mustSync(t)

	if diff := cmp.Diff([]objectstore.Config{{Endpoint: testEndpoint, Region: testRegion}}, f.storeConfigs); diff != "" {
		t.Errorf("unexpected store configuration (-want +got):\n%s", diff)
	}
	if len(f.testEntry(t).Finalizers) != 0 {
		t.Errorf("expected the finalizer removed")
	}
}

func TestKeepReleasesTheEntryWithoutDeletingAnything(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name   string
		now    time.Time
		bucket bool
	}{
		{name: "inside the grace period", now: testDeleted.Add(time.Minute), bucket: true},
		{name: "after the grace period", now: afterGracePeriod, bucket: true},
		{name: "the bucket object is gone", now: afterGracePeriod, bucket: false},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			objects := []runtime.Object{annotated(deleted(newEntry()), naming.ScyllaDBBackupRetentionKeep)}
			if tc.bucket {
				objects = append(objects, newBucket())
			}
			f := newFixture(t, tc.now, objects, allKeys(), newCredentialsSecret())

			f.mustSync(t)

			if len(f.testEntry(t).Finalizers) != 0 {
				t.Errorf("expected the finalizer removed")
			}
			expectNoStoreCalls(t, f)
			expectKeys(t, f, allKeys())
			bucketName := testBucketRef
			if tc.bucket {
				bucketName = testBucketName
			}
			prefixes, err := objectstore.ClusterPrefixes(testClusterID)
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("Normal %s Kept as annotated %q: %s of ScyllaDBBackupBucket %q, not purged", directoryKeptReason,
				naming.ScyllaDBBackupRetentionAnnotation+"=keep", describeDirectory(prefixes, bucketName), testBucketRef)
			if diff := cmp.Diff([]string{want}, f.events()); diff != "" {
				t.Errorf("unexpected events (-want +got):\n%s", diff)
			}
			for _, p := range prefixes {
				if !strings.Contains(want, p) {
					t.Errorf("event does not name prefix %q", p)
				}
			}
		})
	}
}

func TestInvalidRetentionValueIsDegradedAndNeverPurges(t *testing.T) {
	t.Parallel()

	for _, deletedEntry := range []bool{false, true} {
		t.Run(fmt.Sprintf("deleted=%v", deletedEntry), func(t *testing.T) {
			t.Parallel()

			entry := annotated(newEntry(), "purge")
			objects := []runtime.Object{newBucket(), newDatacenter()}
			if deletedEntry {
				entry = deleted(entry)
				objects = objects[:1]
			}
			f := newFixture(t, afterGracePeriod, append(objects, entry), allKeys(), newCredentialsSecret())

			f.mustSync(t)

			got := f.testEntry(t)
			if diff := cmp.Diff([]string{"Available=True/EntryUsable", "Degraded=True/InvalidRetention", "Progressing=False/AsExpected"}, conditionStatuses(got)); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
			message := conditionMessage(got, controllerhelpers.DegradedCondition)
			for _, s := range []string{naming.ScyllaDBBackupRetentionAnnotation, `"purge"`, `"keep"`, `"purge-now"`} {
				if !strings.Contains(message, s) {
					t.Errorf("Degraded message %q does not contain %s", message, s)
				}
			}
			if !slices.Equal(got.Finalizers, []string{naming.ScyllaDBBackupEntryFinalizer}) {
				t.Errorf("unexpected finalizers %q", got.Finalizers)
			}
			expectNoStoreCalls(t, f)
			expectKeys(t, f, allKeys())
		})
	}
}

func TestMissingBucket(t *testing.T) {
	t.Parallel()

	t.Run("an entry in use waits for it", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, testCreated, []runtime.Object{newDatacenter(), newEntry()}, allKeys())

		f.mustSync(t)

		entry := f.testEntry(t)
		if diff := cmp.Diff([]string{"Available=False/BucketMissing", "Degraded=False/AsExpected", "Progressing=True/BucketMissing"}, conditionStatuses(entry)); diff != "" {
			t.Errorf("unexpected conditions (-want +got):\n%s", diff)
		}
		if want, got := `ScyllaDBBackupBucket "shared" does not exist`, conditionMessage(entry, controllerhelpers.AvailableCondition); got != want {
			t.Errorf("expected message %q, got %q", want, got)
		}
		expectNoStoreCalls(t, f)
	})

	t.Run("a deleted entry keeps its finalizer", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, afterGracePeriod, []runtime.Object{deleted(newEntry())}, allKeys())

		f.mustSync(t)

		entry := f.testEntry(t)
		if diff := cmp.Diff([]string{"Available=False/BucketMissing", "Degraded=True/BucketMissing", "Progressing=True/BucketMissing"}, conditionStatuses(entry)); diff != "" {
			t.Errorf("unexpected conditions (-want +got):\n%s", diff)
		}
		if !slices.Equal(entry.Finalizers, []string{naming.ScyllaDBBackupEntryFinalizer}) {
			t.Errorf("unexpected finalizers %q", entry.Finalizers)
		}
		if entry.Status.ClusterDeletedAt == nil || entry.Status.PurgeAfter != nil {
			t.Errorf("expected clusterDeletedAt and no purgeAfter without a bucket, got %+v", entry.Status)
		}
		expectNoStoreCalls(t, f)
	})
}

func TestStoreFailureKeepsTheFinalizerAndReturnsTheError(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name       string
		setup      func(f *fixture)
		secrets    bool
		wantReason string
	}{
		{
			name:       "the store is unreachable",
			setup:      func(f *fixture) { f.store.SetErrorFunc(func(objectstorefake.Call) error { return errStoreDown }) },
			secrets:    true,
			wantReason: purgeFailedReason,
		},
		{
			name: "the store refuses the credentials",
			setup: func(f *fixture) {
				f.store.SetErrorFunc(func(objectstorefake.Call) error {
					return objectstorefake.ErrorResponse(objectstore.ErrorCodeInvalidAccessKeyID, "The AWS access key ID you provided does not exist", http.StatusForbidden)
				})
			},
			secrets:    true,
			wantReason: storeAuthErrorReason,
		},
		{
			name: "deleting fails",
			setup: func(f *fixture) {
				f.store.SetErrorFunc(func(c objectstorefake.Call) error {
					if c.Op == objectstorefake.OpDeleteObjects && c.Key != "" {
						return errStoreDown
					}
					return nil
				})
			},
			secrets:    true,
			wantReason: purgeFailedReason,
		},
		{
			name:       "the store can't be configured",
			setup:      func(f *fixture) { f.storeErr = fmt.Errorf("can't configure object store: bad endpoint") },
			secrets:    true,
			wantReason: purgeFailedReason,
		},
		{
			name:       "the credentials Secret is missing",
			setup:      func(*fixture) {},
			wantReason: credentialsErrorReason,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			var f *fixture
			if tc.secrets {
				f = newFixture(t, afterGracePeriod, goneObjects(deleted(newEntry())), allKeys(), newCredentialsSecret())
			} else {
				f = newFixture(t, afterGracePeriod, goneObjects(deleted(newEntry())), allKeys())
			}
			tc.setup(f)

			if err := f.sync(t, testNamespace, testEntryName); err == nil {
				t.Fatal("expected the sync to fail so that the queue backs off")
			}

			entry := f.testEntry(t)
			if !slices.Equal(entry.Finalizers, []string{naming.ScyllaDBBackupEntryFinalizer}) {
				t.Errorf("unexpected finalizers %q", entry.Finalizers)
			}
			if got := conditionState(entry, controllerhelpers.DegradedCondition); got != "True/"+tc.wantReason {
				t.Errorf("expected Degraded True/%s, got %s", tc.wantReason, got)
			}
			op := entry.Status.LastOperation
			if op == nil || op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateFailed || len(op.Message) == 0 {
				t.Errorf("expected a Failed lastOperation with the error, got %+v", op)
			}
			if _, ok := entry.Annotations[naming.ScyllaDBBackupPurgeCursorAnnotation]; ok {
				t.Errorf("expected no cursor, got %q", entry.Annotations[naming.ScyllaDBBackupPurgeCursorAnnotation])
			}
			expectKeys(t, f, allKeys())
			for _, e := range f.events() {
				if strings.Contains(e, testSecretKey) {
					t.Errorf("event %q contains the secret key", e)
				}
			}

			// The same failure again writes nothing new.
			f.writes()
			_ = f.sync(t, testNamespace, testEntryName)
			if w := f.writes(); len(w) != 0 {
				t.Errorf("expected no writes for the same failure, got %q", w)
			}

			// Once the store is back, the purge completes.
			f.store.SetErrorFunc(nil)
			f.storeErr = nil
			if !tc.secrets {
				if _, err := f.kubeClient.CoreV1().Secrets(testCredsSecretN).Create(t.Context(), newCredentialsSecret(), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			f.mustSync(t)
			want := foreignKeys()
			slices.Sort(want)
			expectKeys(t, f, want)
			if len(f.testEntry(t).Finalizers) != 0 {
				t.Errorf("expected the finalizer removed once the store is back")
			}
		})
	}
}

func TestPurgeFailingHalfwayResumesFromTheCursorAfterARestart(t *testing.T) {
	t.Parallel()

	var keys []string
	for i := range 10 {
		keys = append(keys, fmt.Sprintf("backup/sst/cluster/%s/dc/dc1/node/n1/sst-%02d", testClusterID, i))
	}
	keys = append(keys, foreignKeys()...)
	slices.Sort(keys)

	f := newFixture(t, afterGracePeriod, goneObjects(deleted(newEntry())), keys, newCredentialsSecret())
	f.batchSize = 3
	f.restart(t)

	// The third DeleteObjects fails: two batches of three are gone.
	deletes := 0
	f.store.SetErrorFunc(func(c objectstorefake.Call) error {
		if c.Op == objectstorefake.OpDeleteObjects && c.Key == "" {
			deletes++
		}
		if c.Op == objectstorefake.OpDeleteObjects && deletes >= 3 {
			return errStoreDown
		}
		return nil
	})
	if err := f.sync(t, testNamespace, testEntryName); err == nil {
		t.Fatal("expected the sync to fail")
	}
	writes := f.writes()
	// Per successful batch: the progress, then the cursor; then the failure.
	if diff := cmp.Diff([]string{statusApply, mergePatch, statusApply, mergePatch, statusApply}, writes); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	entry := f.testEntry(t)
	cursor := entry.Annotations[naming.ScyllaDBBackupPurgeCursorAnnotation]
	if want := fmt.Sprintf("backup/sst/cluster/%s/dc/dc1/node/n1/sst-05", testClusterID); cursor != want {
		t.Errorf("expected cursor %q, got %q", want, cursor)
	}
	op := entry.Status.LastOperation
	if op == nil || op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateFailed || op.ObjectsDeleted == nil || *op.ObjectsDeleted != 6 {
		t.Errorf("unexpected lastOperation %+v", op)
	}
	if !slices.Equal(entry.Finalizers, []string{naming.ScyllaDBBackupEntryFinalizer}) {
		t.Errorf("unexpected finalizers %q", entry.Finalizers)
	}

	// A restarted controller, with the store back, resumes after the cursor.
	f.store.SetErrorFunc(nil)
	f.storeCalls()
	f.restart(t)
	f.mustSync(t)

	calls := f.storeCalls()
	if len(calls) == 0 || calls[0].Op != objectstorefake.OpListObjects || calls[0].StartAfter != cursor {
		t.Errorf("expected the first call to list after the cursor %q, got %+v", cursor, calls)
	}
	want := foreignKeys()
	slices.Sort(want)
	expectKeys(t, f, want)
	entry = f.testEntry(t)
	if len(entry.Finalizers) != 0 {
		t.Errorf("expected the finalizer removed, got %q", entry.Finalizers)
	}
	op = entry.Status.LastOperation
	if op == nil || op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateSucceeded || op.ObjectsDeleted == nil || *op.ObjectsDeleted != 10 {
		t.Errorf("unexpected lastOperation %+v", op)
	}
}

func TestLargePurgeYieldsAfterABoundedNumberOfBatches(t *testing.T) {
	t.Parallel()

	var keys []string
	for i := range 7 {
		keys = append(keys, fmt.Sprintf("backup/meta/cluster/%s/m-%02d", testClusterID, i))
	}
	f := newFixture(t, afterGracePeriod, goneObjects(deleted(newEntry())), keys, newCredentialsSecret())
	f.batchSize = 2
	f.restart(t)
	f.controller.purgeBatchesPerSync = 2

	f.mustSync(t)

	if got := f.store.Keys(testBucketName); len(got) != 3 {
		t.Errorf("expected two batches of two deleted, left %q", got)
	}
	if !slices.Equal(f.queue.added, []string{testNamespace + "/" + testEntryName}) {
		t.Errorf("expected the entry requeued at once, got %q", f.queue.added)
	}
	entry := f.testEntry(t)
	if op := entry.Status.LastOperation; op == nil || op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateRunning || *op.ObjectsDeleted != 4 {
		t.Errorf("unexpected lastOperation %+v", op)
	}
	if got := conditionState(entry, controllerhelpers.ProgressingCondition); got != "True/"+purgingReason {
		t.Errorf("expected Progressing True/%s, got %s", purgingReason, got)
	}

	f.mustSync(t)
	if got := f.store.Keys(testBucketName); len(got) != 0 {
		t.Errorf("expected the directory purged, left %q", got)
	}
	if op := f.testEntry(t).Status.LastOperation; op == nil || *op.ObjectsDeleted != 7 {
		t.Errorf("unexpected lastOperation %+v", op)
	}
}

func TestClusterStillExistingWhileTheEntryIsDeletedIsNeverPurged(t *testing.T) {
	t.Parallel()

	for _, value := range []string{"", naming.ScyllaDBBackupRetentionPurgeNow} {
		t.Run("retention="+value, func(t *testing.T) {
			t.Parallel()

			entry := deleted(newEntry())
			if value != "" {
				entry = annotated(entry, value)
			}
			f := newFixture(t, afterGracePeriod, []runtime.Object{newBucket(), newDatacenter(), entry}, allKeys(), newCredentialsSecret())

			f.mustSync(t)

			got := f.testEntry(t)
			if !slices.Equal(got.Finalizers, []string{naming.ScyllaDBBackupEntryFinalizer}) {
				t.Errorf("unexpected finalizers %q", got.Finalizers)
			}
			if s := conditionState(got, controllerhelpers.DegradedCondition); s != "True/"+clusterInUseReason {
				t.Errorf("expected Degraded True/%s, got %s", clusterInUseReason, s)
			}
			if msg := conditionMessage(got, controllerhelpers.DegradedCondition); !strings.Contains(msg, `ScyllaDBDatacenter "scylla/basic"`) {
				t.Errorf("expected the Degraded message to name the cluster, got %q", msg)
			}
			expectNoStoreCalls(t, f)
			expectKeys(t, f, allKeys())
		})
	}
}

// newDuplicate returns an entry in namespace other of the test directory, created at created.
func newDuplicate(created time.Time) *scyllav1alpha1.ScyllaDBBackupEntry {
	e := newEntry()
	e.Namespace, e.Name, e.UID = "other", "dup", "dup-uid"
	e.CreationTimestamp = metav1.NewTime(created)
	e.Spec.ClusterRef = scyllav1alpha1.ScyllaDBBackupEntryClusterReference{Kind: scyllaDBDatacenterKind, Name: "dup", UID: "dup-sdc-uid"}
	e.OwnerReferences = nil
	return e
}

func TestDuplicateEntries(t *testing.T) {
	t.Parallel()

	t.Run("the later entry is refused and names the earlier one", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, testCreated, append(usedObjects(), newDuplicate(testCreated.Add(time.Minute))), allKeys())

		f.mustSync(t)
		if err := f.sync(t, "other", "dup"); err != nil {
			t.Fatal(err)
		}

		if got := conditionStatuses(f.testEntry(t)); !slices.Contains(got, "Available=True/EntryUsable") {
			t.Errorf("expected the earlier entry usable, got %q", got)
		}
		dup := f.entry(t, "other", "dup")
		if diff := cmp.Diff([]string{"Available=False/DuplicateEntry", "Degraded=True/DuplicateEntry", "Progressing=False/AsExpected"}, conditionStatuses(dup)); diff != "" {
			t.Errorf("unexpected conditions of the duplicate (-want +got):\n%s", diff)
		}
		if msg := conditionMessage(dup, controllerhelpers.DegradedCondition); !strings.Contains(msg, `ScyllaDBBackupEntry "scylla/basic-shared"`) {
			t.Errorf("expected the message to name the earlier entry, got %q", msg)
		}
	})

	t.Run("entries created in the same second are ordered by namespace and name", func(t *testing.T) {
		t.Parallel()
		dup := newDuplicate(testCreated)
		dup.Namespace = "aaa"
		f := newFixture(t, testCreated, append(usedObjects(), dup), allKeys())

		f.mustSync(t)

		if got := conditionState(f.testEntry(t), controllerhelpers.AvailableCondition); got != "False/"+duplicateEntryReason {
			t.Errorf("expected the test entry refused after aaa/dup, got %s", got)
		}
	})

	t.Run("a deleted duplicate is released without purging", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, afterGracePeriod, append(usedObjects(), deleted(newDuplicate(testCreated.Add(time.Minute)))), allKeys(), newCredentialsSecret())

		if err := f.sync(t, "other", "dup"); err != nil {
			t.Fatal(err)
		}

		if got := f.entry(t, "other", "dup").Finalizers; len(got) != 0 {
			t.Errorf("expected the duplicate released, got finalizers %q", got)
		}
		expectNoStoreCalls(t, f)
		expectKeys(t, f, allKeys())
	})

	t.Run("the earlier entry is not purged while a duplicate's cluster uses the directory", func(t *testing.T) {
		t.Parallel()
		dupDC := newDatacenter()
		dupDC.Namespace, dupDC.Name, dupDC.UID = "other", "dup", "dup-sdc-uid"
		f := newFixture(t, afterGracePeriod, []runtime.Object{newBucket(), deleted(newEntry()), newDuplicate(testCreated.Add(time.Minute)), dupDC}, allKeys(), newCredentialsSecret())

		f.mustSync(t)

		entry := f.testEntry(t)
		if got := conditionState(entry, controllerhelpers.DegradedCondition); got != "True/"+directoryInUseReason {
			t.Errorf("expected Degraded True/%s, got %s", directoryInUseReason, got)
		}
		if !slices.Equal(entry.Finalizers, []string{naming.ScyllaDBBackupEntryFinalizer}) {
			t.Errorf("unexpected finalizers %q", entry.Finalizers)
		}
		expectNoStoreCalls(t, f)
		expectKeys(t, f, allKeys())
	})
}

// conditionState returns "<status>/<reason>" of the entry's condition condType.
func conditionState(entry *scyllav1alpha1.ScyllaDBBackupEntry, condType string) string {
	for _, c := range entry.Status.Conditions {
		if c.Type == condType {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return ""
}

func TestEntryDeletedWhileItsClusterWasInUseGetsItsGracePeriodFromWhenTheClusterGoes(t *testing.T) {
	t.Parallel()

	// The entry was deleted long ago, by hand, while its cluster ran.
	f := newFixture(t, afterGracePeriod, []runtime.Object{newBucket(), newDatacenter(), deleted(newEntry())}, allKeys(), newCredentialsSecret())
	f.mustSync(t)
	entry := f.testEntry(t)
	if entry.Status.ClusterDeletedAt != nil || entry.Status.PurgeAfter != nil {
		t.Errorf("expected no deletion times while the cluster is in use, got %v and %v", entry.Status.ClusterDeletedAt, entry.Status.PurgeAfter)
	}
	expectNoStoreCalls(t, f)

	// The cluster is deleted now: the grace period starts at its deletion, not at the entry's.
	clusterDeleted := afterGracePeriod.Add(time.Hour)
	f.clock.Set(clusterDeleted.Add(time.Minute))
	dc := newDatacenter()
	dc.DeletionTimestamp = new(metav1.NewTime(clusterDeleted))
	dc.Finalizers = []string{"example.com/other"}
	f.put(t, dc, "scylladbdatacenters")
	f.mustSync(t)

	entry = f.testEntry(t)
	wantPurgeAfter := metav1.NewTime(clusterDeleted.Add(testGracePeriod))
	if got := entry.Status.PurgeAfter; got == nil || !got.Equal(&wantPurgeAfter) {
		t.Errorf("expected purgeAfter %v, got %v", wantPurgeAfter, got)
	}
	expectOnlyListing(t, f)
	expectInventory(t, entry, clusterKeys(testClusterID))
	expectKeys(t, f, allKeys())

	// Once the cluster object is gone and the controller restarted, the recorded time still holds.
	if err := f.tracker.Delete(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), testNamespace, testDCName); err != nil {
		t.Fatal(err)
	}
	f.clock.Set(clusterDeleted.Add(2 * time.Hour))
	f.restart(t)
	f.mustSync(t)
	if w := f.writes(); len(w) != 0 {
		t.Errorf("expected no writes, got %q", w)
	}
	expectNoStoreCalls(t, f)
	if want, got := testGracePeriod-2*time.Hour, f.queue.after[testNamespace+"/"+testEntryName]; got != want {
		t.Errorf("expected a requeue after %v, got %v", want, got)
	}

	f.clock.Set(wantPurgeAfter.Time)
	f.mustSync(t)
	want := foreignKeys()
	slices.Sort(want)
	expectKeys(t, f, want)
}

func TestEntryDeletedWhileItsClusterRanWithAnInvalidRetentionGetsItsGracePeriodFromWhenTheClusterGoes(t *testing.T) {
	t.Parallel()

	// The entry was deleted long ago, by hand, while its cluster ran, and annotated with a value the controller
	// refuses.
	f := newFixture(t, afterGracePeriod, []runtime.Object{newBucket(), newDatacenter(), annotated(deleted(newEntry()), "forever")}, allKeys(), newCredentialsSecret())
	f.mustSync(t)
	entry := f.testEntry(t)
	if got, want := conditionState(entry, controllerhelpers.DegradedCondition), "True/"+invalidRetentionReason+","+clusterInUseReason; got != want {
		t.Errorf("expected Degraded %s, got %s", want, got)
	}
	expectNoStoreCalls(t, f)

	// The cluster goes, and the annotation is fixed: the grace period starts now, not at the entry's deletion.
	clusterGone := afterGracePeriod.Add(time.Hour)
	f.clock.Set(clusterGone)
	if err := f.tracker.Delete(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), testNamespace, testDCName); err != nil {
		t.Fatal(err)
	}
	entry = f.testEntry(t)
	delete(entry.Annotations, naming.ScyllaDBBackupRetentionAnnotation)
	f.put(t, entry, "scylladbbackupentries")
	f.mustSync(t)

	entry = f.testEntry(t)
	wantPurgeAfter := metav1.NewTime(clusterGone.Add(testGracePeriod))
	if got := entry.Status.PurgeAfter; got == nil || !got.Equal(&wantPurgeAfter) {
		t.Errorf("expected purgeAfter %v, got %v", wantPurgeAfter, got)
	}
	if !slices.Equal(entry.Finalizers, []string{naming.ScyllaDBBackupEntryFinalizer}) {
		t.Errorf("unexpected finalizers %q", entry.Finalizers)
	}
	expectKeys(t, f, allKeys())
}

// hangingStore is a store that accepted the connection and never answers a listing or a deletion: the call returns
// only when its context ends.
type hangingStore struct {
	objectstore.Interface
}

func (hangingStore) ListObjects(ctx context.Context, _, _, _ string, _ int) (objectstore.ObjectList, error) {
	<-ctx.Done()
	return objectstore.ObjectList{}, ctx.Err()
}

func (hangingStore) DeleteObjects(ctx context.Context, _ string, _ []string) error {
	<-ctx.Done()
	return ctx.Err()
}

func TestStoreThatDoesNotAnswerFailsTheBatchInsteadOfHoldingTheWorker(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name       string
		now        time.Time
		wantReason string
		wantType   scyllav1alpha1.ScyllaDBBackupEntryOperationType
	}{
		{name: "purge", now: afterGracePeriod, wantReason: purgeFailedReason, wantType: scyllav1alpha1.ScyllaDBBackupEntryOperationTypePurge},
		{name: "inventory", now: testDeleted.Add(time.Hour), wantReason: inventoryFailedReason, wantType: scyllav1alpha1.ScyllaDBBackupEntryOperationTypeInventory},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, tc.now, goneObjects(deleted(newEntry())), allKeys(), newCredentialsSecret())
			f.controller.storeTimeout = 50 * time.Millisecond
			f.controller.newStore = func(objectstore.Config) (objectstore.Interface, error) {
				return hangingStore{Interface: f.store}, nil
			}

			done := make(chan error, 1)
			go func() { done <- f.controller.sync(t.Context(), testNamespace+"/"+testEntryName) }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("expected the sync to fail so that the queue backs off")
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the sync still waits for a store that does not answer")
			}
			f.catchUp(t)

			entry := f.testEntry(t)
			if got := conditionState(entry, controllerhelpers.DegradedCondition); got != "True/"+tc.wantReason {
				t.Errorf("expected Degraded True/%s, got %s", tc.wantReason, got)
			}
			op := entry.Status.LastOperation
			if op == nil || op.Type != tc.wantType || op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateFailed || !strings.Contains(op.Message, context.DeadlineExceeded.Error()) {
				t.Errorf("expected a Failed %s lastOperation saying the store did not answer in time, got %+v", tc.wantType, op)
			}
			if !slices.Equal(entry.Finalizers, []string{naming.ScyllaDBBackupEntryFinalizer}) {
				t.Errorf("unexpected finalizers %q", entry.Finalizers)
			}
			expectKeys(t, f, allKeys())
		})
	}
}

// quotaObjects are the test bucket with spec.maxClusters 1, the test cluster and its entry, and another cluster's
// entry "other/dup" in the same bucket, created a minute after the test entry (by hand, or by a task whose quota
// check raced with another's).
func quotaObjects() []runtime.Object {
	bucket := newBucket()
	bucket.Spec.MaxClusters = new(int32(1))
	later := newDuplicate(testCreated.Add(time.Minute))
	later.Spec.ManagerClusterID = neighbourClusterID
	return []runtime.Object{bucket, newDatacenter(), newEntry(), later}
}

func TestEntriesBeyondTheBucketsMaxClustersAreRefused(t *testing.T) {
	t.Parallel()

	f := newFixture(t, testCreated.Add(time.Hour), quotaObjects(), nil)

	f.mustSync(t)
	if err := f.sync(t, "other", "dup"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Available=True/EntryUsable", "Degraded=False/AsExpected", "Progressing=False/AsExpected"}, conditionStatuses(f.testEntry(t))); diff != "" {
		t.Errorf("unexpected conditions of the entry within the quota (-want +got):\n%s", diff)
	}
	got := f.entry(t, "other", "dup")
	if diff := cmp.Diff([]string{"Available=False/BucketQuotaExceeded", "Degraded=True/BucketQuotaExceeded", "Progressing=False/AsExpected"}, conditionStatuses(got)); diff != "" {
		t.Errorf("unexpected conditions of the entry over the quota (-want +got):\n%s", diff)
	}
	if msg := conditionMessage(got, controllerhelpers.DegradedCondition); !strings.Contains(msg, "spec.maxClusters") || !strings.Contains(msg, "1 were created before") {
		t.Errorf("expected the message to name the quota and the earlier entries, got %q", msg)
	}
	expectNoStoreCalls(t, f)

	// Once the earlier entry is gone, the later one is within the quota.
	if err := f.tracker.Delete(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbbackupentries"), testNamespace, testEntryName); err != nil {
		t.Fatal(err)
	}
	f.catchUp(t)
	if err := f.sync(t, "other", "dup"); err != nil {
		t.Fatal(err)
	}
	if got := conditionState(f.entry(t, "other", "dup"), controllerhelpers.AvailableCondition); got != "True/"+entryUsableReason {
		t.Errorf("expected the entry usable once the quota allows it, got %s", got)
	}
}

func TestAFailedCursorWriteLosesNoDeletedObjectFromTheCount(t *testing.T) {
	t.Parallel()

	var keys []string
	for i := range 10 {
		keys = append(keys, fmt.Sprintf("backup/sst/cluster/%s/dc/dc1/node/n1/sst-%02d", testClusterID, i))
	}
	f := newFixture(t, afterGracePeriod, goneObjects(deleted(newEntry())), keys, newCredentialsSecret())
	f.batchSize = 3
	f.restart(t)

	// The API server refuses the first write of the cursor, after the first batch was deleted; a manager-controller
	// killed right after that batch's progress was written leaves the same objects behind.
	var refused atomic.Bool
	f.scyllaClient.PrependReactor("patch", "scylladbbackupentries", func(action clienttesting.Action) (bool, runtime.Object, error) {
		patch, ok := action.(clienttesting.PatchAction)
		if !ok || patch.GetSubresource() != "" || patch.GetPatchType() != types.MergePatchType || !strings.Contains(string(patch.GetPatch()), naming.ScyllaDBBackupPurgeCursorAnnotation) {
			return false, nil, nil
		}
		if refused.CompareAndSwap(false, true) {
			return true, nil, apierrors.NewServiceUnavailable("etcd is down")
		}
		return false, nil, nil
	})
	if err := f.sync(t, testNamespace, testEntryName); err == nil {
		t.Fatal("expected the sync to fail")
	}

	f.restart(t)
	f.mustSync(t)
	if got := f.store.Keys(testBucketName); len(got) != 0 {
		t.Errorf("expected the directory purged, left %q", got)
	}
	op := f.testEntry(t).Status.LastOperation
	if op == nil || op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateSucceeded || op.ObjectsDeleted == nil || *op.ObjectsDeleted != 10 {
		t.Errorf("expected a Succeeded purge of 10 objects, got %+v", op)
	}
	if events := f.events(); !slices.ContainsFunc(events, func(e string) bool { return strings.Contains(e, "Purged 10 objects") }) {
		t.Errorf("expected the DirectoryPurged event to count the 10 objects, got %q", events)
	}
}

// TestEntryWithTheNilManagerClusterIDIsRefusedAndCanBeKept: the nil UUID passes the API's pattern but names no
// directory a purge may touch. An entry in use with it must say so rather than be Available, and a deleted one must
// let the keep annotation release it, as the Degraded condition tells: nothing else ever can.
func TestEntryWithTheNilManagerClusterIDIsRefusedAndCanBeKept(t *testing.T) {
	t.Parallel()

	const nilID = "00000000-0000-0000-0000-000000000000"
	withNilID := func(entry *scyllav1alpha1.ScyllaDBBackupEntry) *scyllav1alpha1.ScyllaDBBackupEntry {
		entry.Spec.ManagerClusterID = nilID
		return entry
	}
	keys := append(allKeys(), clusterKeys(nilID)...)
	slices.Sort(keys)

	tt := []struct {
		name           string
		objects        []runtime.Object
		wantConditions []string
		wantReleased   bool
	}{
		{
			name:           "in use",
			objects:        []runtime.Object{newBucket(), newDatacenter(), withNilID(newEntry())},
			wantConditions: []string{"Available=False/InvalidManagerClusterID", "Degraded=True/InvalidManagerClusterID", "Progressing=False/AsExpected"},
		},
		{
			name:           "deleted after the grace period",
			objects:        goneObjects(withNilID(deleted(newEntry()))),
			wantConditions: []string{"Available=False/InvalidManagerClusterID", "Degraded=True/InvalidManagerClusterID", "Progressing=False/AsExpected"},
		},
		{
			name:         "deleted and annotated keep",
			objects:      goneObjects(annotated(withNilID(deleted(newEntry())), naming.ScyllaDBBackupRetentionKeep)),
			wantReleased: true,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, afterGracePeriod, tc.objects, keys, newCredentialsSecret())
			f.mustSync(t)

			got := f.testEntry(t)
			expectNoStoreCalls(t, f)
			expectKeys(t, f, keys)
			if tc.wantReleased {
				if len(got.Finalizers) != 0 {
					t.Errorf("expected the keep annotation to release the entry, got finalizers %q", got.Finalizers)
				}
				return
			}
			if diff := cmp.Diff(tc.wantConditions, conditionStatuses(got)); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
			message := conditionMessage(got, controllerhelpers.DegradedCondition)
			for _, s := range []string{"spec.managerClusterID", nilID, naming.ScyllaDBBackupRetentionAnnotation + "=keep"} {
				if !strings.Contains(message, s) {
					t.Errorf("Degraded message %q does not contain %q", message, s)
				}
			}
			if !slices.Equal(got.Finalizers, []string{naming.ScyllaDBBackupEntryFinalizer}) {
				t.Errorf("unexpected finalizers %q", got.Finalizers)
			}
		})
	}
}

// TestDirectoryHeldForADuplicatesClusterGetsAGracePeriodFromWhenThatClusterGoes: a cluster recreated from a restored
// manifest keeps the ScyllaDB Manager cluster ID of the deleted one it replaces, so its entry is a duplicate of the
// deleted cluster's, whose grace period may be long over. The earlier entry holds the directory while the new cluster
// uses it; once that cluster is deleted too (and its duplicate entry released), the directory must get a grace
// period of its own from then, not be purged at once with the backups of a cluster deleted a moment ago.
func TestDirectoryHeldForADuplicatesClusterGetsAGracePeriodFromWhenThatClusterGoes(t *testing.T) {
	t.Parallel()

	dupDC := newDatacenter()
	dupDC.Namespace, dupDC.Name, dupDC.UID = "other", "dup", "dup-sdc-uid"
	f := newFixture(t, afterGracePeriod, []runtime.Object{newBucket(), deleted(newEntry()), newDuplicate(testCreated.Add(time.Minute)), dupDC}, allKeys(), newCredentialsSecret())

	f.mustSync(t)
	if got := conditionState(f.testEntry(t), controllerhelpers.DegradedCondition); got != "True/"+directoryInUseReason {
		t.Fatalf("expected Degraded True/%s, got %s", directoryInUseReason, got)
	}
	expectNoStoreCalls(t, f)

	// The new cluster is deleted a day later: garbage collection deletes its entry, which is released as a duplicate.
	dupDeleted := afterGracePeriod.Add(24 * time.Hour)
	f.clock.Set(dupDeleted)
	if err := f.tracker.Delete(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), "other", "dup"); err != nil {
		t.Fatal(err)
	}
	dup := f.entry(t, "other", "dup")
	dup.DeletionTimestamp = new(metav1.NewTime(dupDeleted))
	f.put(t, dup, "scylladbbackupentries")
	if err := f.sync(t, "other", "dup"); err != nil {
		t.Fatal(err)
	}
	if got := f.entry(t, "other", "dup").Finalizers; len(got) != 0 {
		t.Fatalf("expected the duplicate released, got finalizers %q", got)
	}
	if err := f.tracker.Delete(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbbackupentries"), "other", "dup"); err != nil {
		t.Fatal(err)
	}
	f.catchUp(t)

	released := dupDeleted.Add(time.Second)
	f.clock.Set(released)
	f.mustSync(t)
	entry := f.testEntry(t)
	if calls := f.storeCalls(); slices.ContainsFunc(calls, func(c objectstorefake.Call) bool { return c.Op == objectstorefake.OpDeleteObjects }) {
		t.Errorf("expected nothing deleted right after the cluster using the directory went, got %+v", calls)
	}
	expectKeys(t, f, allKeys())
	wantPurgeAfter := metav1.NewTime(released.Add(testGracePeriod))
	if got := entry.Status.PurgeAfter; got == nil || !got.Equal(&wantPurgeAfter) {
		t.Errorf("expected purgeAfter %v, a grace period from when the directory stopped being used, got %v", wantPurgeAfter, got)
	}
	if got := conditionState(entry, controllerhelpers.ProgressingCondition); got != "True/"+gracePeriodReason {
		t.Errorf("expected Progressing True/%s, got %s", gracePeriodReason, got)
	}

	// The recorded time holds across a restart, and the directory is purged once that grace period is over.
	f.restart(t)
	f.clock.Set(released.Add(time.Hour))
	f.mustSync(t)
	if got := f.testEntry(t).Status.PurgeAfter; got == nil || !got.Equal(&wantPurgeAfter) {
		t.Errorf("expected purgeAfter %v after a restart, got %v", wantPurgeAfter, got)
	}
	expectKeys(t, f, allKeys())
	f.clock.Set(wantPurgeAfter.Time)
	f.mustSync(t)
	want := foreignKeys()
	slices.Sort(want)
	expectKeys(t, f, want)
}
