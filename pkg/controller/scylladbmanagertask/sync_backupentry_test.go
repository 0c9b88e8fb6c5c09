package scylladbmanagertask

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllav1alpha1client "github.com/scyllakube/client/scylla/clientset/versioned/typed/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/backupstorage"
	"github.com/scyllakube/scylla-operator/pkg/controller/scylladbbackupentry"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/workqueue"
)

const (
	// testBucketObject declares the bucket "backups" that newBackupTask's location names.
	testBucketObject = "shared-backups"
	createEntry      = "create scylladbbackupentries"
)

// newBackupBucket returns a ScyllaDBBackupBucket named name that declares the S3 bucket bucketName.
func newBackupBucket(name, bucketName string) *scyllav1alpha1.ScyllaDBBackupBucket {
	return &scyllav1alpha1.ScyllaDBBackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name + "-uid"), ResourceVersion: "1", Generation: 1},
		Spec: scyllav1alpha1.ScyllaDBBackupBucketSpec{
			Provider:   scyllav1alpha1.ScyllaDBBackupProviderS3,
			BucketName: bucketName,
		},
	}
}

// testEntryName is the name of the test datacenter's entry in testBucketObject.
var testEntryName = naming.ScyllaDBBackupEntryName(scyllaDBDatacenterKind, testDCName, testBucketObject)

// newTestEntry returns the entry of the test datacenter in testBucketObject as the controller creates it.
func newTestEntry() *scyllav1alpha1.ScyllaDBBackupEntry {
	return &scyllav1alpha1.ScyllaDBBackupEntry{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       testNamespace,
			Name:            testEntryName,
			ResourceVersion: "1",
			Labels:          map[string]string{naming.ManagedByLabel: naming.ManagedByLabelValue},
			Finalizers:      []string{naming.ScyllaDBBackupEntryFinalizer},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         "scylla.scylladb.com/v1alpha1",
				Kind:               scyllaDBDatacenterKind,
				Name:               testDCName,
				UID:                "sdc-uid",
				Controller:         new(false),
				BlockOwnerDeletion: new(false),
			}},
		},
		Spec: scyllav1alpha1.ScyllaDBBackupEntrySpec{
			BucketRef: testBucketObject,
			ClusterRef: scyllav1alpha1.ScyllaDBBackupEntryClusterReference{
				Kind: scyllaDBDatacenterKind,
				Name: testDCName,
				UID:  "sdc-uid",
			},
			ManagerClusterID: testClusterID,
		},
	}
}

// predecessorClusterID is the ScyllaDB Manager cluster of an earlier ScyllaDBDatacenter named testDCName, deleted
// before the test datacenter was created under its name.
var predecessorClusterID = naming.ScyllaDBManagerClusterID(scyllaDBDatacenterKind, "old-sdc-uid")

// testIncarnationEntryName is the name of the test datacenter's entry in testBucketObject while its predecessor's
// entry holds testEntryName.
var testIncarnationEntryName = naming.ScyllaDBBackupEntryNameOfIncarnation(scyllaDBDatacenterKind, testDCName, testBucketObject, testClusterID)

// newPredecessorEntry returns the entry of the predecessor of the test datacenter, deleted with it, its finalizer
// holding it for the grace period.
func newPredecessorEntry() *scyllav1alpha1.ScyllaDBBackupEntry {
	e := newTestEntry()
	e.OwnerReferences[0].UID = "old-sdc-uid"
	e.Spec.ClusterRef.UID = "old-sdc-uid"
	e.Spec.ManagerClusterID = predecessorClusterID
	e.DeletionTimestamp = new(metav1.NewTime(testStart.Add(-time.Hour)))
	return e
}

// newTestIncarnationEntry returns the entry of the test datacenter in testBucketObject as the controller creates it
// while newPredecessorEntry holds testEntryName.
func newTestIncarnationEntry() *scyllav1alpha1.ScyllaDBBackupEntry {
	e := newTestEntry()
	e.Name = testIncarnationEntryName
	return e
}

