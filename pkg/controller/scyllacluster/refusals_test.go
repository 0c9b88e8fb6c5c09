package scyllacluster

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	webhookerrors "k8s.io/apiserver/pkg/admission/plugin/webhook/errors"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	clienttesting "k8s.io/client-go/testing"
)

const testWebhookName = "validate.scylla.scylladb.com"

// webhookDenial returns the error the API server returns when the operator's webhook refuses an object of kind
// named name with errs: the webhook answers with the Invalid status it builds, and the API server prefixes its
// message (k8s.io/apiserver's ToStatusErr).
func webhookDenial(kind, name string, errs field.ErrorList) error {
	status := apierrors.NewInvalid(schema.GroupKind{Group: "scylla.scylladb.com", Kind: kind}, name, errs).Status()
	return webhookerrors.ToStatusErr(testWebhookName, &status)
}

// failedCallingWebhook returns the error the API server returns when it can't reach a webhook whose failure policy
// is Fail.
func failedCallingWebhook() error {
	return apierrors.NewInternalError(&webhookutil.ErrCallingWebhook{
		WebhookName: testWebhookName,
		Reason:      errors.New(`failed to call webhook: Post "https://scylla-operator-webhook.scylla-operator.svc:443/validate": dial tcp 10.96.0.10:443: connect: connection refused`),
		Status:      apierrors.NewServiceUnavailable("error calling webhook"),
	})
}

