package operator

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"

	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	"github.com/scyllakube/scylla-operator/pkg/test/apiserverfields"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

// permission is one verb on one resource ("scylladbdatacenters/status") of one API group.
type permission struct {
	group, resource, verb string
}

func (p permission) String() string {
	return p.verb + " " + p.resource + "." + p.group
}

// permissionOf returns the permission an API request made through a fake clientset needs.
func permissionOf(a clienttesting.Action) permission {
	resource := a.GetResource().Resource
	if len(a.GetSubresource()) != 0 {
		resource += "/" + a.GetSubresource()
	}
	return permission{group: a.GetResource().Group, resource: resource, verb: a.GetVerb()}
}

// rulesAllow reports whether rules grant p. Only the forms our manifests use are understood: no wildcards and no
// resource names.
func rulesAllow(rules []rbacv1.PolicyRule, p permission) bool {
	for _, r := range rules {
		if len(r.ResourceNames) == 0 && slices.Contains(r.APIGroups, p.group) && slices.Contains(r.Resources, p.resource) && slices.Contains(r.Verbs, p.verb) {
			return true
		}
	}
	return false
}

// permissionsOf lists every permission rules grant.
func permissionsOf(rules []rbacv1.PolicyRule) []permission {
	var ps []permission
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					ps = append(ps, permission{group: g, resource: res, verb: v})
				}
			}
		}
	}
	return ps
}

// The manager-controller's rules hold no wildcard, which rulesAllow would not understand and least privilege forbids.
func TestManagerControllerRulesHaveNoWildcards(t *testing.T) {
	t.Parallel()
	for _, p := range permissionsOf(slices.Concat(ManagerControllerClusterRoleRules(), ManagerControllerLeaderElectionRules())) {
		if strings.Contains(p.group+p.resource+p.verb, "*") {
			t.Errorf("%v is a wildcard", p)
		}
	}
}

// Every informer the manager-controller starts lists and watches what its ClusterRole allows.
func TestManagerControllerInformersNeedOnlyItsClusterRole(t *testing.T) {
	t.Parallel()
	kubeClient := kubefake.NewClientset()
	scyllaClient := scyllafake.NewClientset()
	o := NewManagerControllerOptions()
	o.ScyllaDBManagerURL = "http://127.0.0.1:1"
	if err := o.completeScyllaDBManager(); err != nil {
		t.Fatal(err)
	}
	o.kubeClient, o.scyllaClient = kubeClient, scyllaClient

	set, err := o.newControllers()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	for _, f := range set.informerFactories {
		f.Start(ctx.Done())
	}
	defer func() {
		// Shutdown waits for the informers, which stop once ctx is done.
		cancel()
		for _, f := range set.informerFactories {
			f.Shutdown()
		}
	}()
	for _, f := range set.informerFactories {
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				t.Fatalf("the cache of %v did not sync", typ)
			}
		}
	}

	got := map[string]bool{}
	for _, a := range slices.Concat(kubeClient.Actions(), scyllaClient.Actions()) {
		p := permissionOf(a)
		if !rulesAllow(ManagerControllerClusterRoleRules(), p) {
			t.Errorf("the ClusterRole does not allow %v", p)
		}
		if p.verb == "list" {
			got[p.resource] = true
		}
		if l, ok := a.(clienttesting.ListAction); ok && p.resource == "secrets" {
			if selector := l.GetListRestrictions().Labels.String(); selector != "app.kubernetes.io/managed-by=scylla-operator" {
				t.Errorf("%v with selector %q, want only the operator's Secrets", p, selector)
			}
		}
	}
	for _, want := range []string{"scylladbdatacenters", "scylladbclusters", "scylladbmanagertasks", "secrets"} {
		if !got[want] {
			t.Errorf("the manager-controller does not cache %s", want)
		}
	}
}

// unexercisedPermissions are permissions the manager-controller needs that a short run does not show: the event
// broadcaster patches an event that repeats instead of creating it again.
var unexercisedPermissions = []permission{{group: "", resource: "events", verb: "patch"}}