// entry returns the entry named name in the test namespace from the fake API server, nil when there is none.
func (f *fixture) entry(t *testing.T, name string) *scyllav1alpha1.ScyllaDBBackupEntry {
	t.Helper()
	entry, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBBackupEntries(testNamespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return entry
}

func condition(task *scyllav1alpha1.ScyllaDBManagerTask, condType string) metav1.Condition {
	if c := meta.FindStatusCondition(task.Status.Conditions, condType); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func TestBackupToADeclaredBucketCreatesTheClustersEntryOnceBeforeScheduling(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"), newBackupBucket(testBucketObject, "backups"))

	// The first sync creates the entry and holds the task back.
	f.syncBeforeTheCacheCatchesUp(t, "daily")
	if diff := cmp.Diff([]string{createEntry, "patch scylladbmanagertasks/status " + applyPatch}, f.kubeWrites()); diff != "" {
		t.Errorf("unexpected Kubernetes writes (-want +got):\n%s", diff)
	}
	if writes := managerWrites(f.managerRequests()); len(writes) != 0 {
		t.Errorf("expected no ScyllaDB Manager writes before the entry is observed, got %v", writes)
	}
	got := f.entry(t, testEntryName)
	if got == nil {
		t.Fatalf("expected ScyllaDBBackupEntry %q to be created", testEntryName)
	}
	want := newTestEntry()
	// The bookkeeping annotations of resourceapply, and what the API server assigns, are not the subject here.
	got.Annotations, got.ResourceVersion, got.UID = nil, want.ResourceVersion, want.UID
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected entry (-want +got):\n%s", diff)
	}
	progressing := condition(f.task(t, "daily"), controllerhelpers.ProgressingCondition)
	if progressing.Status != metav1.ConditionTrue || progressing.Reason != awaitingBackupEntryReason {
		t.Errorf("expected Progressing True/%s, got %+v", awaitingBackupEntryReason, progressing)
	}

	// Synced again before the cache observed the entry: it is not created twice, and the task still waits.
	f.syncBeforeTheCacheCatchesUp(t, "daily")
	if n := len(f.ourTasks()); n != 0 {
		t.Errorf("expected the task to wait for the entry in the cache, ScyllaDB Manager holds %d tasks", n)
	}
	list, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBBackupEntries(testNamespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Errorf("expected one entry, got %d", len(list.Items))
	}
	f.kubeWrites()

	// Once the cache holds the entry, the task is scheduled and the entry left alone.
	f.catchUp(t)
	f.mustSync(t, "daily")
	f.onlyTask(t)
	for _, w := range f.kubeWrites() {
		if w == createEntry {
			t.Errorf("the entry was created again once observed")
		}
	}
	settle(t, f, "daily")
	f.expireMemo()
	f.mustSync(t, "daily")
	if writes := f.kubeWrites(); len(writes) != 0 {
		t.Errorf("expected no Kubernetes writes at rest, got %v", writes)
	}
	if writes := managerWrites(f.managerRequests()); len(writes) != 0 {
		t.Errorf("expected no ScyllaDB Manager writes at rest, got %v", writes)
	}
	task := f.task(t, "daily")
	if diff := cmp.Diff([]string{"Available=True/" + taskScheduledReason, "Degraded=False/AsExpected", "Progressing=False/AsExpected"}, conditionStatuses(task)); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
}

func TestTheFirstClusterObjectOfANameKeepsItsEntrysName(t *testing.T) {
	t.Parallel()

	// Entries made by earlier releases bear this name; another would make a second entry for their directory.
	if want := "basic-shared-backups-1zt73"; testEntryName != want {
		t.Errorf("the entry of the first ScyllaDBDatacenter %q in %q is named %q, want %q", testDCName, testBucketObject, testEntryName, want)
	}
	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"), newBackupBucket(testBucketObject, "backups"))
	f.mustSync(t, "daily")
	if f.entry(t, testEntryName) == nil {
		t.Errorf("expected ScyllaDBBackupEntry %q to be created", testEntryName)
	}
}

func TestBackupOfAClusterCreatedAgainUnderTheNameOfADeletedOneStartsAtOnce(t *testing.T) {
	t.Parallel()

	// The garbage collector has not deleted the predecessor's entry yet.
	notYetDeleted := newPredecessorEntry()
	notYetDeleted.DeletionTimestamp = nil
	for _, tc := range []struct {
		name        string
		predecessor *scyllav1alpha1.ScyllaDBBackupEntry
	}{
		{name: "the predecessor's entry waits out its grace period", predecessor: newPredecessorEntry()},
		{name: "the predecessor's entry is not deleted yet", predecessor: notYetDeleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bucket := newBackupBucket(testBucketObject, "backups")
			// The predecessor's entry counts until its directory is purged.
			bucket.Spec.MaxClusters = new(int32(2))
			f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"), bucket, tc.predecessor)

			f.mustSync(t, "daily")

			if diff := cmp.Diff([]string{createEntry, "patch scylladbmanagertasks/status " + applyPatch}, f.kubeWrites()); diff != "" {
				t.Errorf("unexpected Kubernetes writes (-want +got):\n%s", diff)
			}
			got := f.entry(t, testIncarnationEntryName)
			if got == nil {
				t.Fatalf("expected ScyllaDBBackupEntry %q to be created", testIncarnationEntryName)
			}
			want := newTestIncarnationEntry()
			got.Annotations, got.ResourceVersion, got.UID = nil, want.ResourceVersion, want.UID
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unexpected entry (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.predecessor, f.entry(t, testEntryName)); diff != "" {
				t.Errorf("the predecessor's entry changed (-want +got):\n%s", diff)
			}

			f.mustSync(t, "daily")
			f.onlyTask(t)
			settle(t, f, "daily")
			task := f.task(t, "daily")
			if diff := cmp.Diff([]string{"Available=True/" + taskScheduledReason, "Degraded=False/AsExpected", "Progressing=False/AsExpected"}, conditionStatuses(task)); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
			for _, w := range f.kubeWrites() {
				if w == createEntry {
					t.Errorf("an entry was created again once observed")
				}
			}
		})
	}
}

