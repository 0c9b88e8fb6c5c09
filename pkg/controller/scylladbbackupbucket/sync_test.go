package scylladbbackupbucket

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	objectstorefake "github.com/scyllakube/scylla-operator/pkg/objectstore/fake"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
)

const statusApply = "patch scylladbbackupbuckets/status"

func TestSyncReportsTheBucketsStore(t *testing.T) {
	t.Parallel()

	withCredentials := func() *scyllav1alpha1.ScyllaDBBackupBucket {
		b := newBucket()
		b.Spec.CredentialsSecretRef = &scyllav1alpha1.ScyllaDBBackupBucketSecretReference{Namespace: "backup-creds", Name: "s3"}
		return b
	}
	provisioned := newBucket()
	provisioned.Spec.Provision = true

	tt := []struct {
		name    string
		store   func() *objectstorefake.Store
		objects []runtime.Object
		// wantErr tells that the sync asks for a retry with back-off.
		wantErr        bool
		wantCalls      []string
		wantConditions []string
		// wantMessage are parts of the Degraded message.
		wantMessage []string
		wantEvents  []string
	}{
		{
			name:           "the bucket exists",
			store:          func() *objectstorefake.Store { return objectstorefake.New(testBucketName) },
			objects:        []runtime.Object{withCredentials(), newCredentialsSecret()},
			wantCalls:      []string{"BucketExists backups"},
			wantConditions: []string{"Available=True/BucketAvailable", "Progressing=False/AsExpected", "Degraded=False/AsExpected"},
		},
		{
			name:           "the bucket is missing and not provisioned",
			store:          func() *objectstorefake.Store { return objectstorefake.New() },
			objects:        []runtime.Object{newBucket()},
			wantCalls:      []string{"BucketExists backups"},
			wantConditions: []string{"Available=False/BucketMissing", "Progressing=False/AsExpected", "Degraded=True/BucketMissing"},
			wantMessage:    []string{`bucket "backups" does not exist in http://127.0.0.1:7070`, "set spec.provision"},
			wantEvents:     []string{"Warning BucketMissing"},
		},
		{
			name:           "the missing bucket is provisioned",
			store:          func() *objectstorefake.Store { return objectstorefake.New() },
			objects:        []runtime.Object{provisioned},
			wantCalls:      []string{"BucketExists backups", "MakeBucket backups"},
			wantConditions: []string{"Available=True/BucketAvailable", "Progressing=False/AsExpected", "Degraded=False/AsExpected"},
			wantEvents:     []string{"Normal BucketProvisioned"},
		},
		{
			name: "the store refuses the credentials",
			store: func() *objectstorefake.Store {
				s := objectstorefake.New(testBucketName)
				s.SetErrorFunc(func(objectstorefake.Call) error {
					return objectstorefake.ErrorResponse(objectstore.ErrorCodeAccessDenied, "Access Denied.", http.StatusForbidden)
				})
				return s
			},
			objects:        []runtime.Object{withCredentials(), newCredentialsSecret()},
			wantCalls:      []string{"BucketExists backups"},
			wantConditions: []string{"Available=False/AccessDenied", "Progressing=False/AsExpected", "Degraded=True/AccessDenied"},
			wantMessage:    []string{"Access Denied", "static credentials"},
			wantEvents:     []string{"Warning AccessDenied"},
		},
		{
			name: "the store is unreachable",
			store: func() *objectstorefake.Store {
				s := objectstorefake.New(testBucketName)
				s.SetErrorFunc(func(objectstorefake.Call) error {
					return errors.New("dial tcp 127.0.0.1:7070: connect: connection refused")
				})
				return s
			},
			objects:        []runtime.Object{newBucket()},
			wantErr:        true,
			wantCalls:      []string{"BucketExists backups"},
			wantConditions: []string{"Available=Unknown/StoreUnreachable", "Progressing=True/Retrying", "Degraded=True/StoreUnreachable"},
			wantMessage:    []string{"connection refused"},
			wantEvents:     []string{"Warning StoreUnreachable"},
		},
		{
			name:           "the credentials Secret is missing",
			store:          func() *objectstorefake.Store { return objectstorefake.New(testBucketName) },
			objects:        []runtime.Object{withCredentials()},
			wantCalls:      nil,
			wantConditions: []string{"Available=False/CredentialsSecretMissing", "Progressing=False/AsExpected", "Degraded=True/CredentialsSecretMissing"},
			wantMessage:    []string{`Secret "backup-creds/s3" named by spec.credentialsSecretRef does not exist`},
			wantEvents:     []string{"Warning CredentialsSecretMissing"},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.store(), tc.objects...)

			err := f.sync(t)
			if (err != nil) != tc.wantErr {
				t.Errorf("got sync error %v, want an error: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantCalls, f.storeCalls()); diff != "" {
				t.Errorf("unexpected store calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{statusApply}, f.writes()); diff != "" {
				t.Errorf("unexpected writes (-want +got):\n%s", diff)
			}
			b := f.bucket(t)
			if diff := cmp.Diff(tc.wantConditions, conditionStatuses(b)); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
			if b.Status.ObservedGeneration == nil || *b.Status.ObservedGeneration != 1 {
				t.Errorf("unexpected observedGeneration %v", b.Status.ObservedGeneration)
			}
			degraded := meta.FindStatusCondition(b.Status.Conditions, controllerhelpers.DegradedCondition)
			for _, part := range tc.wantMessage {
				if !strings.Contains(degraded.Message, part) {
					t.Errorf("expected the Degraded message to contain %q, got %q", part, degraded.Message)
				}
			}
			for _, c := range b.Status.Conditions {
				if strings.Contains(c.Message, testAccessKey) || strings.Contains(c.Message, testSecretKey) {
					t.Errorf("condition %s reveals the credentials: %q", c.Type, c.Message)
				}
			}
			events := f.events()
			if len(events) != len(tc.wantEvents) {
				t.Errorf("got events %q, want %q", events, tc.wantEvents)
			}
			for i := range min(len(events), len(tc.wantEvents)) {
				if !strings.HasPrefix(events[i], tc.wantEvents[i]) {
					t.Errorf("got event %q, want one starting %q", events[i], tc.wantEvents[i])
				}
				if strings.Contains(events[i], testSecretKey) {
					t.Errorf("event reveals the credentials: %q", events[i])
				}
			}

			// The next sync (a resync) checks the store again, at most once, and writes nothing.
			if err := f.sync(t); (err != nil) != tc.wantErr {
				t.Errorf("got second sync error %v, want an error: %v", err, tc.wantErr)
			}
			if calls := f.storeCalls(); len(calls) > 1 || (len(calls) == 1 && calls[0] != "BucketExists backups") {
				t.Errorf("expected at most one existence check at rest, got %q", calls)
			}
			if writes := f.writes(); len(writes) != 0 {
				t.Errorf("expected no writes at rest, got %q", writes)
			}
			if events := f.events(); len(events) != 0 {
				t.Errorf("expected no events at rest, got %q", events)
			}
		})
	}
}

