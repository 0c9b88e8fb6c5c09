package scyllacluster

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	testNow     = metav1.NewTime(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	testEarlier = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
)

func condition(condType string, status metav1.ConditionStatus, reason, message string, generation int64, lastTransitionTime metav1.Time) metav1.Condition {
	return metav1.Condition{
		Type:               condType,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: generation,
		LastTransitionTime: lastTransitionTime,
	}
}

// asExpectedSubSyncConditions are the conditions of two sub-syncs that had nothing to wait for and met no error.
func asExpectedSubSyncConditions(generation int64) []metav1.Condition {
	var conditions []metav1.Condition
	for _, name := range []string{scyllaDBDatacenterControllerName, scyllaDBManagerTaskControllerName} {
		for _, suffix := range []string{"Progressing", "Degraded"} {
			conditions = append(conditions, metav1.Condition{Type: name + suffix, Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: generation})
		}
	}
	return conditions
}

// withTransitionTime returns conditions with lastTransitionTime set to t.
func withTransitionTime(conditions []metav1.Condition, t metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(conditions))
	for _, c := range conditions {
		c.LastTransitionTime = t
		out = append(out, c)
	}
	return out
}

// newScyllaDBDatacenterWithStatus returns the ScyllaDBDatacenter of newBasicScyllaCluster at generation 6, with a
// status computed for observedGeneration: two racks, one of them stale, and conditions Available True, Progressing
// False and Degraded False.
func newScyllaDBDatacenterWithStatus(observedGeneration int64) *scyllav1alpha1.ScyllaDBDatacenter {
	sdc := expectedBasicScyllaDBDatacenter()
	sdc.Generation = 6
	sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = "manager-cluster-id"
	sdc.Status = scyllav1alpha1.ScyllaDBDatacenterStatus{
		ObservedGeneration: new(observedGeneration),
		Conditions: []metav1.Condition{
			condition("Available", metav1.ConditionTrue, "AsExpected", "", observedGeneration, testEarlier),
			condition("Progressing", metav1.ConditionFalse, "AsExpected", "", observedGeneration, testEarlier),
			condition("Degraded", metav1.ConditionFalse, "AsExpected", "", observedGeneration, testEarlier),
		},
		CurrentVersion: "2025.1.2",
		UpdatedVersion: "2025.1.2",
		NodeCounts: scyllav1alpha1.NodeCounts{
			Nodes: new(int32(4)), CurrentNodes: new(int32(4)), UpdatedNodes: new(int32(4)), ReadyNodes: new(int32(3)), AvailableNodes: new(int32(2)),
		},
		Racks: []scyllav1alpha1.RackStatus{
			{
				Name:           "a",
				CurrentVersion: "2025.1.1",
				UpdatedVersion: "2025.1.2",
				NodeCounts: scyllav1alpha1.NodeCounts{
					Nodes: new(int32(3)), CurrentNodes: new(int32(2)), UpdatedNodes: new(int32(1)), ReadyNodes: new(int32(3)), AvailableNodes: new(int32(2)),
				},
				Stale: new(false),
			},
			{
				Name:           "b",
				UpdatedVersion: "2025.1.2",
				NodeCounts:     scyllav1alpha1.NodeCounts{Nodes: new(int32(1)), UpdatedNodes: new(int32(1))},
				Stale:          new(true),
			},
		},
	}
	return sdc
}

// expectedRackStatuses are the rack statuses mirrored from newScyllaDBDatacenterWithStatus; rack a is stale when
// the whole ScyllaDBDatacenter is.
func expectedRackStatuses(datacenterStale bool) map[string]scyllav1.RackStatus {
	return map[string]scyllav1.RackStatus{
		"a": {Version: "2025.1.1", Members: 3, ReadyMembers: 3, AvailableMembers: new(int32(2)), UpdatedMembers: new(int32(1)), Stale: new(datacenterStale)},
		"b": {Version: "2025.1.2", Members: 1, UpdatedMembers: new(int32(1)), Stale: new(true)},
	}
}