func TestAClusterCreatedAgainFindsItsEntryAfterARestart(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name    string
		objects []runtime.Object
	}{
		{name: "the predecessor's entry still holds the plain name", objects: []runtime.Object{newPredecessorEntry(), newTestIncarnationEntry()}},
		// The plain name is free now: taking it would make a second entry for the directory.
		{name: "the predecessor's directory is purged", objects: []runtime.Object{newTestIncarnationEntry()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A new process: the entry created before the restart is in its first list, the task's status is not.
			f := newFixture(t, append([]runtime.Object{newRegisteredDatacenter(), newBackupTask("daily"), newBackupBucket(testBucketObject, "backups")}, tc.objects...)...)

			f.mustSync(t, "daily")

			f.onlyTask(t)
			for _, w := range f.kubeWrites() {
				if strings.Contains(w, "scylladbbackupentries") {
					t.Errorf("unexpected write of an entry: %s", w)
				}
			}
		})
	}
}

func TestAnEntryCreatedUnderTheOtherNameIsAwaitedWhileTheCacheShowsThePlainNameFreed(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"), newBackupBucket(testBucketObject, "backups"), newPredecessorEntry())
	f.syncBeforeTheCacheCatchesUp(t, "daily")
	if f.entry(t, testIncarnationEntryName) == nil {
		t.Fatalf("expected ScyllaDBBackupEntry %q to be created", testIncarnationEntryName)
	}
	f.kubeWrites()

	// The predecessor's directory is purged and its entry gone; the cache saw that, not yet the new entry.
	if err := f.scyllaClient.Tracker().Delete(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbbackupentries"), testNamespace, testEntryName); err != nil {
		t.Fatal(err)
	}
	if err := f.factory.Scylla().V1alpha1().ScyllaDBBackupEntries().Informer().GetIndexer().Delete(newPredecessorEntry()); err != nil {
		t.Fatal(err)
	}
	f.syncBeforeTheCacheCatchesUp(t, "daily")

	if f.entry(t, testEntryName) != nil {
		t.Errorf("a second entry, %q, was created for the directory", testEntryName)
	}
	progressing := condition(f.task(t, "daily"), controllerhelpers.ProgressingCondition)
	if progressing.Reason != awaitingBackupEntryReason || !strings.Contains(progressing.Message, testIncarnationEntryName) {
		t.Errorf("expected Progressing %s naming %q, got %+v", awaitingBackupEntryReason, testIncarnationEntryName, progressing)
	}

	f.catchUp(t)
	f.mustSync(t, "daily")
	f.onlyTask(t)
}