func TestIsRefusal(t *testing.T) {
	t.Parallel()

	scyllaDBDatacenters := schema.GroupResource{Group: "scylla.scylladb.com", Resource: "scylladbdatacenters"}
	rackRemoved := field.ErrorList{field.Forbidden(field.NewPath("spec", "racks").Index(1), "a rack can be removed only once it has no nodes")}
	tt := []struct {
		name string
		err  error
		want bool
	}{
		{
			name: "a validating webhook's denial as 422 Invalid",
			err:  webhookDenial("ScyllaDBDatacenter", "basic", rackRemoved),
			want: true,
		},
		{
			name: "a validating webhook's denial as 403 Forbidden",
			err:  webhookerrors.ToStatusErr(testWebhookName, &metav1.Status{Code: 403, Message: "racks may not be removed"}),
			want: true,
		},
		{
			name: "a validating webhook's denial without a code, which the API server makes a 400",
			err:  webhookerrors.ToStatusErr(testWebhookName, &metav1.Status{Message: "no"}),
			want: true,
		},
		{
			name: "the CRD's schema or CEL rules",
			err:  apierrors.NewInvalid(schema.GroupKind{Group: "scylla.scylladb.com", Kind: "ScyllaDBManagerTask"}, "t", field.ErrorList{field.Invalid(field.NewPath("spec", "repair", "parallel"), -1, "must be >= 0")}),
			want: true,
		},
		{
			name: "a ValidatingAdmissionPolicy's denial as 403 Forbidden",
			err:  apierrors.NewForbidden(scyllaDBDatacenters, "basic", errors.New("ValidatingAdmissionPolicy 'no-rack-removal' with binding 'all' denied request: no")),
			want: true,
		},
		{
			name: "wrapped by Apply",
			err:  fmt.Errorf("can't update ScyllaDBDatacenter %q: %w", "scylla/basic", webhookDenial("ScyllaDBDatacenter", "basic", rackRemoved)),
			want: true,
		},
		{
			name: "a webhook that can't be called",
			err:  failedCallingWebhook(),
		},
		{
			name: "a webhook that denies with a server error",
			err:  webhookerrors.ToStatusErr(testWebhookName, &metav1.Status{Code: 500, Message: "can't encode the JSON patch"}),
		},
		{
			name: "a webhook that could not look up another object",
			err: webhookDenial("ScyllaDBManagerTask", "t", field.ErrorList{
				field.InternalError(field.NewPath("spec", "scyllaDBClusterRef"), errors.New("can't get ScyllaDBDatacenter: etcdserver: request timed out")),
			}),
		},
		{
			name: "RBAC forbidding the write",
			err:  apierrors.NewForbidden(scyllaDBDatacenters, "basic", errors.New(`User "system:serviceaccount:scylla-operator:scylla-operator" cannot update resource "scylladbdatacenters"`)),
		},
		{
			name: "a bad request that no admission plugin denied",
			err:  apierrors.NewBadRequest("the object has been modified"),
		},
		{name: "a conflict", err: apierrors.NewConflict(scyllaDBDatacenters, "basic", errors.New("the object has been modified"))},
		{name: "a timeout", err: apierrors.NewTimeoutError("request timed out", 1)},
		{name: "a server timeout", err: apierrors.NewServerTimeout(scyllaDBDatacenters, "update", 1)},
		{name: "throttling", err: apierrors.NewTooManyRequests("slow down", 1)},
		{name: "a missing object", err: apierrors.NewNotFound(scyllaDBDatacenters, "basic")},
		{name: "an internal error", err: apierrors.NewInternalError(errors.New("etcd is down"))},
		{name: "no API error at all", err: errors.New("connection reset by peer")},
		{name: "no error", err: nil},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := isRefusal(tc.err); got != tc.want {
				t.Errorf("isRefusal(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// refuseWrites makes the fake API server answer the verb ("create" or "update") of the resource named name with the
// error *refusal returns while it is not nil; a nil error lets the write through.
func (f *syncFixture) refuseWrites(verb, resource, name string, refusal *error) {
	f.scyllaClient.PrependReactor(verb, resource, func(action clienttesting.Action) (bool, runtime.Object, error) {
		if len(action.GetSubresource()) != 0 || *refusal == nil {
			return false, nil, nil
		}
		var obj runtime.Object
		switch a := action.(type) {
		case clienttesting.CreateAction:
			obj = a.GetObject()
		case clienttesting.UpdateAction:
			obj = a.GetObject()
		}
		accessor, err := meta.Accessor(obj)
		if err != nil || accessor.GetName() != name {
			return false, nil, nil
		}
		return true, nil, *refusal
	})
}

// touch stores obj changed by another program (an annotation, a new resourceVersion), as the watch event of such a
// change would bring it, and lets the caches catch up.
func (f *syncFixture) touch(t *testing.T, obj metav1.Object, resourceVersion, resource string) {
	t.Helper()
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations["example.com/touched"] = resourceVersion
	obj.SetAnnotations(annotations)
	obj.SetResourceVersion(resourceVersion)
	f.update(t, obj.(runtime.Object), resource, scyllav1alpha1.SchemeGroupVersion)
	f.scyllaClient.ClearActions()
	f.catchUpCaches(t)
}

// warnings returns the Warning events among events, sorted.
func warnings(events []string) []string {
	events = slices.DeleteFunc(events, func(e string) bool { return !strings.HasPrefix(e, "Warning ") })
	slices.Sort(events)
	return events
}

func expectCondition(t *testing.T, conditions []metav1.Condition, condType string, status metav1.ConditionStatus, message string) {
	t.Helper()
	c := meta.FindStatusCondition(conditions, condType)
	if c == nil || c.Status != status || !strings.Contains(c.Message, message) {
		t.Errorf("expected %s %s with a message containing %q, got %+v", condType, status, message, c)
	}
}

// An update of the ScyllaDBDatacenter the webhook refuses (a ScyllaCluster stored without the v1 webhook that removes
// a rack still holding nodes, say) is reported once and not retried with back-off, while the tasks are still
// applied. It is tried again when the ScyllaDBDatacenter changes (its status may show the rack emptied), without a
// second report, and goes through once the webhook lets it.
func TestSyncReportsAScyllaDBDatacenterUpdateTheAPIServerRefusesOnce(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	f := newSyncFixture(t, sc)
	f.syncCreated(t, sc)
	denial := webhookDenial("ScyllaDBDatacenter", "basic", field.ErrorList{
		field.Forbidden(field.NewPath("spec", "racks").Index(0), "a rack can be removed only once it has no nodes"),
	})
	refusal := &denial
	f.refuseWrites("update", "scylladbdatacenters", "basic", refusal)

	sc = f.getScyllaCluster(t, sc)
	sc.Spec.Datacenter.Racks[0].Members = 4
	sc.Spec.Backups[0].Cron = new("0 2 * * *")
	f.storeScyllaCluster(t, sc)

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("expected no error to requeue with, got %v", err)
	}
	wantWrites := []string{
		"update scylladbdatacenters basic",
		"update scylladbmanagertasks " + dailyBackupTaskName,
		"update scyllaclusters/status basic",
	}
	if diff := cmp.Diff(wantWrites, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	wantMessage := fmt.Sprintf(`can't update ScyllaDBDatacenter "scylla/basic": %v; the API server refuses it, so it is not tried again until the ScyllaCluster or the ScyllaDBDatacenter changes`, denial)
	if diff := cmp.Diff([]string{"Warning Refused " + wantMessage}, warnings(f.takeEvents())); diff != "" {
		t.Errorf("unexpected warnings (-want +got):\n%s", diff)
	}
	if got := *f.getScyllaDBDatacenter(t).Spec.Racks[0].Nodes; got != 3 {
		t.Errorf("expected the refused ScyllaDBDatacenter to keep 3 nodes, got %d", got)
	}
	if got := f.getScyllaDBManagerTask(t, dailyBackupTaskName).Spec.Backup.Cron; got == nil || *got != "0 2 * * *" {
		t.Errorf("expected the backup's new cron applied, got %v", got)
	}
	status := f.getScyllaCluster(t, sc).Status
	expectCondition(t, status.Conditions, scyllaDBDatacenterControllerName+"Degraded", metav1.ConditionTrue, wantMessage)
	expectCondition(t, status.Conditions, "Degraded", metav1.ConditionTrue, wantMessage)
	if status.ObservedGeneration == nil || *status.ObservedGeneration == sc.Generation {
		t.Errorf("expected observedGeneration to stay behind %d while the datacenter is not updated, got %v", sc.Generation, status.ObservedGeneration)
	}

	// The sync its own status write brings sends nothing again, writes nothing and reports nothing.
	f.expectQuietResync(t, sc)

	// A change of the ScyllaDBDatacenter may change the verdict: the update is tried again, and the same refusal
	// reported no more.
	f.touch(t, f.getScyllaDBDatacenter(t), "20", "scylladbdatacenters")
	if err := f.sync(t, f.getScyllaCluster(t, sc)); err != nil {
		t.Fatalf("expected no error to requeue with, got %v", err)
	}
	if diff := cmp.Diff([]string{"update scylladbdatacenters basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes after the ScyllaDBDatacenter changed (-want +got):\n%s", diff)
	}
	if events := f.takeEvents(); len(events) != 0 {
		t.Errorf("expected no events for the same refusal, got %q", events)
	}
	f.expectQuietResync(t, sc)

	*refusal = nil
	f.touch(t, f.getScyllaDBDatacenter(t), "21", "scylladbdatacenters")
	if err := f.sync(t, f.getScyllaCluster(t, sc)); err != nil {
		t.Fatalf("unexpected error once the update is allowed: %v", err)
	}
	if diff := cmp.Diff([]string{"update scylladbdatacenters basic", "update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes once the update is allowed (-want +got):\n%s", diff)
	}
	if got := warnings(f.takeEvents()); len(got) != 0 {
		t.Errorf("expected no warnings once the update is allowed, got %q", got)
	}
	if got := *f.getScyllaDBDatacenter(t).Spec.Racks[0].Nodes; got != 4 {
		t.Errorf("expected the ScyllaDBDatacenter scaled to 4 nodes, got %d", got)
	}
	status = f.getScyllaCluster(t, sc).Status
	expectCondition(t, status.Conditions, scyllaDBDatacenterControllerName+"Degraded", metav1.ConditionFalse, "")
	f.expectQuietResync(t, sc)
}

// A ScyllaDBDatacenter the API server refuses to create is reported once; the tasks, which the webhook refuses
// while their datacenter does not exist, wait for it. A change of the ScyllaCluster's spec tries again.
func TestSyncReportsAScyllaDBDatacenterTheAPIServerRefusesToCreateOnce(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	f := newSyncFixture(t, sc)
	denial := webhookerrors.ToStatusErr(testWebhookName, &metav1.Status{Code: 403, Message: "datacenters may not be created in this namespace"})
	var refusal error = denial
	f.refuseWrites("create", "scylladbdatacenters", "basic", &refusal)

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("expected no error to requeue with, got %v", err)
	}
	if diff := cmp.Diff([]string{"create scylladbdatacenters basic", "update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	wantMessage := fmt.Sprintf(`can't create ScyllaDBDatacenter "scylla/basic": %v; the API server refuses it, so it is not tried again until the ScyllaCluster or the ScyllaDBDatacenter changes`, denial)
	if diff := cmp.Diff([]string{"Warning Refused " + wantMessage}, warnings(f.takeEvents())); diff != "" {
		t.Errorf("unexpected warnings (-want +got):\n%s", diff)
	}
	status := f.getScyllaCluster(t, sc).Status
	expectCondition(t, status.Conditions, scyllaDBDatacenterControllerName+"Degraded", metav1.ConditionTrue, wantMessage)
	expectCondition(t, status.Conditions, scyllaDBManagerTaskControllerName+"Progressing", metav1.ConditionTrue, "it is not created while the API server refuses it")
	f.expectQuietResync(t, sc)

	// A change of the spec is tried again, and refused alike: nothing more to report than the new generation.
	sc = f.getScyllaCluster(t, sc)
	sc.Spec.Backups[0].Cron = new("0 2 * * *")
	f.storeScyllaCluster(t, sc)
	if err := f.sync(t, sc); err != nil {
		t.Fatalf("expected no error to requeue with, got %v", err)
	}
	if diff := cmp.Diff([]string{"create scylladbdatacenters basic", "update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes after the spec changed (-want +got):\n%s", diff)
	}
	if events := f.takeEvents(); len(events) != 0 {
		t.Errorf("expected no events for the same refusal, got %q", events)
	}

	refusal = nil
	sc = f.getScyllaCluster(t, sc)
	sc.Spec.Datacenter.Racks[0].Members = 1
	f.storeScyllaCluster(t, sc)
	f.syncCreatingScyllaDBDatacenter(t, sc)
	if err := f.sync(t, sc); err != nil {
		t.Fatalf("unexpected error once the datacenter is created: %v", err)
	}
	if diff := cmp.Diff(append(slices.Clone(createTasks), "update scyllaclusters/status basic"), f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes once the datacenter is created (-want +got):\n%s", diff)
	}
	status = f.getScyllaCluster(t, sc).Status
	expectCondition(t, status.Conditions, scyllaDBDatacenterControllerName+"Degraded", metav1.ConditionFalse, "")
	expectCondition(t, status.Conditions, scyllaDBManagerTaskControllerName+"Progressing", metav1.ConditionFalse, "")
}

// A ScyllaDBManagerTask the API server refuses (here its CRD's schema) is reported once, in the condition, an event
// and its entry's status, while the datacenter and the other tasks are still applied; once the API server takes it,
// the report is cleared.
func TestSyncReportsAScyllaDBManagerTaskTheAPIServerRefusesOnce(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	f := newSyncFixture(t, sc)
	f.syncCreated(t, sc)
	denial := apierrors.NewInvalid(schema.GroupKind{Group: "scylla.scylladb.com", Kind: "ScyllaDBManagerTask"}, dailyBackupTaskName, field.ErrorList{
		field.Invalid(field.NewPath("spec", "backup", "cron"), "0 2 * * *", "must not run at 2am"),
	})
	var refusal error = denial
	f.refuseWrites("update", "scylladbmanagertasks", dailyBackupTaskName, &refusal)

	sc = f.getScyllaCluster(t, sc)
	sc.Spec.Datacenter.Racks[0].Members = 4
	sc.Spec.Backups[0].Cron = new("0 2 * * *")
	sc.Spec.Backups[1].Cron = new("0 4 * * SUN")
	f.storeScyllaCluster(t, sc)

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("expected no error to requeue with, got %v", err)
	}
	wantWrites := []string{
		"update scylladbdatacenters basic",
		"update scylladbmanagertasks " + dailyBackupTaskName,
		"update scylladbmanagertasks " + weeklyBackupTaskName,
		"update scyllaclusters/status basic",
	}
	if diff := cmp.Diff(wantWrites, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	wantMessage := fmt.Sprintf(`can't update ScyllaDBManagerTask %q: %v; the API server refuses it, so it is not tried again until the ScyllaCluster or the ScyllaDBManagerTask changes`,
		testNamespace+"/"+dailyBackupTaskName, denial)
	if diff := cmp.Diff([]string{"Warning Refused " + wantMessage}, warnings(f.takeEvents())); diff != "" {
		t.Errorf("unexpected warnings (-want +got):\n%s", diff)
	}
	if got := *f.getScyllaDBDatacenter(t).Spec.Racks[0].Nodes; got != 4 {
		t.Errorf("expected the datacenter scaled to 4 nodes, got %d", got)
	}
	if got := f.getScyllaDBManagerTask(t, weeklyBackupTaskName).Spec.Backup.Cron; got == nil || *got != "0 4 * * SUN" {
		t.Errorf("expected the other backup's new cron applied, got %v", got)
	}
	status := f.getScyllaCluster(t, sc).Status
	expectTaskCondition(t, &status, wantMessage)
	if status.Backups[0].Error == nil || *status.Backups[0].Error != wantMessage {
		t.Errorf("expected the backup's status error %q, got %v", wantMessage, status.Backups[0].Error)
	}
	f.expectQuietResync(t, sc)

	refusal = nil
	f.touch(t, f.getScyllaDBManagerTask(t, dailyBackupTaskName), "30", "scylladbmanagertasks")
	if err := f.sync(t, f.getScyllaCluster(t, sc)); err != nil {
		t.Fatalf("unexpected error once the task is allowed: %v", err)
	}
	if diff := cmp.Diff([]string{"update scylladbmanagertasks " + dailyBackupTaskName, "update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes once the task is allowed (-want +got):\n%s", diff)
	}
	f.takeEvents()
	if got := f.getScyllaDBManagerTask(t, dailyBackupTaskName).Spec.Backup.Cron; got == nil || *got != "0 2 * * *" {
		t.Errorf("expected the backup's new cron applied, got %v", got)
	}
	status = f.getScyllaCluster(t, sc).Status
	expectTaskCondition(t, &status, "")
	if status.Backups[0].Error != nil {
		t.Errorf("expected the backup's status error cleared, got %q", *status.Backups[0].Error)
	}
	f.expectQuietResync(t, sc)
}

// What retrying may fix is retried with back-off, and sent again on every sync: among them a webhook that can't be
// called, which the API server reports as an internal error.
func TestSyncRetriesScyllaDBDatacenterWritesTheAPIServerMayTakeLater(t *testing.T) {
	t.Parallel()

	scyllaDBDatacenters := schema.GroupResource{Group: "scylla.scylladb.com", Resource: "scylladbdatacenters"}
	tt := []struct {
		name string
		err  error
	}{
		{name: "failed calling webhook", err: failedCallingWebhook()},
		{name: "a webhook's failed lookup", err: webhookDenial("ScyllaDBDatacenter", "basic", field.ErrorList{
			field.InternalError(field.NewPath("spec"), errors.New("etcdserver: request timed out")),
		})},
		{name: "throttled", err: apierrors.NewTooManyRequests("slow down", 1)},
		{name: "timed out", err: apierrors.NewServerTimeout(scyllaDBDatacenters, "update", 1)},
		{name: "unavailable", err: apierrors.NewServiceUnavailable("the API server is shutting down")},
		{name: "forbidden by RBAC", err: apierrors.NewForbidden(scyllaDBDatacenters, "basic", errors.New(`User "x" cannot update resource "scylladbdatacenters"`))},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			sc := newScyllaClusterWithTasks()
			f := newSyncFixture(t, sc)
			f.syncCreated(t, sc)
			f.refuseWrites("update", "scylladbdatacenters", "basic", &tc.err)
			sc = f.getScyllaCluster(t, sc)
			sc.Spec.Datacenter.Racks[0].Members = 4
			f.storeScyllaCluster(t, sc)

			for i := range 2 {
				err := f.sync(t, f.getScyllaCluster(t, sc))
				if err == nil || isPermanent(err) || !strings.Contains(err.Error(), tc.err.Error()) {
					t.Fatalf("sync %d: expected the error to requeue with, got %v", i, err)
				}
				if writes := f.takeWrites(); !slices.Contains(writes, "update scylladbdatacenters basic") {
					t.Errorf("sync %d: expected the update sent, got writes %q", i, writes)
				}
				f.takeEvents()
				f.catchUpCaches(t)
			}
			status := f.getScyllaCluster(t, sc).Status
			expectCondition(t, status.Conditions, scyllaDBDatacenterControllerName+"Degraded", metav1.ConditionTrue, tc.err.Error())
		})
	}
}

// The refusals of a ScyllaCluster that is gone are forgotten with it.
func TestSyncForgetsTheRefusalsOfAGoneScyllaCluster(t *testing.T) {
	t.Parallel()

	sc := newBasicScyllaCluster()
	f := newSyncFixture(t, sc)
	var refusal error = webhookDenial("ScyllaDBDatacenter", "basic", field.ErrorList{field.Required(field.NewPath("spec", "racks"), "")})
	f.refuseWrites("create", "scylladbdatacenters", "basic", &refusal)
	key := testNamespace + "/" + sc.Name

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("expected no error to requeue with, got %v", err)
	}
	if got := f.controller.refusals.Get(key); len(got) != 1 {
		t.Fatalf("expected the refusal remembered, got %v", got)
	}

	if err := f.scyllaClient.Tracker().Delete(scyllav1.SchemeGroupVersion.WithResource("scyllaclusters"), sc.Namespace, sc.Name); err != nil {
		t.Fatal(err)
	}
	f.catchUpCaches(t)
	if err := f.sync(t, sc); err != nil {
		t.Fatalf("unexpected error once the ScyllaCluster is gone: %v", err)
	}
	if got := f.controller.refusals.Get(key); len(got) != 0 {
		t.Errorf("expected the refusals of the gone ScyllaCluster forgotten, got %v", got)
	}
}
