package scylladbmanagertask

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
)

func TestMakeMetadataPatchSetsOnlyWhatTheTaskLacks(t *testing.T) {
	t.Parallel()

	const status = `{"name":"daily"}`
	withAll := func() *scyllav1alpha1.ScyllaDBManagerTask {
		task := newBackupTask("daily")
		task.Finalizers = []string{"example.com/other", naming.ScyllaDBManagerTaskFinalizer}
		task.Annotations = map[string]string{
			naming.ScyllaDBManagerTaskClusterIDAnnotation: testClusterID,
			naming.ScyllaDBManagerTaskStatusAnnotation:    status,
			"example.com/kept":                            "yes",
		}
		return task
	}
	tt := []struct {
		name             string
		task             func() *scyllav1alpha1.ScyllaDBManagerTask
		clusterID        string
		statusAnnotation *string
		want             map[string]any
		wantErr          string
	}{
		{
			name:             "nothing lacking",
			task:             withAll,
			clusterID:        testClusterID,
			statusAnnotation: new(status),
		},
		{
			name:      "nothing lacking, status annotation not asked for",
			task:      withAll,
			clusterID: testClusterID,
		},
		{
			name: "a created task: the finalizer, after the others', against its resourceVersion, and the record",
			task: func() *scyllav1alpha1.ScyllaDBManagerTask {
				task := newBackupTask("daily")
				task.Finalizers = []string{"example.com/other"}
				return task
			},
			clusterID: testClusterID,
			want: map[string]any{"metadata": map[string]any{
				"uid":             "daily-uid",
				"resourceVersion": "1",
				"finalizers":      []any{"example.com/other", naming.ScyllaDBManagerTaskFinalizer},
				"annotations":     map[string]any{naming.ScyllaDBManagerTaskClusterIDAnnotation: testClusterID},
			}},
		},
		{
			name: "a moved task: the record only, with no resourceVersion",
			task: withAll,
			// The finalizer is on: annotations merge key by key and need no precondition.
			clusterID: otherClusterID,
			want: map[string]any{"metadata": map[string]any{
				"uid":         "daily-uid",
				"annotations": map[string]any{naming.ScyllaDBManagerTaskClusterIDAnnotation: otherClusterID},
			}},
		},
		{
			name:             "a changed status annotation only",
			task:             withAll,
			clusterID:        testClusterID,
			statusAnnotation: new(`{"name":"daily","id":"x"}`),
			want: map[string]any{"metadata": map[string]any{
				"uid":         "daily-uid",
				"annotations": map[string]any{naming.ScyllaDBManagerTaskStatusAnnotation: `{"name":"daily","id":"x"}`},
			}},
		},
		{
			name: "an empty status annotation the task lacks is set",
			task: func() *scyllav1alpha1.ScyllaDBManagerTask {
				task := withAll()
				delete(task.Annotations, naming.ScyllaDBManagerTaskStatusAnnotation)
				return task
			},
			clusterID:        testClusterID,
			statusAnnotation: new(""),
			want: map[string]any{"metadata": map[string]any{
				"uid":         "daily-uid",
				"annotations": map[string]any{naming.ScyllaDBManagerTaskStatusAnnotation: ""},
			}},
		},
		{
			name:      "an empty cluster ID is refused",
			task:      withAll,
			clusterID: "",
			wantErr:   "can't record an empty ScyllaDB Manager cluster ID",
		},
		{
			name: "a task without a UID is refused",
			task: func() *scyllav1alpha1.ScyllaDBManagerTask {
				task := newBackupTask("daily")
				task.UID = ""
				return task
			},
			clusterID: testClusterID,
			wantErr:   "the object has no UID to patch against",
		},
		{
			name: "a finalizer to add without a resourceVersion is refused",
			task: func() *scyllav1alpha1.ScyllaDBManagerTask {
				task := newCreatedTask("daily")
				task.ResourceVersion = ""
				return task
			},
			clusterID: testClusterID,
			wantErr:   "the object has no resourceVersion to patch its finalizers against",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			patch, err := makeMetadataPatch(tc.task(), tc.clusterID, tc.statusAnnotation)
			if len(tc.wantErr) != 0 {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("expected error %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if patch != nil {
				if err := json.Unmarshal(patch, &got); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected patch (-want +got):\n%s", diff)
			}
		})
	}
}