// expectedMirroredStatus is the status mirrored from newScyllaDBDatacenterWithStatus.
func expectedMirroredStatus(observedGeneration int64, datacenterStale bool, conditions []metav1.Condition) *scyllav1.ScyllaClusterStatus {
	return &scyllav1.ScyllaClusterStatus{
		ObservedGeneration: new(observedGeneration),
		Racks:              expectedRackStatuses(datacenterStale),
		Members:            new(int32(4)),
		ReadyMembers:       new(int32(3)),
		AvailableMembers:   new(int32(2)),
		RackCount:          new(int32(2)),
		ManagerID:          new("manager-cluster-id"),
		Conditions:         conditions,
	}
}

func TestCalculateStatusMirrorsTheScyllaDBDatacenter(t *testing.T) {
	t.Parallel()

	const (
		generation         = int64(3)
		previousGeneration = int64(2)
	)
	newScyllaCluster := func() *scyllav1.ScyllaCluster {
		sc := newBasicScyllaCluster()
		sc.Generation = generation
		sc.Status.ObservedGeneration = new(previousGeneration)
		return sc
	}
	notObserved := func(message string) []metav1.Condition {
		return []metav1.Condition{
			condition("ScyllaDBDatacenterAvailable", metav1.ConditionTrue, "AsExpected", "", previousGeneration, testNow),
			condition("ScyllaDBDatacenterProgressing", metav1.ConditionTrue, "ScyllaDBDatacenterNotObserved", message, generation, testNow),
			condition("ScyllaDBDatacenterDegraded", metav1.ConditionFalse, "AsExpected", "", previousGeneration, testNow),
			condition("Available", metav1.ConditionTrue, "AsExpected", "", generation, testNow),
			condition("Progressing", metav1.ConditionTrue, "ScyllaDBDatacenterNotObserved", "ScyllaDBDatacenterProgressing: "+message, generation, testNow),
			condition("Degraded", metav1.ConditionFalse, "AsExpected", "", generation, testNow),
		}
	}

	tt := []struct {
		name       string
		sc         *scyllav1.ScyllaCluster
		sdc        *scyllav1alpha1.ScyllaDBDatacenter
		sdcCurrent bool
		want       *scyllav1.ScyllaClusterStatus
	}{
		{
			name:       "a ScyllaDBDatacenter that observed its current spec gives the ScyllaCluster's generation to the status and its conditions",
			sc:         newScyllaCluster(),
			sdc:        newScyllaDBDatacenterWithStatus(6),
			sdcCurrent: true,
			want: expectedMirroredStatus(generation, false, withTransitionTime(append(asExpectedSubSyncConditions(generation),
				condition("ScyllaDBDatacenterAvailable", metav1.ConditionTrue, "AsExpected", "", generation, testNow),
				condition("ScyllaDBDatacenterProgressing", metav1.ConditionFalse, "AsExpected", "", generation, testNow),
				condition("ScyllaDBDatacenterDegraded", metav1.ConditionFalse, "AsExpected", "", generation, testNow),
				condition("Available", metav1.ConditionTrue, "AsExpected", "", generation, testNow),
				condition("Progressing", metav1.ConditionFalse, "AsExpected", "", generation, testNow),
				condition("Degraded", metav1.ConditionFalse, "AsExpected", "", generation, testNow),
			), testNow)),
		},
		{
			name:       "a ScyllaDBDatacenter that has not observed its current generation keeps the old generation and is progressing",
			sc:         newScyllaCluster(),
			sdc:        newScyllaDBDatacenterWithStatus(5),
			sdcCurrent: true,
			want: expectedMirroredStatus(previousGeneration, true, withTransitionTime(append(asExpectedSubSyncConditions(generation),
				notObserved(`ScyllaDBDatacenter "basic" has observed generation 5, not 6 yet`)...), testNow)),
		},
		{
			name:       "a ScyllaDBDatacenter that could not be updated to the current spec is stale whatever it observed",
			sc:         newScyllaCluster(),
			sdc:        newScyllaDBDatacenterWithStatus(6),
			sdcCurrent: false,
			want: expectedMirroredStatus(previousGeneration, true, withTransitionTime(append(asExpectedSubSyncConditions(generation),
				notObserved(`ScyllaDBDatacenter "basic" has not been updated to the current spec yet`)...), testNow)),
		},
		{
			name: "without a ScyllaDBDatacenter there is nothing to count and availability is unknown",
			sc:   newScyllaCluster(),
			want: &scyllav1.ScyllaClusterStatus{
				ObservedGeneration: new(previousGeneration),
				Conditions: withTransitionTime(append(asExpectedSubSyncConditions(generation),
					condition("ScyllaDBDatacenterAvailable", metav1.ConditionUnknown, "NotReported", `ScyllaDBDatacenter "basic" does not exist yet`, generation, testNow),
					condition("ScyllaDBDatacenterProgressing", metav1.ConditionTrue, "ScyllaDBDatacenterNotObserved", `ScyllaDBDatacenter "basic" does not exist yet`, generation, testNow),
					condition("ScyllaDBDatacenterDegraded", metav1.ConditionUnknown, "NotReported", `ScyllaDBDatacenter "basic" does not exist yet`, generation, testNow),
					condition("Available", metav1.ConditionUnknown, "NotReported", `ScyllaDBDatacenterAvailable: ScyllaDBDatacenter "basic" does not exist yet`, generation, testNow),
					condition("Progressing", metav1.ConditionTrue, "ScyllaDBDatacenterNotObserved", `ScyllaDBDatacenterProgressing: ScyllaDBDatacenter "basic" does not exist yet`, generation, testNow),
					condition("Degraded", metav1.ConditionUnknown, "NotReported", `ScyllaDBDatacenterDegraded: ScyllaDBDatacenter "basic" does not exist yet`, generation, testNow),
				), testNow),
			},
		},
		{
			name: "a ScyllaDBDatacenter that observed its spec but reported no conditions yet leaves them unknown",
			sc:   newScyllaCluster(),
			sdc: func() *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := newScyllaDBDatacenterWithStatus(6)
				sdc.Status.Conditions = nil
				return sdc
			}(),
			sdcCurrent: true,
			want: expectedMirroredStatus(generation, false, withTransitionTime(append(asExpectedSubSyncConditions(generation),
				condition("ScyllaDBDatacenterAvailable", metav1.ConditionUnknown, "NotReported", `ScyllaDBDatacenter "basic" has not reported condition Available for generation 6 yet`, generation, testNow),
				condition("ScyllaDBDatacenterProgressing", metav1.ConditionTrue, "ScyllaDBDatacenterNotObserved", `ScyllaDBDatacenter "basic" has not reported condition Progressing for generation 6 yet`, generation, testNow),
				condition("ScyllaDBDatacenterDegraded", metav1.ConditionUnknown, "NotReported", `ScyllaDBDatacenter "basic" has not reported condition Degraded for generation 6 yet`, generation, testNow),
				condition("Available", metav1.ConditionUnknown, "NotReported", `ScyllaDBDatacenterAvailable: ScyllaDBDatacenter "basic" has not reported condition Available for generation 6 yet`, generation, testNow),
				condition("Progressing", metav1.ConditionTrue, "ScyllaDBDatacenterNotObserved", `ScyllaDBDatacenterProgressing: ScyllaDBDatacenter "basic" has not reported condition Progressing for generation 6 yet`, generation, testNow),
				condition("Degraded", metav1.ConditionUnknown, "NotReported", `ScyllaDBDatacenterDegraded: ScyllaDBDatacenter "basic" has not reported condition Degraded for generation 6 yet`, generation, testNow),
			), testNow)),
		},
		{
			name: "a ScyllaDBDatacenter that is degraded makes the ScyllaCluster degraded",
			sc:   newScyllaCluster(),
			sdc: func() *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := newScyllaDBDatacenterWithStatus(6)
				sdc.Status.Conditions[2] = condition("Degraded", metav1.ConditionTrue, "Error", "StatefulSetControllerDegraded: boom", 6, testEarlier)
				return sdc
			}(),
			sdcCurrent: true,
			want: expectedMirroredStatus(generation, false, withTransitionTime(append(asExpectedSubSyncConditions(generation),
				condition("ScyllaDBDatacenterAvailable", metav1.ConditionTrue, "AsExpected", "", generation, testNow),
				condition("ScyllaDBDatacenterProgressing", metav1.ConditionFalse, "AsExpected", "", generation, testNow),
				condition("ScyllaDBDatacenterDegraded", metav1.ConditionTrue, "Error", "StatefulSetControllerDegraded: boom", generation, testNow),
				condition("Available", metav1.ConditionTrue, "AsExpected", "", generation, testNow),
				condition("Progressing", metav1.ConditionFalse, "AsExpected", "", generation, testNow),
				condition("Degraded", metav1.ConditionTrue, "Error", "ScyllaDBDatacenterDegraded: StatefulSetControllerDegraded: boom", generation, testNow),
			), testNow)),
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			state := newSyncState()
			state.sdc = tc.sdc
			state.sdcCurrent = tc.sdcCurrent
			got, err := calculateStatus(tc.sc, state, asExpectedSubSyncConditions(tc.sc.Generation), testNow)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCalculateStatusKeepsTransitionTimesOfUnchangedConditionsAndDropsUnknownTypes(t *testing.T) {
	t.Parallel()

	sc := newBasicScyllaCluster()
	sc.Status.Conditions = []metav1.Condition{
		condition("LegacyCondition", metav1.ConditionTrue, "Old", "from an older operator", 1, testEarlier),
		condition("Available", metav1.ConditionTrue, "AsExpected", "", 1, testEarlier),
		condition("Progressing", metav1.ConditionTrue, "Old", "was progressing", 1, testEarlier),
	}
	state := newSyncState()
	state.sdc = newScyllaDBDatacenterWithStatus(6)
	state.sdcCurrent = true

	got, err := calculateStatus(sc, state, asExpectedSubSyncConditions(sc.Generation), testNow)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}

	want := []metav1.Condition{
		condition("Available", metav1.ConditionTrue, "AsExpected", "", 1, testEarlier),
		condition("Progressing", metav1.ConditionFalse, "AsExpected", "", 1, testNow),
	}
	want = append(want, withTransitionTime(asExpectedSubSyncConditions(1), testNow)...)
	want = append(want,
		condition("ScyllaDBDatacenterAvailable", metav1.ConditionTrue, "AsExpected", "", 1, testNow),
		condition("ScyllaDBDatacenterProgressing", metav1.ConditionFalse, "AsExpected", "", 1, testNow),
		condition("ScyllaDBDatacenterDegraded", metav1.ConditionFalse, "AsExpected", "", 1, testNow),
		condition("Degraded", metav1.ConditionFalse, "AsExpected", "", 1, testNow),
	)
	if diff := cmp.Diff(want, got.Conditions); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
}