func TestBackupToADeclaredBucketUsesAnEntryThatRecordsTheClustersDirectory(t *testing.T) {
	t.Parallel()

	// A datacenter-scoped location names the bucket as well; the user created the entry, under the controller's name
	// or another.
	for _, name := range []string{testEntryName, "my-basic-backups"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			task := newBackupTask("daily")
			task.Spec.Backup.Location = []string{"dc1:s3:backups"}
			userEntry := newTestEntry()
			userEntry.Name = name
			userEntry.Labels, userEntry.OwnerReferences = nil, nil
			f := newFixture(t, newRegisteredDatacenter(), task, newBackupBucket(testBucketObject, "backups"), userEntry)

			f.mustSync(t, "daily")

			f.onlyTask(t)
			for _, w := range f.kubeWrites() {
				if strings.Contains(w, "scylladbbackupentries") {
					t.Errorf("unexpected write of an entry: %s", w)
				}
			}
		})
	}
}

func TestBackupToADeclaredBucketIsHeldBack(t *testing.T) {
	t.Parallel()

	otherEntry := func(namespace, name string) runtime.Object {
		e := newTestEntry()
		e.Namespace, e.Name = namespace, name
		e.Spec.ClusterRef.Name, e.Spec.ClusterRef.UID = "other", "other-uid"
		e.Spec.ManagerClusterID = otherClusterID
		return e
	}
	fullBucket := newBackupBucket(testBucketObject, "backups")
	fullBucket.Spec.MaxClusters = new(int32(2))
	recreated := newTestEntry()
	recreated.Spec.ClusterRef.UID = "old-sdc-uid"
	recreated.DeletionTimestamp = new(metav1.NewTime(testStart))
	recreated.Finalizers = []string{naming.ScyllaDBBackupEntryFinalizer}
	oneClusterBucket := newBackupBucket(testBucketObject, "backups")
	oneClusterBucket.Spec.MaxClusters = new(int32(1))
	otherManagerCluster := newTestEntry()
	otherManagerCluster.Spec.ManagerClusterID = otherClusterID

	tt := []struct {
		name        string
		objects     []runtime.Object
		wantReason  string
		wantMessage []string
	}{
		{
			name: "the bucket's quota is full",
			objects: []runtime.Object{
				fullBucket,
				otherEntry("team-a", "other-backups-1"),
				otherEntry("team-b", "other-backups-2"),
			},
			wantReason:  backupBucketQuotaFullReason,
			wantMessage: []string{`ScyllaDBBackupBucket "shared-backups" is full: 2 ScyllaDBBackupEntries use it and spec.maxClusters is 2`},
		},
		{
			// Two entries for one directory would be refused (DuplicateEntry): the cluster was created again from a
			// manifest that kept its predecessor's ScyllaDB Manager cluster ID.
			name:        "the entry of that name, being deleted, records the same ScyllaDB Manager cluster for a deleted cluster object",
			objects:     []runtime.Object{newBackupBucket(testBucketObject, "backups"), recreated},
			wantReason:  backupEntryConflictReason,
			wantMessage: []string{`ScyllaDBBackupEntry "scylla/` + testEntryName + `"`, `UID "old-sdc-uid"`, naming.ScyllaDBBackupRetentionAnnotation + "=keep"},
		},
		{
			name:        "the entry of that name records another ScyllaDB Manager cluster",
			objects:     []runtime.Object{newBackupBucket(testBucketObject, "backups"), otherManagerCluster},
			wantReason:  backupEntryConflictReason,
			wantMessage: []string{`ScyllaDBBackupEntry "scylla/` + testEntryName + `"`, `ScyllaDB Manager cluster "` + otherClusterID + `"`},
		},
		{
			name:        "a live entry made by hand under that name records another cluster object",
			objects:     []runtime.Object{newBackupBucket(testBucketObject, "backups"), otherEntry(testNamespace, testEntryName)},
			wantReason:  backupEntryConflictReason,
			wantMessage: []string{`ScyllaDBBackupEntry "scylla/` + testEntryName + `"`, `ScyllaDBDatacenter "other"`},
		},
		{
			name:        "the other name of a cluster created again is held by an entry of another directory",
			objects:     []runtime.Object{newBackupBucket(testBucketObject, "backups"), newPredecessorEntry(), otherEntry(testNamespace, testIncarnationEntryName)},
			wantReason:  backupEntryConflictReason,
			wantMessage: []string{`ScyllaDBBackupEntry "scylla/` + testIncarnationEntryName + `"`, `ScyllaDBDatacenter "other"`},
		},
		{
			name:        "the entry of the deleted cluster object of the same name fills the quota",
			objects:     []runtime.Object{oneClusterBucket, newPredecessorEntry()},
			wantReason:  backupBucketQuotaFullReason,
			wantMessage: []string{`1 ScyllaDBBackupEntries use it and spec.maxClusters is 1, so ScyllaDBBackupEntry "scylla/` + testIncarnationEntryName + `" can't be created`},
		},
		{
			name:        "two buckets declare the bucket",
			objects:     []runtime.Object{newBackupBucket(testBucketObject, "backups"), newBackupBucket("minio-backups", "backups")},
			wantReason:  backupBucketAmbiguousReason,
			wantMessage: []string{`ScyllaDBBackupBuckets "minio-backups", "shared-backups" all declare bucket "backups"`},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, append([]runtime.Object{newRegisteredDatacenter(), newBackupTask("daily")}, tc.objects...)...)

			f.mustSync(t, "daily")

			if diff := cmp.Diff([]string{"patch scylladbmanagertasks/status " + applyPatch}, f.kubeWrites()); diff != "" {
				t.Errorf("unexpected Kubernetes writes (-want +got):\n%s", diff)
			}
			if requests := f.managerRequests(); len(requests) != 0 {
				t.Errorf("expected no ScyllaDB Manager requests for a task held back, got %+v", requests)
			}
			degraded := condition(f.task(t, "daily"), controllerhelpers.DegradedCondition)
			if degraded.Status != metav1.ConditionTrue || degraded.Reason != tc.wantReason {
				t.Errorf("expected Degraded True/%s, got %+v", tc.wantReason, degraded)
			}
			for _, part := range tc.wantMessage {
				if !strings.Contains(degraded.Message, part) {
					t.Errorf("expected the Degraded message to contain %q, got %q", part, degraded.Message)
				}
			}
			if events := f.events(); len(events) != 1 || !strings.HasPrefix(events[0], "Warning "+tc.wantReason) {
				t.Errorf("expected one Warning %s event, got %q", tc.wantReason, events)
			}

			// Held back, the task makes no write at rest.
			f.mustSync(t, "daily")
			if writes := f.kubeWrites(); len(writes) != 0 {
				t.Errorf("expected no Kubernetes writes at rest, got %v", writes)
			}
			if events := f.events(); len(events) != 0 {
				t.Errorf("expected no events at rest, got %q", events)
			}
		})
	}
}

