package scylladbbackupentry

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseRetentionAcceptsOnlyKeepPurgeNowAndNothing(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name        string
		annotations map[string]string
		want        retention
		wantErr     bool
	}{
		{name: "no annotation", want: retentionGracePeriod},
		{name: "empty value", annotations: map[string]string{naming.ScyllaDBBackupRetentionAnnotation: ""}, want: retentionGracePeriod},
		{name: "keep", annotations: map[string]string{naming.ScyllaDBBackupRetentionAnnotation: "keep"}, want: retentionKeep},
		{name: "purge-now", annotations: map[string]string{naming.ScyllaDBBackupRetentionAnnotation: "purge-now"}, want: retentionPurgeNow},
		{name: "capitalised", annotations: map[string]string{naming.ScyllaDBBackupRetentionAnnotation: "Keep"}, wantErr: true},
		{name: "a typo", annotations: map[string]string{naming.ScyllaDBBackupRetentionAnnotation: "purge_now"}, wantErr: true},
		{name: "padded", annotations: map[string]string{naming.ScyllaDBBackupRetentionAnnotation: " keep"}, wantErr: true},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			entry := &scyllav1alpha1.ScyllaDBBackupEntry{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}}
			got, err := parseRetention(entry)
			if (err != nil) != tc.wantErr {
				t.Fatalf("expected error %v, got %v", tc.wantErr, err)
			}
			if err == nil && got != tc.want {
				t.Errorf("expected %v, got %v", tc.want, got)
			}
		})
	}
}

func TestPurgeAfterIsNeverEarlierThanTheGracePeriod(t *testing.T) {
	t.Parallel()

	deletedAt := metav1.NewTime(time.Date(2026, time.March, 10, 12, 0, 0, 0, time.UTC))
	tt := []struct {
		name  string
		grace time.Duration
		want  time.Time
	}{
		{name: "whole hours", grace: 720 * time.Hour, want: deletedAt.Add(720 * time.Hour)},
		{name: "zero", grace: 0, want: deletedAt.Time},
		{name: "a fraction of a second rounds up", grace: 1500 * time.Millisecond, want: deletedAt.Add(2 * time.Second)},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := purgeAfter(deletedAt, tc.grace)
			if !got.Time.Equal(tc.want) {
				t.Errorf("expected %v, got %v", tc.want, got.Time)
			}
		})
	}
}

func TestDeletionGracePeriodDefaultsTo720Hours(t *testing.T) {
	t.Parallel()

	bucket := &scyllav1alpha1.ScyllaDBBackupBucket{}
	if got := deletionGracePeriod(bucket); got != 720*time.Hour {
		t.Errorf("expected 720h, got %v", got)
	}
	bucket.Spec.DeletionGracePeriod = &metav1.Duration{Duration: time.Hour}
	if got := deletionGracePeriod(bucket); got != time.Hour {
		t.Errorf("expected 1h, got %v", got)
	}
}

func TestFirstEntryIsTheEarliestCreatedThenByNamespaceAndName(t *testing.T) {
	t.Parallel()

	t0 := time.Date(2026, time.March, 1, 8, 0, 0, 0, time.UTC)
	entry := func(namespace, name string, created time.Time) *scyllav1alpha1.ScyllaDBBackupEntry {
		return &scyllav1alpha1.ScyllaDBBackupEntry{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, CreationTimestamp: metav1.NewTime(created)}}
	}
	tt := []struct {
		name    string
		entries []*scyllav1alpha1.ScyllaDBBackupEntry
		want    string
	}{
		{name: "none", want: ""},
		{name: "earliest wins", entries: []*scyllav1alpha1.ScyllaDBBackupEntry{entry("a", "late", t0.Add(time.Second)), entry("z", "early", t0)}, want: "z/early"},
		{name: "same time, namespace decides", entries: []*scyllav1alpha1.ScyllaDBBackupEntry{entry("b", "a", t0), entry("a", "z", t0)}, want: "a/z"},
		{name: "same time and namespace, name decides", entries: []*scyllav1alpha1.ScyllaDBBackupEntry{entry("a", "y", t0), entry("a", "x", t0)}, want: "a/x"},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := ""
			if e := firstEntry(tc.entries); e != nil {
				got = e.Namespace + "/" + e.Name
			}
			if got != tc.want {
				t.Errorf("expected %q, got %q", tc.want, got)
			}
		})
	}
}

func TestClusterDeletedAt(t *testing.T) {
	t.Parallel()

	entryDeleted := metav1.NewTime(time.Date(2026, time.March, 10, 12, 0, 0, 0, time.UTC))
	now := metav1.NewTime(entryDeleted.Add(100 * time.Hour))
	clusterDeleted := metav1.NewTime(entryDeleted.Add(90 * time.Hour))
	held := []metav1.Condition{{Type: "Degraded", Status: metav1.ConditionTrue, Reason: clusterInUseReason}}

	tt := []struct {
		name       string
		recorded   *metav1.Time
		conditions []metav1.Condition
		cluster    *scyllav1alpha1.ScyllaDBDatacenter
		state      clusterState
		want       *metav1.Time
	}{
		{name: "cluster in use", state: clusterInUse, want: nil},
		{name: "cluster gone: the entry's deletion", state: clusterGone, want: &entryDeleted},
		{name: "recorded equal", recorded: &entryDeleted, state: clusterGone, want: &entryDeleted},
		{name: "recorded later after a hold", recorded: &clusterDeleted, state: clusterGone, want: &clusterDeleted},
		{name: "released from a hold, cluster gone: now", conditions: held, state: clusterGone, want: &now},
		{
			name:       "released from a hold, cluster being deleted: its deletion",
			conditions: held,
			cluster:    &scyllav1alpha1.ScyllaDBDatacenter{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &clusterDeleted}},
			state:      clusterDeleting,
			want:       &clusterDeleted,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			entry := &scyllav1alpha1.ScyllaDBBackupEntry{
				ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &entryDeleted},
				Status:     scyllav1alpha1.ScyllaDBBackupEntryStatus{ClusterDeletedAt: tc.recorded, Conditions: tc.conditions},
			}
			var cluster metav1.Object
			if tc.cluster != nil {
				cluster = tc.cluster
			}
			if diff := cmp.Diff(tc.want, clusterDeletedAt(entry, cluster, tc.state, now)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTruncateMessageKeepsTheAPILimit(t *testing.T) {
	t.Parallel()

	short := "can't purge"
	if got := truncateMessage(short); got != short {
		t.Errorf("expected a short message unchanged, got %q", got)
	}
	long := strings.Repeat("é", maxMessageLength)
	got := truncateMessage(long)
	if len(got) > maxMessageLength || !strings.HasSuffix(got, "... (truncated)") || !utf8.ValidString(got) {
		t.Errorf("unexpected truncation: length %d, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}