func TestCalculateStatusReadsTaskStatusesFromTheirScyllaDBManagerTasks(t *testing.T) {
	t.Parallel()

	sc := newBasicScyllaCluster()
	sc.Spec.Backups = []scyllav1.BackupTaskSpec{
		{TaskSpec: scyllav1.TaskSpec{Name: "synced"}},
		{TaskSpec: scyllav1.TaskSpec{Name: "failing"}},
		{TaskSpec: scyllav1.TaskSpec{Name: "malformed"}},
	}
	sc.Spec.Repairs = []scyllav1.RepairTaskSpec{
		{TaskSpec: scyllav1.TaskSpec{Name: "untranslatable"}},
		{TaskSpec: scyllav1.TaskSpec{Name: "pending"}},
		{TaskSpec: scyllav1.TaskSpec{Name: "synced"}},
	}
	taskName := func(taskType, name string) string { return naming.ScyllaDBManagerTaskName(sc.Name, taskType, name) }
	task := func(taskType, name, statusAnnotation string, conditions ...metav1.Condition) *scyllav1alpha1.ScyllaDBManagerTask {
		return &scyllav1alpha1.ScyllaDBManagerTask{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:   testNamespace,
				Name:        taskName(taskType, name),
				Annotations: map[string]string{naming.ScyllaDBManagerTaskStatusAnnotation: statusAnnotation},
			},
			Status: scyllav1alpha1.ScyllaDBManagerTaskStatus{Conditions: conditions},
		}
	}

	state := newSyncState()
	for _, t := range []*scyllav1alpha1.ScyllaDBManagerTask{
		task("Backup", "synced", `{"name":"synced","id":"b-1","cron":"0 1 * * *","numRetries":3,"location":["s3:backups"],"retention":3,"unknownField":true}`),
		task("Backup", "failing", `{"name":"failing","id":"b-2","location":["s3:gone"],"error":"bucket missing"}`,
			condition("Degraded", metav1.ConditionTrue, "Error", "can't update task: 400 bucket missing", 1, testEarlier)),
		task("Backup", "malformed", `{"name": "malformed", "id": 7`),
		task("Repair", "untranslatable", `{"name":"untranslatable","id":"r-0"}`),
		task("Repair", "synced", `{"name":"synced","id":"r-1","intensity":"0.5","smallTableThreshold":"1GiB","failFast":false}`,
			condition("Degraded", metav1.ConditionFalse, "AsExpected", "", 1, testEarlier)),
	} {
		state.tasks[t.Name] = t
	}
	state.entryErrors[taskEntryPath("repairs", 0)] = errors.New(`can't translate repair task "untranslatable": intensity "max" must be a non-negative number, e.g. 1 or 0.5`)

	got, err := calculateStatus(sc, state, asExpectedSubSyncConditions(sc.Generation), testNow)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}

	wantBackups := []scyllav1.BackupTaskStatus{
		{
			TaskStatus: scyllav1.TaskStatus{
				SchedulerTaskStatus: scyllav1.SchedulerTaskStatus{Cron: new("0 1 * * *"), NumRetries: new(int64(3))},
				Name:                "synced",
				ID:                  new("b-1"),
			},
			Location:  []string{"s3:backups"},
			Retention: new(int64(3)),
		},
		{
			TaskStatus: scyllav1.TaskStatus{
				Name:  "failing",
				ID:    new("b-2"),
				Error: new("bucket missing; can't update task: 400 bucket missing"),
			},
			Location: []string{"s3:gone"},
		},
		{
			TaskStatus: scyllav1.TaskStatus{
				Name:  "malformed",
				Error: new(`can't decode annotation "internal.scylla-operator.scylladb.com/scylladb-manager-task-status" of ScyllaDBManagerTask "` + taskName("Backup", "malformed") + `": unexpected end of JSON input`),
			},
		},
	}
	if diff := cmp.Diff(wantBackups, got.Backups); diff != "" {
		t.Errorf("unexpected backup statuses (-want +got):\n%s", diff)
	}

	wantRepairs := []scyllav1.RepairTaskStatus{
		{
			TaskStatus: scyllav1.TaskStatus{
				Name:  "untranslatable",
				ID:    new("r-0"),
				Error: new(`can't translate repair task "untranslatable": intensity "max" must be a non-negative number, e.g. 1 or 0.5`),
			},
		},
		{TaskStatus: scyllav1.TaskStatus{Name: "pending"}},
		{
			TaskStatus:          scyllav1.TaskStatus{Name: "synced", ID: new("r-1")},
			Intensity:           new("0.5"),
			SmallTableThreshold: new("1GiB"),
			FailFast:            new(false),
		},
	}
	if diff := cmp.Diff(wantRepairs, got.Repairs); diff != "" {
		t.Errorf("unexpected repair statuses (-want +got):\n%s", diff)
	}
}