// The manager-controller's controllers, run against fake API servers and a fake ScyllaDB Manager through registration,
// task scheduling and deletion, make only requests its ClusterRole allows, and use every permission it grants.
func TestManagerControllerNeedsExactlyItsClusterRole(t *testing.T) {
	t.Parallel()
	const (
		namespace = "scylla"
		name      = "basic"
		scName    = "multi"
		taskName  = "weekly"
		// backupTaskName backs up to a declared bucket.
		backupTaskName = "nightly"
	)
	manager, err := fakescyllamanager.NewServer(fakescyllamanager.Options{})
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewServer(manager)
	defer server.Close()

	token, err := scyllaagent.MakeAuthTokenConfig("token")
	if err != nil {
		t.Fatal(err)
	}
	authTokenSecret := func(secretName string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: namespace,
				Name:      secretName,
				Labels:    map[string]string{naming.ManagedByLabel: naming.ManagedByLabelValue},
			},
			Data: map[string][]byte{naming.ScyllaDBManagerAgentAuthTokenKey: token},
		}
	}
	kubeClient := kubefake.NewClientset(authTokenSecret(naming.AgentAuthTokenSecretName(name)), authTokenSecret(naming.ScyllaDBClusterAuthTokenSecretName(scName)))
	rolledOut := []metav1.Condition{
		{Type: "Available", Status: metav1.ConditionTrue, Reason: "AsExpected", ObservedGeneration: 1, LastTransitionTime: metav1.Now()},
		{Type: "Progressing", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 1, LastTransitionTime: metav1.Now()},
		{Type: "Degraded", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 1, LastTransitionTime: metav1.Now()},
	}
	sdc := &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       namespace,
			Name:            name,
			UID:             "5d0c3f6e-1b2a-4c8d-9e7f-0a1b2c3d4e5f",
			Generation:      1,
			ResourceVersion: "1",
			Labels:          map[string]string{naming.RegisterWithScyllaDBManagerLabel: "true"},
		},
		Status: scyllav1alpha1.ScyllaDBDatacenterStatus{ObservedGeneration: new(int64(1)), Conditions: rolledOut},
	}
	sc := &scyllav1alpha1.ScyllaDBCluster{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       namespace,
			Name:            scName,
			UID:             "7f2e5b80-3d4c-4eaf-9a1b-2c3d4e5f6071",
			Generation:      1,
			ResourceVersion: "1",
			Labels:          map[string]string{naming.RegisterWithScyllaDBManagerLabel: "true"},
		},
		Status: scyllav1alpha1.ScyllaDBClusterStatus{ObservedGeneration: new(int64(1)), Conditions: rolledOut},
	}
	task := &scyllav1alpha1.ScyllaDBManagerTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: taskName, UID: "6e1d4a7f-2c3b-4d9e-8f0a-1b2c3d4e5f60", Generation: 1, ResourceVersion: "1"},
		Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
			ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBDatacenter", Name: name},
			Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeRepair,
			Repair: &scyllav1alpha1.ScyllaDBManagerRepairTaskOptions{
				ScyllaDBManagerTaskSchedule: scyllav1alpha1.ScyllaDBManagerTaskSchedule{Cron: new("0 3 * * SUN")},
			},
		},
	}
	// A backup to a declared bucket: the task controller creates the datacenter's entry in it first.
	backupTask := &scyllav1alpha1.ScyllaDBManagerTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: backupTaskName, UID: "8a3f6c91-4e5d-4fb0-8b2c-3d4e5f607182", Generation: 1, ResourceVersion: "1"},
		Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
			ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBDatacenter", Name: name},
			Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeBackup,
			Backup: &scyllav1alpha1.ScyllaDBManagerBackupTaskOptions{
				ScyllaDBManagerTaskSchedule: scyllav1alpha1.ScyllaDBManagerTaskSchedule{Cron: new("0 2 * * *")},
				Location:                    []string{"s3:backups"},
			},
		},
	}
	bucket := &scyllav1alpha1.ScyllaDBBackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: "shared-backups", UID: "9b4a7d02-5f6e-4a01-9c3d-4e5f60718293", Generation: 1, ResourceVersion: "1"},
		Spec: scyllav1alpha1.ScyllaDBBackupBucketSpec{
			Provider:   scyllav1alpha1.ScyllaDBBackupProviderS3,
			BucketName: "backups",
			// Nothing listens there: the bucket controller's check fails at once, and it reports that in the status.
			Endpoint:             "http://127.0.0.1:1",
			CredentialsSecretRef: &scyllav1alpha1.ScyllaDBBackupBucketSecretReference{Namespace: namespace, Name: "backup-credentials"},
		},
	}
	// An entry made by hand, without the finalizer the task controller creates entries with: the entry controller
	// patches it on.
	handMadeEntry := &scyllav1alpha1.ScyllaDBBackupEntry{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       namespace,
			Name:            naming.ScyllaDBBackupEntryName("ScyllaDBCluster", scName, bucket.Name),
			UID:             "0c5b8e13-6a7f-4b12-8d4e-5f60718293a4",
			Generation:      1,
			ResourceVersion: "1",
		},
		Spec: scyllav1alpha1.ScyllaDBBackupEntrySpec{
			BucketRef:  bucket.Name,
			ClusterRef: scyllav1alpha1.ScyllaDBBackupEntryClusterReference{Kind: "ScyllaDBCluster", Name: scName, UID: sc.UID},
		},
	}
	scyllaClient, tracker, err := apiserverfields.NewScyllaClientset(sdc, sc, task, backupTask, bucket, handMadeEntry)
	if err != nil {
		t.Fatal(err)
	}

	o := NewManagerControllerOptions()
	o.ScyllaDBManagerURL = server.URL
	o.ConcurrentSyncs = 1
	// No resync during the test: each reaction follows a watch event, as with the API server.
	o.ResyncPeriod = time.Hour
	if err := o.completeScyllaDBManager(); err != nil {
		t.Fatal(err)
	}
	o.kubeClient, o.scyllaClient = kubeClient, scyllaClient

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	p := &controllerProgram{newControllers: o.newControllers}
	go func() { done <- p.runControllers(ctx, func() {}) }()

	sdcGVR := scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters")
	scGVR := scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbclusters")
	taskGVR := scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbmanagertasks")
	// The tracker is read directly, so that these reads are not among the controllers' requests.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return cond(), nil
		}); err != nil {
			sdcObj, _ := tracker.Get(sdcGVR, namespace, name)
			scObj, _ := tracker.Get(scGVR, namespace, scName)
			taskObj, _ := tracker.Get(taskGVR, namespace, taskName)
			t.Fatalf("waiting for %s: %v\nScyllaDB Manager: %+v\nScyllaDBDatacenter: %+v\nScyllaDBCluster: %+v\nScyllaDBManagerTask: %+v", what, err, manager.State(), sdcObj, scObj, taskObj)
		}
	}
	waitFor("the datacenter, the ScyllaDBCluster, the backup entries and the tasks in ScyllaDB Manager, with their finalizers and statuses", func() bool {
		st := manager.State()
		sdcObj, err := tracker.Get(sdcGVR, namespace, name)
		if err != nil {
			return false
		}
		scObj, err := tracker.Get(scGVR, namespace, scName)
		if err != nil {
			return false
		}
		gotSC := scObj.(*scyllav1alpha1.ScyllaDBCluster)
		if len(gotSC.Finalizers) == 0 || len(gotSC.Annotations[naming.ScyllaDBManagerClusterIDAnnotation]) == 0 ||
			meta.FindStatusCondition(gotSC.Status.Conditions, "ScyllaDBManagerRegistrationProgressing") == nil {
			return false
		}
		taskObj, err := tracker.Get(taskGVR, namespace, taskName)
		if err != nil {
			return false
		}
		gotSDC, gotTask := sdcObj.(*scyllav1alpha1.ScyllaDBDatacenter), taskObj.(*scyllav1alpha1.ScyllaDBManagerTask)
		entries, err := tracker.List(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbbackupentries"), scyllav1alpha1.SchemeGroupVersion.WithKind("ScyllaDBBackupEntry"), namespace)
		if err != nil {
			return false
		}
		items, err := meta.ExtractList(entries)
		if err != nil || len(items) != 2 {
			return false
		}
		for _, item := range items {
			if entry := item.(*scyllav1alpha1.ScyllaDBBackupEntry); !slices.Contains(entry.Finalizers, naming.ScyllaDBBackupEntryFinalizer) {
				return false
			}
		}
		return len(st.Clusters) == 2 && slices.ContainsFunc(st.Tasks, func(ts fakescyllamanager.TaskState) bool {
			return ts.Type == "repair" && !ts.Deleted && strings.Contains(ts.Name, taskName)
		}) && slices.ContainsFunc(st.Tasks, func(ts fakescyllamanager.TaskState) bool {
			return ts.Type == "backup" && !ts.Deleted && strings.Contains(ts.Name, backupTaskName)
		}) &&
			len(gotSDC.Finalizers) != 0 && len(gotSDC.Annotations[naming.ScyllaDBManagerClusterIDAnnotation]) != 0 &&
			len(gotTask.Finalizers) != 0 && gotTask.Status.TaskID != nil && len(gotTask.Annotations[naming.ScyllaDBManagerTaskStatusAnnotation]) != 0
	})

	// Deleting them removes them from ScyllaDB Manager, then their finalizers.
	deleted := []struct {
		gvr  schema.GroupVersionResource
		name string
	}{{gvr: taskGVR, name: taskName}, {gvr: taskGVR, name: backupTaskName}, {gvr: sdcGVR, name: name}, {gvr: scGVR, name: scName}}
	markDeleted := func(gvr schema.GroupVersionResource, name string) {
		live, err := tracker.Get(gvr, namespace, name)
		if err != nil {
			t.Fatal(err)
		}
		deleting := live.DeepCopyObject()
		accessor, err := meta.Accessor(deleting)
		if err != nil {
			t.Fatal(err)
		}
		accessor.SetDeletionTimestamp(new(metav1.Now()))
		if err := tracker.Update(gvr, deleting, namespace); err != nil {
			t.Fatal(err)
		}
	}
	for _, obj := range deleted {
		markDeleted(obj.gvr, obj.name)
	}
	waitFor("the finalizers to be removed after ScyllaDB Manager forgot them", func() bool {
		for _, obj := range deleted {
			live, err := tracker.Get(obj.gvr, namespace, obj.name)
			if err != nil {
				return false
			}
			accessor, err := meta.Accessor(live)
			if err != nil || len(accessor.GetFinalizers()) != 0 {
				if err == nil && accessor.GetDeletionTimestamp() == nil {
					// The fake clientset's patches read, change and write the object without a resourceVersion
					// check, so a controller's patch racing markDeleted can write the object back without its
					// deletionTimestamp, which an API server never loses: mark it again.
					markDeleted(obj.gvr, obj.name)
				}
				return false
			}
		}
		return len(manager.State().Clusters) == 0
	})
	waitFor("events", func() bool {
		events, err := kubeClient.Tracker().List(corev1.SchemeGroupVersion.WithResource("events"), corev1.SchemeGroupVersion.WithKind("Event"), "")
		if err != nil {
			return false
		}
		list, err := meta.ExtractList(events)
		return err == nil && len(list) != 0
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	rules := ManagerControllerClusterRoleRules()
	used := map[permission]bool{}
	for _, a := range slices.Concat(kubeClient.Actions(), scyllaClient.Actions()) {
		p := permissionOf(a)
		used[p] = true
		if !rulesAllow(rules, p) {
			t.Errorf("the ClusterRole does not allow %v, which the manager-controller does", p)
		}
	}
	for _, p := range unexercisedPermissions {
		used[p] = true
	}
	for _, p := range permissionsOf(rules) {
		if !used[p] {
			t.Errorf("the ClusterRole grants %v, which the manager-controller never uses", p)
		}
	}
}

// Leader election needs exactly the Role the manager-controller gets in its namespace.
func TestManagerControllerLeaderElectionNeedsExactlyItsRole(t *testing.T) {
	t.Parallel()
	client := kubefake.NewClientset()
	le := genericclioptions.NewLeaderElection(naming.ManagerControllerLeaseName)
	le.Namespace = naming.ScyllaDBManagerNamespace
	le.LeaseDuration, le.RenewDeadline, le.RetryPeriod = time.Second, 500*time.Millisecond, 50*time.Millisecond

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	err := le.Run(ctx, client, func(ctx context.Context) {
		// Lead until the lease was renewed once, then release it.
		_ = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return slices.ContainsFunc(client.Actions(), func(a clienttesting.Action) bool { return a.GetVerb() == "update" }), nil
		})
		cancel()
	})
	if err != nil {
		t.Fatal(err)
	}

	rules := ManagerControllerLeaderElectionRules()
	used := map[permission]bool{}
	for _, a := range client.Actions() {
		p := permissionOf(a)
		used[p] = true
		if !rulesAllow(rules, p) || a.GetNamespace() != naming.ScyllaDBManagerNamespace {
			t.Errorf("the leader election Role does not allow %v in namespace %q", p, a.GetNamespace())
		}
	}
	for _, p := range permissionsOf(rules) {
		if !used[p] {
			t.Errorf("the leader election Role grants %v, which leader election never uses", p)
		}
	}
}