func TestBackupToABucketNobodyDeclaredIsScheduledWithoutAnEntry(t *testing.T) {
	t.Parallel()

	gcs := newBackupBucket("gcs-backups", "backups")
	gcs.Spec.Provider = scyllav1alpha1.ScyllaDBBackupProviderGCS
	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"), newBackupBucket("elsewhere", "other-bucket"), gcs)

	f.mustSync(t, "daily")

	f.onlyTask(t)
	if diff := cmp.Diff(createWrites, f.kubeWrites()); diff != "" {
		t.Errorf("unexpected Kubernetes writes (-want +got):\n%s", diff)
	}
}

func TestQuotaFreedByADeletedEntryBringsTheTaskBack(t *testing.T) {
	t.Parallel()

	bucket := newBackupBucket(testBucketObject, "backups")
	bucket.Spec.MaxClusters = new(int32(1))
	other := newTestEntry()
	other.Namespace, other.Name = "team-a", "other-backups"
	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"), bucket)

	f.controller.backupEntriesHandlerFuncs().OnDelete(other)

	if n := f.controller.queue.Len(); n != 1 {
		t.Fatalf("expected the task backing up to the bucket to be enqueued, the queue holds %d keys", n)
	}
	if key, _ := f.controller.queue.Get(); key != testNamespace+"/daily" {
		t.Errorf("unexpected key %q", key)
	}
}