func TestRackStatusShowsMemberReplacingWhileTheDatacenterReplacesANodeOfIt(t *testing.T) {
	t.Parallel()
	replacing := []scyllav1.RackCondition{{Type: scyllav1.RackConditionTypeMemberReplacing, Status: corev1.ConditionTrue}}
	for _, tc := range []struct {
		name       string
		conditions []metav1.Condition
		want       map[string][]scyllav1.RackCondition
	}{
		{name: "no replacement", want: map[string][]scyllav1.RackCondition{"a": nil, "b": nil}},
		{
			name:       "a node of rack a is replaced",
			conditions: []metav1.Condition{condition(naming.RackMemberReplacingConditionType("a"), metav1.ConditionTrue, "ReplacingNode", "", 6, testEarlier)},
			want:       map[string][]scyllav1.RackCondition{"a": replacing, "b": nil},
		},
		{
			name:       "a condition that is not True says nothing",
			conditions: []metav1.Condition{condition(naming.RackMemberReplacingConditionType("b"), metav1.ConditionFalse, "Done", "", 6, testEarlier)},
			want:       map[string][]scyllav1.RackCondition{"a": nil, "b": nil},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sdc := newScyllaDBDatacenterWithStatus(6)
			sdc.Status.Conditions = append(sdc.Status.Conditions, tc.conditions...)
			got := map[string][]scyllav1.RackCondition{}
			for _, rack := range sdc.Status.Racks {
				got[rack.Name] = makeRackStatus(&rack, sdc.Status.Conditions, false).Conditions
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected rack conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScyllaDBDatacenterStatusChangedTellsTheMirrorFromTheScyllaClustersOwnFields(t *testing.T) {
	t.Parallel()
	replacing := scyllav1.RackStatus{Members: 3, Conditions: []scyllav1.RackCondition{{Type: scyllav1.RackConditionTypeMemberReplacing, Status: corev1.ConditionTrue}}}
	plain := scyllav1.RackStatus{Members: 3}
	base := func() *scyllav1.ScyllaClusterStatus {
		return &scyllav1.ScyllaClusterStatus{
			ObservedGeneration: new(int64(1)),
			Members:            new(int32(3)),
			ReadyMembers:       new(int32(2)),
			AvailableMembers:   new(int32(1)),
			RackCount:          new(int32(1)),
			Racks:              map[string]scyllav1.RackStatus{"a": plain},
			Conditions: []metav1.Condition{
				condition("ScyllaDBDatacenterProgressing", metav1.ConditionTrue, "Rolling", "1 of 3 nodes available", 1, testNow),
				condition("ScyllaDBDatacenterControllerProgressing", metav1.ConditionFalse, "AsExpected", "", 1, testNow),
				condition("Progressing", metav1.ConditionTrue, "Rolling", "1 of 3 nodes available", 1, testNow),
			},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(s *scyllav1.ScyllaClusterStatus)
		want   bool
	}{
		{name: "nothing changes", change: func(*scyllav1.ScyllaClusterStatus) {}, want: false},
		{name: "a first status", change: func(s *scyllav1.ScyllaClusterStatus) { *s = scyllav1.ScyllaClusterStatus{} }, want: true},
		{name: "a new observed generation", change: func(s *scyllav1.ScyllaClusterStatus) { s.ObservedGeneration = new(int64(2)) }, want: true},
		{name: "a member count", change: func(s *scyllav1.ScyllaClusterStatus) { s.ReadyMembers = new(int32(3)) }, want: true},
		{name: "the rack count", change: func(s *scyllav1.ScyllaClusterStatus) { s.RackCount = new(int32(2)) }, want: true},
		{name: "a replacement starts", change: func(s *scyllav1.ScyllaClusterStatus) { s.Racks["a"] = replacing }, want: true},
		{name: "a rack leaves the status", change: func(s *scyllav1.ScyllaClusterStatus) { s.Racks = nil }, want: true},
		{name: "a mirrored condition's message", change: func(s *scyllav1.ScyllaClusterStatus) {
			s.Conditions[0].Message = "2 of 3 nodes available"
		}, want: true},
		{name: "only a mirrored condition's transition time", change: func(s *scyllav1.ScyllaClusterStatus) {
			s.Conditions[0].LastTransitionTime = metav1.NewTime(testNow.Add(time.Hour))
		}, want: false},
		{name: "a sub-sync condition", change: func(s *scyllav1.ScyllaClusterStatus) {
			s.Conditions[1].Message = "something else"
		}, want: false},
		{name: "the managerId", change: func(s *scyllav1.ScyllaClusterStatus) { s.ManagerID = new("manager-cluster-id") }, want: false},
		{name: "a task's ID", change: func(s *scyllav1.ScyllaClusterStatus) {
			s.Backups = []scyllav1.BackupTaskStatus{{TaskStatus: scyllav1.TaskStatus{Name: "daily", ID: new("backup-id")}}}
		}, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			existing, status := base(), base()
			tc.change(status)
			if got := scyllaDBDatacenterStatusChanged(existing, status); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if got := scyllaDBDatacenterStatusChanged(status, existing); got != tc.want {
				t.Errorf("the other way round: got %v, want %v", got, tc.want)
			}
		})
	}
}