func TestSyncPassesTheBucketsStoreConfiguration(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name    string
		ref     bool
		wantKey string
	}{
		{name: "credentials from the Secret", ref: true, wantKey: testAccessKey},
		{name: "no reference uses the controller's own role", ref: false, wantKey: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBucket()
			if tc.ref {
				b.Spec.CredentialsSecretRef = &scyllav1alpha1.ScyllaDBBackupBucketSecretReference{Namespace: "backup-creds", Name: "s3"}
			}
			f := newFixture(t, objectstorefake.New(testBucketName), b, newCredentialsSecret())
			if err := f.sync(t); err != nil {
				t.Fatal(err)
			}
			want := objectstore.Config{Endpoint: "http://127.0.0.1:7070", Region: "eu-west-1"}
			if tc.ref {
				want.AccessKeyID, want.SecretAccessKey = testAccessKey, testSecretKey
			}
			if diff := cmp.Diff([]objectstore.Config{want}, f.configs); diff != "" {
				t.Errorf("unexpected store configuration (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncCountsTheEntriesUsingTheBucket(t *testing.T) {
	t.Parallel()

	f := newFixture(t, objectstorefake.New(testBucketName), newBucket(),
		newEntry("team-a", "a-backups", testBucket, false),
		newEntry("team-b", "b-backups", testBucket, true),
		newEntry("team-c", "c-backups", testBucket, false),
		newEntry("team-a", "elsewhere", "other-bucket", true),
	)
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	b := f.bucket(t)
	got := []int32{*b.Status.Clusters, *b.Status.EntriesPendingPurge}
	if diff := cmp.Diff([]int32{3, 1}, got); diff != "" {
		t.Errorf("unexpected clusters and entriesPendingPurge (-want +got):\n%s", diff)
	}

	// An entry gone changes the counts: one status write, nothing more.
	if err := f.scyllaClient.Tracker().Delete(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbbackupentries"), "team-b", "b-backups"); err != nil {
		t.Fatal(err)
	}
	f.catchUp(t)
	f.writes()
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{statusApply}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	b = f.bucket(t)
	got = []int32{*b.Status.Clusters, *b.Status.EntriesPendingPurge}
	if diff := cmp.Diff([]int32{2, 0}, got); diff != "" {
		t.Errorf("unexpected clusters and entriesPendingPurge (-want +got):\n%s", diff)
	}
}

func TestSyncOfABucketThatIsGoneDoesNothing(t *testing.T) {
	t.Parallel()

	f := newFixture(t, objectstorefake.New(testBucketName))
	if err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if calls := f.storeCalls(); len(calls) != 0 {
		t.Errorf("unexpected store calls %q", calls)
	}
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("unexpected writes %q", writes)
	}
}

func TestEntryEventsEnqueueTheirBucketOnlyWhenTheCountsChange(t *testing.T) {
	t.Parallel()

	f := newFixture(t, objectstorefake.New(testBucketName))
	h := f.controller.entryHandlerFuncs()
	entry := newEntry("team-a", "a-backups", testBucket, false)
	statusChanged := entry.DeepCopy()
	statusChanged.ResourceVersion = "2"
	statusChanged.Status.Objects = new(int64(3))
	deleting := newEntry("team-a", "a-backups", testBucket, true)

	h.OnUpdate(entry, statusChanged)
	if n := f.controller.queue.Len(); n != 0 {
		t.Errorf("a status update enqueued %d keys", n)
	}
	h.OnUpdate(statusChanged, deleting)
	h.OnAdd(entry, false)
	h.OnDelete(deleting)
	if n := f.controller.queue.Len(); n != 1 {
		t.Errorf("expected the bucket to be enqueued once, the queue holds %d keys", n)
	}
	if key, _ := f.controller.queue.Get(); key != testBucket {
		t.Errorf("unexpected key %q", key)
	}
}

func TestRetryBeforeTheInformerShowsTheStatusWritesNothingAgain(t *testing.T) {
	t.Parallel()

	store := objectstorefake.New(testBucketName)
	store.SetErrorFunc(func(objectstorefake.Call) error {
		return errors.New("dial tcp 127.0.0.1:7070: connect: connection refused")
	})
	f := newFixture(t, store, newBucket())
	if err := f.controller.sync(t.Context(), testBucket); err == nil {
		t.Fatal("expected the sync to fail so that the queue backs off")
	}
	if diff := cmp.Diff([]string{statusApply}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	if events := f.events(); len(events) != 1 {
		t.Errorf("expected one Warning event, got %q", events)
	}

	// The queue's first retry comes within milliseconds, before the informer delivers the status just applied.
	if err := f.controller.sync(t.Context(), testBucket); err == nil {
		t.Fatal("expected the retry to fail too")
	}
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("expected the retry to write nothing, got %q", writes)
	}
	if events := f.events(); len(events) != 0 {
		t.Errorf("expected the retry to record no event, got %q", events)
	}
}

// delayRecordingQueue is the controller's queue with its delayed additions recorded.
type delayRecordingQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	mu    sync.Mutex
	after map[string]time.Duration
}

func (q *delayRecordingQueue) AddAfter(key string, d time.Duration) {
	q.mu.Lock()
	q.after[key] = d
	q.mu.Unlock()
	q.TypedRateLimitingInterface.AddAfter(key, d)
}

// takeAfter returns and forgets the delayed additions.
func (q *delayRecordingQueue) takeAfter() map[string]time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	after := q.after
	q.after = map[string]time.Duration{}
	return after
}