func TestLocationBuckets(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name      string
		locations []string
		want      []string
	}{
		{name: "no location", want: nil},
		{name: "one S3 location", locations: []string{"s3:backups"}, want: []string{"backups"}},
		{name: "datacenter locations, repeated buckets once, sorted", locations: []string{"dc2:s3:zeta", "dc1:s3:alpha", "s3:zeta"}, want: []string{"alpha", "zeta"}},
		{name: "other providers name no declared bucket", locations: []string{"gcs:backups", "azure:backups", "dc1:gcs:backups"}, want: nil},
		{name: "malformed locations name no bucket", locations: []string{"backups", "s3:", ":s3:backups", "a:b:s3:backups"}, want: nil},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			task := newBackupTask("daily")
			task.Spec.Backup.Location = tc.locations
			if diff := cmp.Diff(tc.want, locationBuckets(task)); diff != "" {
				t.Errorf("unexpected buckets (-want +got):\n%s", diff)
			}
		})
	}

	if got := locationBuckets(newRepairTask("weekly")); got != nil {
		t.Errorf("a repair names buckets %q", got)
	}
}

func TestTheTaskAndEntryControllersFindADirectorysEntriesThroughOneSharedIndex(t *testing.T) {
	t.Parallel()

	f := newFixture(t)
	entryInformer := f.factory.Scylla().V1alpha1().ScyllaDBBackupEntries()
	if _, err := scylladbbackupentry.NewController(
		kubefake.NewClientset(),
		f.scyllaClient,
		entryInformer,
		f.factory.Scylla().V1alpha1().ScyllaDBBackupBuckets(),
		f.factory.Scylla().V1alpha1().ScyllaDBDatacenters(),
		f.factory.Scylla().V1alpha1().ScyllaDBClusters(),
		func(objectstore.Config) (objectstore.Interface, error) {
			return nil, errors.New("no object store in this test")
		},
	); err != nil {
		t.Fatalf("can't create the ScyllaDBBackupEntry controller: %v", err)
	}

	// Two entries of one directory in two namespaces, and one of another directory: an index keys entries by their
	// directory when it puts the first two, and only them, under one key.
	entry := newTestEntry()
	inOtherNamespace := newTestEntry()
	inOtherNamespace.Namespace = "elsewhere"
	ofOtherDirectory := newTestEntry()
	ofOtherDirectory.Spec.ManagerClusterID = predecessorClusterID
	var directoryIndexes []string
	for name, indexFunc := range entryInformer.Informer().GetIndexer().GetIndexers() {
		keys := func(e *scyllav1alpha1.ScyllaDBBackupEntry) []string {
			k, err := indexFunc(e)
			if err != nil {
				t.Fatalf("index %q: %v", name, err)
			}
			return k
		}
		if cmp.Equal(keys(entry), keys(inOtherNamespace)) && !cmp.Equal(keys(entry), keys(ofOtherDirectory)) {
			directoryIndexes = append(directoryIndexes, name)
		}
	}
	if diff := cmp.Diff([]string{backupstorage.EntryDirectoryIndex}, directoryIndexes); diff != "" {
		t.Errorf("unexpected indexes by directory on the shared informer (-want +got):\n%s", diff)
	}
}

