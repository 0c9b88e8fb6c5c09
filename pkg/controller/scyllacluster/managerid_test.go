package scyllacluster

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
)

const (
	// establishedManagerID is the ID an older manager-controller registered a ScyllaCluster under in ScyllaDB Manager
	// and wrote into its status.
	establishedManagerID = "5f1c3b8e-2a47-4d6b-9c0e-7d8f9a1b2c3d"
	// managerControllerID is the ID the manager-controller recorded on the ScyllaDBDatacenter.
	managerControllerID = "0b6c7f7e-0a9e-5d39-8c1f-2f3b5a6d7e8f"
)

func TestMakeScyllaDBManagerClusterIDHandOver(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name      string
		managerID *string
		want      map[string]string
		wantError string
	}{
		{
			name: "no managerId, nothing to hand over",
		},
		{
			name:      "an empty managerId is none",
			managerID: new(""),
		},
		{
			name:      "a UUID is handed over as it is",
			managerID: new(establishedManagerID),
			want:      map[string]string{naming.ScyllaDBManagerClusterIDAnnotation: establishedManagerID},
		},
		{
			name:      "an upper-case UUID is a UUID",
			managerID: new(strings.ToUpper(establishedManagerID)),
			want:      map[string]string{naming.ScyllaDBManagerClusterIDAnnotation: strings.ToUpper(establishedManagerID)},
		},
		{
			name:      "a name is no ID",
			managerID: new("scylla/basic"),
			wantError: `status.managerId "scylla/basic" is not a UUID, so it can't be the ID of a cluster in ScyllaDB Manager`,
		},
		{
			name:      "nor is a UUID URN",
			managerID: new("urn:uuid:" + establishedManagerID),
			wantError: `status.managerId "urn:uuid:` + establishedManagerID + `" is not a UUID, so it can't be the ID of a cluster in ScyllaDB Manager`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := newBasicScyllaCluster()
			sc.Status.ManagerID = tc.managerID
			got, err := makeScyllaDBManagerClusterIDHandOver(sc)
			if diff := cmp.Diff(tc.wantError, errorString(err)); diff != "" {
				t.Errorf("unexpected error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected annotations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestManagerIDStatusPrefersTheManagerControllersAnnotation(t *testing.T) {
	t.Parallel()

	withAnnotation := func(id string) *scyllav1alpha1.ScyllaDBDatacenter {
		sdc := newScyllaDBDatacenterWithStatus(1)
		sdc.Annotations = map[string]string{naming.ScyllaDBManagerClusterIDAnnotation: id}
		return sdc
	}
	withoutAnnotation := func() *scyllav1alpha1.ScyllaDBDatacenter {
		sdc := newScyllaDBDatacenterWithStatus(1)
		delete(sdc.Annotations, naming.ScyllaDBManagerClusterIDAnnotation)
		return sdc
	}
	tt := []struct {
		name      string
		managerID *string
		sdc       *scyllav1alpha1.ScyllaDBDatacenter
		want      *string
	}{
		{
			name: "annotation to status",
			sdc:  withAnnotation(managerControllerID),
			want: new(managerControllerID),
		},
		{
			name:      "the annotation wins over the managerId the status has",
			managerID: new(establishedManagerID),
			sdc:       withAnnotation(managerControllerID),
			want:      new(managerControllerID),
		},
		{
			name:      "the managerId being handed over stays until the annotation has it",
			managerID: new(establishedManagerID),
			sdc:       withoutAnnotation(),
			want:      new(establishedManagerID),
		},
		{
			name:      "and while there is no ScyllaDBDatacenter yet",
			managerID: new(establishedManagerID),
			want:      new(establishedManagerID),
		},
		{
			name:      "an invalid managerId is dropped",
			managerID: new("scylla/basic"),
			sdc:       withoutAnnotation(),
		},
		{
			name:      "an empty annotation is none",
			managerID: new(establishedManagerID),
			sdc:       withAnnotation(""),
			want:      new(establishedManagerID),
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := newBasicScyllaCluster()
			sc.Status.ManagerID = tc.managerID
			if diff := cmp.Diff(tc.want, managerIDStatus(sc, tc.sdc)); diff != "" {
				t.Errorf("unexpected managerId (-want +got):\n%s", diff)
			}
		})
	}
}

// errorString is err's message, empty for no error.
func errorString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// getScyllaDBDatacenter returns the ScyllaDBDatacenter "basic" the fake API server holds.
func (f *syncFixture) getScyllaDBDatacenter(t *testing.T) *scyllav1alpha1.ScyllaDBDatacenter {
	t.Helper()
	sdc, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBDatacenters(testNamespace).Get(t.Context(), "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sdc
}

// checkClusterIDAnnotation fails t unless sdc's cluster ID annotation is want, and the operator does not count it
// among the annotations it manages (which it would overwrite and remove).
func checkClusterIDAnnotation(t *testing.T, sdc *scyllav1alpha1.ScyllaDBDatacenter, want string) {
	t.Helper()
	if got, ok := sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; !ok || got != want {
		t.Errorf("expected annotation %q to be %q, got %q (present: %v)", naming.ScyllaDBManagerClusterIDAnnotation, want, got, ok)
	}
	if managed := sdc.Annotations[naming.ManagedAnnotationKeysAnnotation]; strings.Contains(managed, naming.ScyllaDBManagerClusterIDAnnotation) {
		t.Errorf("the operator manages the cluster ID annotation: %q", managed)
	}
}

func TestSyncHandsTheManagerIDOverToTheScyllaDBDatacenterItCreates(t *testing.T) {
	t.Parallel()

	sc := newBasicScyllaCluster()
	sc.Status.ManagerID = new(establishedManagerID)
	f := newSyncFixture(t, sc)
	f.syncCreatingScyllaDBDatacenter(t, sc)
	checkClusterIDAnnotation(t, f.getScyllaDBDatacenter(t), establishedManagerID)
	// The status has something already, so the next sync writes what it knows at once.
	if err := f.sync(t, sc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	checkClusterIDAnnotation(t, f.getScyllaDBDatacenter(t), establishedManagerID)
	if got := f.getScyllaCluster(t, sc).Status.ManagerID; got == nil || *got != establishedManagerID {
		t.Errorf("the status lost its managerId: %v", got)
	}
	f.takeEvents()

	f.expectQuietResync(t, sc)
}

func TestSyncHandsTheManagerIDOverToAScyllaDBDatacenterWithoutOne(t *testing.T) {
	t.Parallel()

	// An upgrade: the ScyllaDBDatacenter exists; the managerId an older manager-controller wrote is in the status.
	sc := newBasicScyllaCluster()
	f := newSyncFixture(t, sc)
	f.syncCreated(t, sc)
	sc = f.getScyllaCluster(t, sc)
	sc.Status.ManagerID = new(establishedManagerID)
	f.update(t, sc, "scyllaclusters", scyllav1.SchemeGroupVersion)
	f.scyllaClient.ClearActions()
	f.catchUpCaches(t)

	if err := f.sync(t, f.getScyllaCluster(t, sc)); err != nil {
		t.Fatal(err)
	}
	// The status already says what it should: only the annotation is written.
	if diff := cmp.Diff([]string{"update scylladbdatacenters basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	checkClusterIDAnnotation(t, f.getScyllaDBDatacenter(t), establishedManagerID)
	f.takeEvents()

	f.expectQuietResync(t, sc)
}

func TestSyncLeavesTheManagerControllersClusterIDAlone(t *testing.T) {
	t.Parallel()

	sc := newBasicScyllaCluster()
	sc.Status.ManagerID = new(establishedManagerID)
	f := newSyncFixture(t, sc)
	f.syncCreated(t, sc)

	for _, id := range []string{managerControllerID, "11111111-2222-4333-8444-555555555555"} {
		// The manager-controller records (then changes) the ID it registered the cluster under.
		sdc := f.getScyllaDBDatacenter(t)
		sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = id
		f.update(t, sdc, "scylladbdatacenters", scyllav1alpha1.SchemeGroupVersion)
		f.scyllaClient.ClearActions()
		f.catchUpCaches(t)

		if err := f.sync(t, f.getScyllaCluster(t, sc)); err != nil {
			t.Fatal(err)
		}
		// The status follows; the annotation is neither overwritten nor removed.
		if diff := cmp.Diff([]string{"update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
			t.Errorf("%s: unexpected writes (-want +got):\n%s", id, diff)
		}
		checkClusterIDAnnotation(t, f.getScyllaDBDatacenter(t), id)
		if got := f.getScyllaCluster(t, sc).Status.ManagerID; got == nil || *got != id {
			t.Errorf("%s: expected managerId %q, got %v", id, id, got)
		}
		f.expectQuietResync(t, sc)
	}
}

func TestSyncDropsAManagerIDThatIsNotAUUIDWithAWarning(t *testing.T) {
	t.Parallel()

	sc := newBasicScyllaCluster()
	sc.Status.ManagerID = new("scylla/basic")
	f := newSyncFixture(t, sc)
	f.syncCreatingScyllaDBDatacenter(t, sc)
	if err := f.sync(t, sc); err != nil {
		t.Fatalf("an invalid managerId must not fail the sync, got %v", err)
	}
	if diff := cmp.Diff([]string{"update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	if _, ok := f.getScyllaDBDatacenter(t).Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; ok {
		t.Errorf("an invalid managerId was handed over")
	}
	if got := f.getScyllaCluster(t, sc).Status.ManagerID; got != nil {
		t.Errorf("expected the invalid managerId to be dropped, got %q", *got)
	}
	wantEvents := []string{
		`Warning InvalidManagerID status.managerId "scylla/basic" is not a UUID, so it can't be the ID of a cluster in ScyllaDB Manager: ` +
			`it is not handed over to ScyllaDB Manager integration and is dropped from the status; the cluster is registered in ScyllaDB Manager under a new ID`,
	}
	if diff := cmp.Diff(wantEvents, f.takeEvents()); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}

	// Reported once.
	f.expectQuietResync(t, sc)
}

func TestSyncKeepsWhatOtherProgramsWroteOnTheScyllaDBDatacenterAndTasks(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	f := newSyncFixture(t, sc)
	f.syncCreated(t, sc)

	// The manager-controller registers the datacenter and schedules the daily backup.
	sdc := f.getScyllaDBDatacenter(t)
	sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = managerControllerID
	sdc.Finalizers = append(sdc.Finalizers, naming.ScyllaDBManagerClusterFinalizer)
	f.update(t, sdc, "scylladbdatacenters", scyllav1alpha1.SchemeGroupVersion)
	task, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(testNamespace).Get(t.Context(), dailyBackupTaskName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const taskStatus = `{"name":"daily","id":"task-id","location":["s3:backups"]}`
	task.Annotations[naming.ScyllaDBManagerTaskStatusAnnotation] = taskStatus
	task.Finalizers = append(task.Finalizers, naming.ScyllaDBManagerTaskFinalizer)
	f.update(t, task, "scylladbmanagertasks", scyllav1alpha1.SchemeGroupVersion)

	// The user upgrades ScyllaDB and moves the daily backup: the operator re-applies both.
	sc = f.getScyllaCluster(t, sc)
	sc.Spec.Version = "2025.1.3"
	sc.Spec.Backups[0].Location = []string{"s3:elsewhere"}
	sc.Generation++
	f.update(t, sc, "scyllaclusters", scyllav1.SchemeGroupVersion)
	f.scyllaClient.ClearActions()
	f.catchUpCaches(t)
	if err := f.sync(t, f.getScyllaCluster(t, sc)); err != nil {
		t.Fatal(err)
	}
	wantWrites := []string{
		"update scylladbdatacenters basic",
		"update scylladbmanagertasks " + dailyBackupTaskName,
		"update scyllaclusters/status basic",
	}
	if diff := cmp.Diff(wantWrites, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}

	sdc = f.getScyllaDBDatacenter(t)
	if sdc.Spec.ScyllaDB.Image != "docker.io/scylladb/scylla:2025.1.3" {
		t.Errorf("the ScyllaDBDatacenter was not updated: %q", sdc.Spec.ScyllaDB.Image)
	}
	checkClusterIDAnnotation(t, sdc, managerControllerID)
	if diff := cmp.Diff([]string{naming.ScyllaDBManagerClusterFinalizer}, sdc.Finalizers); diff != "" {
		t.Errorf("unexpected ScyllaDBDatacenter finalizers (-want +got):\n%s", diff)
	}
	task, err = f.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(testNamespace).Get(t.Context(), dailyBackupTaskName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"s3:elsewhere"}, task.Spec.Backup.Location); diff != "" {
		t.Errorf("the task was not updated (-want +got):\n%s", diff)
	}
	if got := task.Annotations[naming.ScyllaDBManagerTaskStatusAnnotation]; got != taskStatus {
		t.Errorf("the task status annotation changed to %q", got)
	}
	if diff := cmp.Diff([]string{naming.ScyllaDBManagerTaskFinalizer}, task.Finalizers); diff != "" {
		t.Errorf("unexpected ScyllaDBManagerTask finalizers (-want +got):\n%s", diff)
	}
	f.takeEvents()

	f.expectQuietResync(t, sc)
}

func TestSyncLeavesAStatusConflictToTheNextSync(t *testing.T) {
	t.Parallel()

	sc := newBasicScyllaCluster()
	f := newSyncFixture(t, sc)
	f.scyllaClient.PrependReactor("update", "scyllaclusters", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "status" {
			return false, nil, nil
		}
		return true, nil, apierrors.NewConflict(scyllav1.Resource("scyllaclusters"), sc.Name, nil)
	})
	// The cache is behind the ScyllaCluster; the watch event of its newer version syncs it again.
	if err := f.sync(t, sc); err != nil {
		t.Errorf("a status conflict must not be retried with back-off, got %v", err)
	}
}