// TestMissingOrIncompleteCredentialsSecretIsReadAgainWithinAMinute: the controller does not watch Secrets, so a
// bucket applied before its credentials Secret (as GitOps tools may order them), or whose Secret lacks a key, must
// look again by itself: otherwise it reports the Secret missing until the next resync, hours after it was fixed.
func TestMissingOrIncompleteCredentialsSecretIsReadAgainWithinAMinute(t *testing.T) {
	t.Parallel()

	incomplete := newCredentialsSecret()
	delete(incomplete.Data, "secret_access_key")
	tt := []struct {
		name           string
		secret         *corev1.Secret
		wantConditions []string
	}{
		{
			name:           "the Secret is missing",
			wantConditions: []string{"Available=False/CredentialsSecretMissing", "Progressing=False/AsExpected", "Degraded=True/CredentialsSecretMissing"},
		},
		{
			name:           "the Secret lacks a key",
			secret:         incomplete,
			wantConditions: []string{"Available=False/InvalidCredentialsSecret", "Progressing=False/AsExpected", "Degraded=True/InvalidCredentialsSecret"},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			bucket := newBucket()
			bucket.Spec.CredentialsSecretRef = &scyllav1alpha1.ScyllaDBBackupBucketSecretReference{Namespace: "backup-creds", Name: "s3"}
			objects := []runtime.Object{bucket}
			if tc.secret != nil {
				objects = append(objects, tc.secret)
			}
			f := newFixture(t, objectstorefake.New(testBucketName), objects...)
			q := &delayRecordingQueue{TypedRateLimitingInterface: f.controller.queue, after: map[string]time.Duration{}}
			f.controller.queue = q

			if err := f.sync(t); err != nil {
				t.Fatalf("unexpected sync error: %v", err)
			}
			if diff := cmp.Diff(tc.wantConditions, conditionStatuses(f.bucket(t))); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
			if calls := f.storeCalls(); len(calls) != 0 {
				t.Errorf("expected no store call without usable credentials, got %q", calls)
			}
			if diff := cmp.Diff(map[string]time.Duration{testBucket: time.Minute}, q.takeAfter()); diff != "" {
				t.Errorf("expected the Secret to be read again in a minute (-want +got):\n%s", diff)
			}

			// The Secret is fixed; the recheck finds it and the bucket becomes Available.
			secrets := f.kubeClient.CoreV1().Secrets("backup-creds")
			var err error
			if tc.secret == nil {
				_, err = secrets.Create(t.Context(), newCredentialsSecret(), metav1.CreateOptions{})
			} else {
				_, err = secrets.Update(t.Context(), newCredentialsSecret(), metav1.UpdateOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := f.sync(t); err != nil {
				t.Fatalf("unexpected sync error: %v", err)
			}
			want := []string{"Available=True/BucketAvailable", "Progressing=False/AsExpected", "Degraded=False/AsExpected"}
			if diff := cmp.Diff(want, conditionStatuses(f.bucket(t))); diff != "" {
				t.Errorf("unexpected conditions once the Secret is fixed (-want +got):\n%s", diff)
			}
			// An available bucket is at rest: nothing is queued for later.
			if after := q.takeAfter(); len(after) != 0 {
				t.Errorf("expected nothing queued for later at rest, got %v", after)
			}
		})
	}
}

// TestRefusedCredentialsAreCheckedAgainOnceTheSecretChanges: the store refusing a Secret's credentials is fixed by
// changing the Secret, which the controller does not watch. The Secret is read again every minute, and the store is
// asked again only once the Secret holds other credentials: the bucket is Available within a minute of the fix, and
// a Secret that stays wrong costs no store call.
func TestRefusedCredentialsAreCheckedAgainOnceTheSecretChanges(t *testing.T) {
	t.Parallel()

	bucket := newBucket()
	bucket.Spec.CredentialsSecretRef = &scyllav1alpha1.ScyllaDBBackupBucketSecretReference{Namespace: "backup-creds", Name: "s3"}
	wrong := newCredentialsSecret()
	wrong.Data["secret_access_key"] = []byte("wrong")
	store := objectstorefake.New(testBucketName)
	store.SetErrorFunc(func(objectstorefake.Call) error {
		return objectstorefake.ErrorResponse(objectstore.ErrorCodeSignatureDoesNotMatch, "The request signature we calculated does not match the signature you provided.", http.StatusForbidden)
	})
	f := newFixture(t, store, bucket, wrong)
	q := &delayRecordingQueue{TypedRateLimitingInterface: f.controller.queue, after: map[string]time.Duration{}}
	f.controller.queue = q
	var mu sync.Mutex
	now := testStart
	f.controller.clock = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	advance := func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(d)
	}
	refused := []string{"Available=False/AccessDenied", "Progressing=False/AsExpected", "Degraded=True/AccessDenied"}

	if err := f.sync(t); err != nil {
		t.Fatalf("unexpected sync error: %v", err)
	}
	if diff := cmp.Diff(refused, conditionStatuses(f.bucket(t))); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"BucketExists backups"}, f.storeCalls()); diff != "" {
		t.Errorf("unexpected store calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]time.Duration{testBucket: time.Minute}, q.takeAfter()); diff != "" {
		t.Errorf("expected the Secret to be read again in a minute (-want +got):\n%s", diff)
	}
	f.writes()

	// The rechecks of a Secret that did not change ask the store nothing and write nothing.
	for range 2 {
		advance(time.Minute)
		if err := f.sync(t); err != nil {
			t.Fatalf("unexpected sync error: %v", err)
		}
		if calls := f.storeCalls(); len(calls) != 0 {
			t.Errorf("expected no store call while the Secret holds the refused credentials, got %q", calls)
		}
		if writes := f.writes(); len(writes) != 0 {
			t.Errorf("expected no writes at rest, got %q", writes)
		}
		if diff := cmp.Diff(map[string]time.Duration{testBucket: time.Minute}, q.takeAfter()); diff != "" {
			t.Errorf("expected the Secret to be read again in a minute (-want +got):\n%s", diff)
		}
	}

	// The Secret is fixed: the next recheck asks the store, and the bucket is Available.
	if _, err := f.kubeClient.CoreV1().Secrets("backup-creds").Update(t.Context(), newCredentialsSecret(), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	store.SetErrorFunc(nil)
	advance(time.Minute)
	if err := f.sync(t); err != nil {
		t.Fatalf("unexpected sync error: %v", err)
	}
	if diff := cmp.Diff([]string{"BucketExists backups"}, f.storeCalls()); diff != "" {
		t.Errorf("unexpected store calls (-want +got):\n%s", diff)
	}
	want := []string{"Available=True/BucketAvailable", "Progressing=False/AsExpected", "Degraded=False/AsExpected"}
	if diff := cmp.Diff(want, conditionStatuses(f.bucket(t))); diff != "" {
		t.Errorf("unexpected conditions once the Secret is fixed (-want +got):\n%s", diff)
	}
	if after := q.takeAfter(); len(after) != 0 {
		t.Errorf("expected nothing queued for later at rest, got %v", after)
	}
}

// TestARefusedBucketIsAskedAgainOnAChangeOrResync: a refusal answers only the recheck it queued; a change of the
// bucket, or a resync before that recheck is due, asks the store as before (the store's policy may have changed).
func TestARefusedBucketIsAskedAgainOnAChangeOrResync(t *testing.T) {
	t.Parallel()

	bucket := newBucket()
	bucket.Spec.CredentialsSecretRef = &scyllav1alpha1.ScyllaDBBackupBucketSecretReference{Namespace: "backup-creds", Name: "s3"}
	store := objectstorefake.New(testBucketName)
	store.SetErrorFunc(func(objectstorefake.Call) error {
		return objectstorefake.ErrorResponse(objectstore.ErrorCodeAccessDenied, "Access Denied.", http.StatusForbidden)
	})
	f := newFixture(t, store, bucket, newCredentialsSecret())

	var mu sync.Mutex
	now := testStart
	f.controller.clock = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	set := func(t time.Time) {
		mu.Lock()
		defer mu.Unlock()
		now = t
	}

	if err := f.sync(t); err != nil {
		t.Fatalf("unexpected sync error: %v", err)
	}
	f.storeCalls()
	// A resync before the recheck is due asks the store; the recheck queued first, when due, does not.
	set(testStart.Add(30 * time.Second))
	if err := f.sync(t); err != nil {
		t.Fatalf("unexpected sync error: %v", err)
	}
	if diff := cmp.Diff([]string{"BucketExists backups"}, f.storeCalls()); diff != "" {
		t.Errorf("expected a resync to ask the store (-want +got):\n%s", diff)
	}
	set(testStart.Add(time.Minute))
	if err := f.sync(t); err != nil {
		t.Fatalf("unexpected sync error: %v", err)
	}
	if calls := f.storeCalls(); len(calls) != 0 {
		t.Errorf("expected the recheck after a resync to ask the store nothing, got %q", calls)
	}
	// A change of the bucket, once the next recheck is due.
	set(testStart.Add(time.Hour))
	changed := f.bucket(t)
	changed.Spec.Region = "eu-central-1"
	changed.Generation++
	if _, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBBackupBuckets().Update(t.Context(), changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.catchUp(t)
	if err := f.sync(t); err != nil {
		t.Fatalf("unexpected sync error: %v", err)
	}
	if diff := cmp.Diff([]string{"BucketExists backups"}, f.storeCalls()); diff != "" {
		t.Errorf("expected a changed bucket to ask the store (-want +got):\n%s", diff)
	}
}