func TestAnEntryInAnotherNamespaceDoesNotServeTheTask(t *testing.T) {
	t.Parallel()

	elsewhere := newTestEntry()
	elsewhere.Namespace = "elsewhere"
	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"), newBackupBucket(testBucketObject, "backups"), elsewhere)

	f.syncBeforeTheCacheCatchesUp(t, "daily")

	if f.entry(t, testEntryName) == nil {
		t.Errorf("expected ScyllaDBBackupEntry %q to be created in the task's namespace", testEntryName)
	}
	progressing := condition(f.task(t, "daily"), controllerhelpers.ProgressingCondition)
	if progressing.Reason != awaitingBackupEntryReason {
		t.Errorf("expected Progressing %s, got %+v", awaitingBackupEntryReason, progressing)
	}
}

func TestExpiredCreatedEntriesAreForgottenWhenTheMemoryIsRead(t *testing.T) {
	t.Parallel()

	clock := &testClock{now: testStart}
	created := newCreatedBackupEntries(clock.Now)
	// The task of this directory was deleted before the cache showed its entry: the directory is never read again.
	created.reserve(createdBackupEntryKey(testNamespace, testBucketObject, predecessorClusterID), "gone")
	clock.Advance(createdBackupEntryTTL)

	if _, _, ok := created.pending(createdBackupEntryKey(testNamespace, testBucketObject, testClusterID)); ok {
		t.Errorf("expected no record of the test directory")
	}
	if got := len(created.entries); got != 0 {
		t.Errorf("expected the expired record of another directory to be forgotten, %d records remain: %v", got, created.entries)
	}
}

// delayRecordingQueue records the delays of AddAfter.
type delayRecordingQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	mu     sync.Mutex
	delays []string
}

func (q *delayRecordingQueue) AddAfter(key string, d time.Duration) {
	q.mu.Lock()
	q.delays = append(q.delays, key+" after "+d.String())
	q.mu.Unlock()
	q.TypedRateLimitingInterface.AddAfter(key, d)
}

// take returns and forgets the recorded delays.
func (q *delayRecordingQueue) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	delays := q.delays
	q.delays = nil
	return delays
}

func TestATaskAwaitingACreatedEntryIsSyncedAgainWhenTheEntryIsForgotten(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"), newBackupBucket(testBucketObject, "backups"))
	queue := &delayRecordingQueue{TypedRateLimitingInterface: f.controller.queue}
	f.controller.queue = queue
	key := testNamespace + "/daily"

	f.syncBeforeTheCacheCatchesUp(t, "daily")
	if f.entry(t, testEntryName) == nil {
		t.Fatalf("expected ScyllaDBBackupEntry %q to be created", testEntryName)
	}
	if diff := cmp.Diff([]string{key + " after " + createdBackupEntryTTL.String()}, queue.take()); diff != "" {
		t.Errorf("unexpected requeues after the create (-want +got):\n%s", diff)
	}

	// The entry is deleted before the cache saw it: no event of it ever comes; the next sync still waits, until the
	// record expires.
	if err := f.scyllaClient.Tracker().Delete(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbbackupentries"), testNamespace, testEntryName); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(2 * time.Minute)
	f.syncBeforeTheCacheCatchesUp(t, "daily")
	if diff := cmp.Diff([]string{key + " after " + (createdBackupEntryTTL - 2*time.Minute).String()}, queue.take()); diff != "" {
		t.Errorf("unexpected requeues while waiting (-want +got):\n%s", diff)
	}
	f.kubeWrites()

	// The requeued sync, once the record expired, creates the entry again.
	f.clock.Advance(createdBackupEntryTTL - 2*time.Minute)
	f.syncBeforeTheCacheCatchesUp(t, "daily")
	if f.entry(t, testEntryName) == nil {
		t.Errorf("expected ScyllaDBBackupEntry %q to be created again once the record expired", testEntryName)
	}
}

// blockingEntryCreates blocks the first create of a ScyllaDBBackupEntry, after closing entered, until release is
// closed. It wraps the clientset rather than being a reactor of the fake: the fake runs its reactors under one lock,
// which a blocked reactor would hold against every other request.
type blockingEntryCreates struct {
	scyllaclientset.Interface
	once             sync.Once
	entered, release chan struct{}
}

func (c *blockingEntryCreates) ScyllaV1alpha1() scyllav1alpha1client.ScyllaV1alpha1Interface {
	return &blockingEntryCreatesV1alpha1{ScyllaV1alpha1Interface: c.Interface.ScyllaV1alpha1(), c: c}
}

type blockingEntryCreatesV1alpha1 struct {
	scyllav1alpha1client.ScyllaV1alpha1Interface
	c *blockingEntryCreates
}

func (v *blockingEntryCreatesV1alpha1) ScyllaDBBackupEntries(namespace string) scyllav1alpha1client.ScyllaDBBackupEntryInterface {
	return &blockingEntryCreatesEntries{ScyllaDBBackupEntryInterface: v.ScyllaV1alpha1Interface.ScyllaDBBackupEntries(namespace), c: v.c}
}

type blockingEntryCreatesEntries struct {
	scyllav1alpha1client.ScyllaDBBackupEntryInterface
	c *blockingEntryCreates
}

func (e *blockingEntryCreatesEntries) Create(ctx context.Context, entry *scyllav1alpha1.ScyllaDBBackupEntry, opts metav1.CreateOptions) (*scyllav1alpha1.ScyllaDBBackupEntry, error) {
	first := false
	e.c.once.Do(func() { first = true })
	if first {
		close(e.c.entered)
		<-e.c.release
	}
	return e.ScyllaDBBackupEntryInterface.Create(ctx, entry, opts)
}

func TestTwoTasksOfAClusterCreateOneEntryWhileTheFirstCreateIsInFlight(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"), newBackupTask("weekly"), newBackupBucket(testBucketObject, "backups"), newPredecessorEntry())
	blocking := &blockingEntryCreates{Interface: f.controller.scyllaClient, entered: make(chan struct{}), release: make(chan struct{})}
	f.controller.scyllaClient = blocking

	// The daily task's worker creates the entry under the other name, the predecessor's entry holding the plain one.
	dailyErr := make(chan error, 1)
	go func() { dailyErr <- f.controller.sync(t.Context(), testNamespace+"/daily") }()
	select {
	case <-blocking.entered:
	case err := <-dailyErr:
		t.Fatalf("the daily task's sync created no entry: %v", err)
	}

	// While that create is in flight the predecessor's entry is gone from the API server and the cache: the weekly
	// task's worker finds the directory without an entry and the plain name free.
	if err := f.scyllaClient.Tracker().Delete(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbbackupentries"), testNamespace, testEntryName); err != nil {
		t.Fatal(err)
	}
	if err := f.factory.Scylla().V1alpha1().ScyllaDBBackupEntries().Informer().GetIndexer().Delete(newPredecessorEntry()); err != nil {
		t.Fatal(err)
	}
	weeklyErr := f.controller.sync(t.Context(), testNamespace+"/weekly")
	close(blocking.release)
	if err := <-dailyErr; err != nil {
		t.Errorf("unexpected sync error of the daily task: %v", err)
	}
	if weeklyErr != nil {
		t.Errorf("unexpected sync error of the weekly task: %v", weeklyErr)
	}

	list, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBBackupEntries(testNamespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list.Items {
		names = append(names, e.Name)
	}
	if diff := cmp.Diff([]string{testIncarnationEntryName}, names); diff != "" {
		t.Errorf("unexpected entries (-want +got):\n%s", diff)
	}
	progressing := condition(f.task(t, "weekly"), controllerhelpers.ProgressingCondition)
	if progressing.Reason != awaitingBackupEntryReason || !strings.Contains(progressing.Message, testIncarnationEntryName) {
		t.Errorf("expected the weekly task Progressing %s naming %q, got %+v", awaitingBackupEntryReason, testIncarnationEntryName, progressing)
	}
}

func TestAFailedCreateReleasesTheEntrysReservation(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"), newBackupBucket(testBucketObject, "backups"))
	f.scyllaClient.PrependReactor("create", "scylladbbackupentries", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd is down")
	})

	if err := f.controller.sync(t.Context(), testNamespace+"/daily"); err == nil {
		t.Fatalf("expected the failed create to fail the sync")
	}
	if _, _, ok := f.controller.createdBackupEntries.pending(createdBackupEntryKey(testNamespace, testBucketObject, testClusterID)); ok {
		t.Errorf("expected no reservation left by the failed create")
	}
}
