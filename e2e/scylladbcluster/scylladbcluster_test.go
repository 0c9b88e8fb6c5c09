//go:build e2e

package scylladbcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

const (
	scyllaDBClusterKind = "ScyllaDBCluster"
	// scyllaDBClusterProtectionFinalizer is naming.ScyllaDBClusterProtectionFinalizer.
	scyllaDBClusterProtectionFinalizer = "scylla-operator.scylladb.com/scylladbcluster-protection"

	// backupCron runs once a year, so that the task's next activation, which the manager-controller copies into the
	// ScyllaDBManagerTask's status, does not move while the test watches for writes.
	backupCron = "0 3 1 1 *"

	// managerPollEvery throttles the waits that read the fake ScyllaDB Manager: every read lands in its request log,
	// which keeps only the last 10000 requests, and the test counts requests in it.
	managerPollEvery = time.Second
)

// newScyllaDBCluster returns a ScyllaDBCluster labelled for registration with ScyllaDB Manager, with one datacenter
// per remote, named dc1, dc2..., each of one rack with one small node.
func newScyllaDBCluster(namespace, name string, remotes []*remote) *scyllav1alpha1.ScyllaDBCluster {
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	var dcs []scyllav1alpha1.ScyllaDBClusterDatacenter
	for i, r := range remotes {
		dcs = append(dcs, scyllav1alpha1.ScyllaDBClusterDatacenter{Name: fmt.Sprintf("dc%d", i+1), RemoteKubernetesClusterName: r.name})
	}
	return &scyllav1alpha1.ScyllaDBCluster{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace,
			Name:      name,
			Labels:    map[string]string{naming.RegisterWithScyllaDBManagerLabel: "true"},
		},
		Spec: scyllav1alpha1.ScyllaDBClusterSpec{
			ScyllaDB:             scyllav1alpha1.ScyllaDB{Image: "docker.io/scylladb/scylla:" + scyllaVersion},
			ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgent{Image: ptr.To("docker.io/scylladb/scylla-manager-agent:" + agentVersion)},
			MinReadySeconds:      ptr.To[int32](0),
			DatacenterTemplate: &scyllav1alpha1.ScyllaDBClusterDatacenterTemplate{
				RackTemplate: &scyllav1alpha1.RackTemplate{
					Nodes: ptr.To[int32](1),
					ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{
						Resources: &corev1.ResourceRequirements{Requests: small.DeepCopy(), Limits: small.DeepCopy()},
						Storage:   &scyllav1alpha1.StorageOptions{Capacity: "1Gi"},
					},
				},
				Racks: []scyllav1alpha1.RackSpec{{Name: "a"}},
			},
			Datacenters: dcs,
		},
	}
}

// multiDC is the ScyllaDBCluster under test and where its datacenters live.
type multiDC struct {
	e    *env
	name string
	// dcs are the datacenters' names, in spec order; dc i runs on e.workers[i], in remoteNamespaces[i].
	dcs              []string
	remotes          []*remote
	remoteNamespaces []string
}

func (m *multiDC) namespace() string {
	return m.e.meta.c.Namespace
}

func (m *multiDC) datacenterName(i int) string {
	return naming.ScyllaDBClusterDatacenterName(m.name, m.dcs[i])
}

func (m *multiDC) getScyllaDBDatacenter(ctx context.Context, i int) (*scyllav1alpha1.ScyllaDBDatacenter, error) {
	return m.e.workers[i].scylla.ScyllaV1alpha1().ScyllaDBDatacenters(m.remoteNamespaces[i]).Get(ctx, m.datacenterName(i), metav1.GetOptions{})
}

// converged returns the ScyllaDBCluster once its status says it converged at its generation: Available, not
// Progressing nor Degraded, every datacenter listed with its remote namespace, its node ready and not stale, and
// the protection finalizer set. Otherwise it says what does not hold yet.
func (m *multiDC) converged(ctx context.Context) (*scyllav1alpha1.ScyllaDBCluster, error) {
	sc, err := m.e.meta.scylla.ScyllaV1alpha1().ScyllaDBClusters(m.namespace()).Get(ctx, m.name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var problems []string
	if !slices.Contains(sc.Finalizers, scyllaDBClusterProtectionFinalizer) {
		problems = append(problems, fmt.Sprintf("finalizers %q lack %q", sc.Finalizers, scyllaDBClusterProtectionFinalizer))
	}
	if got := ptr.Deref(sc.Status.ObservedGeneration, 0); got != sc.Generation {
		problems = append(problems, fmt.Sprintf("observedGeneration %d, generation %d", got, sc.Generation))
	}
	if err := conditionsProblem(sc.Status.Conditions, sc.Generation, rolledOut); err != nil {
		problems = append(problems, err.Error())
	}
	if len(sc.Status.Datacenters) != len(m.dcs) {
		problems = append(problems, fmt.Sprintf("status lists %d datacenters, want %d", len(sc.Status.Datacenters), len(m.dcs)))
	}
	for i, dc := range m.dcs {
		s := datacenterStatus(sc, dc)
		switch {
		case s == nil:
			problems = append(problems, fmt.Sprintf("status lists no datacenter %s", dc))
		case ptr.Deref(s.RemoteNamespaceName, "") != m.remoteNamespaces[i]:
			problems = append(problems, fmt.Sprintf("datacenter %s has remoteNamespaceName %q, want %q", dc, ptr.Deref(s.RemoteNamespaceName, ""), m.remoteNamespaces[i]))
		case ptr.Deref(s.Nodes, 0) != 1 || ptr.Deref(s.ReadyNodes, 0) != 1:
			problems = append(problems, fmt.Sprintf("datacenter %s has %d nodes, %d ready, want 1 and 1", dc, ptr.Deref(s.Nodes, 0), ptr.Deref(s.ReadyNodes, 0)))
		case ptr.Deref(s.Stale, false):
			problems = append(problems, fmt.Sprintf("datacenter %s is stale", dc))
		}
	}
	if len(problems) != 0 {
		return sc, errors.New("ScyllaDBCluster " + m.namespace() + "/" + m.name + ": " + strings.Join(problems, "; "))
	}
	return sc, nil
}

func (m *multiDC) waitForConvergence(what string) *scyllav1alpha1.ScyllaDBCluster {
	m.e.t.Helper()
	var sc *scyllav1alpha1.ScyllaDBCluster
	m.e.waitFor(rolloutTimeout, what, func(ctx context.Context) (bool, error) {
		var err error
		sc, err = m.converged(ctx)
		return err == nil, err
	})
	return sc
}

func datacenterStatus(sc *scyllav1alpha1.ScyllaDBCluster, dc string) *scyllav1alpha1.ScyllaDBClusterDatacenterStatus {
	for i := range sc.Status.Datacenters {
		if sc.Status.Datacenters[i].Name == dc {
			return &sc.Status.Datacenters[i]
		}
	}
	return nil
}

// cleanUp removes whatever the test left of the ScyllaDBCluster, after dumping its remote namespaces if the test
// failed: it deletes it and the namespace's ScyllaDBManagerTasks, gives the controllers a moment to let go, then
// removes the finalizers left and the remote namespaces.
func (m *multiDC) cleanUp() {
	e := m.e
	for i, w := range e.workers {
		e.dumpNamespaces(w, m.remoteNamespaces[i])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	scs := e.meta.scylla.ScyllaV1alpha1().ScyllaDBClusters(m.namespace())
	tasks := e.meta.scylla.ScyllaV1alpha1().ScyllaDBManagerTasks(m.namespace())
	if err := scs.Delete(ctx, m.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		e.t.Errorf("can't delete ScyllaDBCluster %q: %v", m.name, err)
	}
	if err := tasks.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		e.t.Errorf("can't delete the ScyllaDBManagerTasks: %v", err)
	}
	err := framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		_, err := scs.Get(ctx, m.name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
	if err != nil {
		e.t.Logf("ScyllaDBCluster %q is still there after a minute (%v); removing its finalizers", m.name, err)
	}
	unfinalize := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := scs.Patch(ctx, m.name, types.MergePatchType, unfinalize, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		e.t.Errorf("can't remove the finalizers of ScyllaDBCluster %q: %v", m.name, err)
	}
	if list, err := tasks.List(ctx, metav1.ListOptions{}); err == nil {
		for _, task := range list.Items {
			if _, err := tasks.Patch(ctx, task.Name, types.MergePatchType, unfinalize, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
				e.t.Errorf("can't remove the finalizers of ScyllaDBManagerTask %q: %v", task.Name, err)
			}
		}
	}
	for i, w := range e.workers {
		err := w.c.Clients.Kube.CoreV1().Namespaces().Delete(ctx, m.remoteNamespaces[i], metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			e.t.Errorf("can't delete namespace %q of %s: %v", m.remoteNamespaces[i], w.name(), err)
		}
	}
}

// TestScyllaDBClusterAcrossTwoWorkers is issue 11's end-to-end story of a ScyllaDBCluster with one datacenter in
// each worker, registered with ScyllaDB Manager.
func TestScyllaDBClusterAcrossTwoWorkers(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	e.startOperator(e.meta)
	e.startWorkers()
	fake := e.startManager()
	var remotes []*remote
	for i, w := range e.workers {
		remotes = append(remotes, e.createRemoteKubernetesCluster(fmt.Sprintf("%s-w%d", e.meta.c.Namespace, i+1), w))
	}

	sc := newScyllaDBCluster(e.meta.c.Namespace, "multi-dc", remotes)
	m := &multiDC{e: e, name: sc.Name, remotes: remotes}
	for _, dc := range sc.Spec.Datacenters {
		m.dcs = append(m.dcs, dc.Name)
		m.remoteNamespaces = append(m.remoteNamespaces, naming.ScyllaDBClusterRemoteNamespaceName(sc.Namespace, dc.Name))
	}
	scs := e.meta.scylla.ScyllaV1alpha1().ScyllaDBClusters(sc.Namespace)
	if _, err := scs.Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("can't create ScyllaDBCluster %s/%s: %v", sc.Namespace, sc.Name, err)
	}
	t.Cleanup(m.cleanUp)

	t.Log("The datacenters come up one at a time: dc2's ScyllaDBDatacenter is created only once dc1's is Available")
	var sdc2 *scyllav1alpha1.ScyllaDBDatacenter
	e.waitFor(rolloutTimeout, "dc2's ScyllaDBDatacenter to be created", func(ctx context.Context) (bool, error) {
		var err error
		sdc2, err = m.getScyllaDBDatacenter(ctx, 1)
		return err == nil, err
	})
	sdc1, err := m.getScyllaDBDatacenter(ctx, 0)
	if err != nil {
		t.Fatalf("dc2's ScyllaDBDatacenter exists but dc1's does not: %v", err)
	}
	if available := meta.FindStatusCondition(sdc1.Status.Conditions, "Available"); available == nil || available.Status != metav1.ConditionTrue || sdc2.CreationTimestamp.Before(&available.LastTransitionTime) {
		t.Errorf("dc2's ScyllaDBDatacenter was created at %v, before dc1's was Available (%s)", sdc2.CreationTimestamp, describeCondition(available))
	}

	converged := m.waitForConvergence("the ScyllaDBCluster to converge in both datacenters")
	t.Logf("Converged: %s", describeConditions(converged.Status.Conditions))

	t.Log("The ScyllaDBDatacenters: never labelled for registration, pointed at the cluster's token, dc2 seeding from dc1")
	sdcs := make([]*scyllav1alpha1.ScyllaDBDatacenter, len(m.dcs))
	for i := range m.dcs {
		if sdcs[i], err = m.getScyllaDBDatacenter(ctx, i); err != nil {
			t.Fatal(err)
		}
		if v, ok := sdcs[i].Labels[naming.RegisterWithScyllaDBManagerLabel]; ok {
			t.Errorf("ScyllaDBDatacenter %s/%s is labelled %s=%q; the label must not be propagated", sdcs[i].Namespace, sdcs[i].Name, naming.RegisterWithScyllaDBManagerLabel, v)
		}
		if got, want := sdcs[i].Annotations[naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot], naming.ScyllaDBClusterAuthTokenSecretName(sc.Name); got != want {
			t.Errorf("ScyllaDBDatacenter %s/%s has annotation %s=%q, want %q", sdcs[i].Namespace, sdcs[i].Name, naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot, got, want)
		}
	}
	seedHost := naming.ScyllaDBClusterSeedServiceHost(sc.Name, m.dcs[0], m.remoteNamespaces[1])
	if seeds := sdcs[0].Spec.ScyllaDB.ExternalSeeds; len(seeds) != 0 {
		t.Errorf("dc1, the first datacenter, has external seeds %q; it must bootstrap alone", seeds)
	}
	if seeds := sdcs[1].Spec.ScyllaDB.ExternalSeeds; !slices.Contains(seeds, seedHost) {
		t.Errorf("dc2 has external seeds %q, want them to hold dc1's seed Service %q", seeds, seedHost)
	}

	t.Log("All nodes form ONE ring of the fake ScyllaDB")
	var ring fakescylladb.Ring
	e.waitFor(stepTimeout, fmt.Sprintf("one ring of cluster %q with a node of each datacenter", sc.Name), func(context.Context) (bool, error) {
		ring, err = e.oneRing(sc.Name, m.dcs...)
		return err == nil, err
	})
	members := map[string]fakescylladb.Member{}
	for _, member := range ring.Members {
		members[member.Datacenter] = member
	}

	t.Log("dc1's seed Service in dc2's namespace: headless, selector-less, with dc1's node address")
	e.checkSeedService(m, members[m.dcs[0]].BroadcastAddress)

	t.Log("The recorded ScyllaDB starts: dc1 without external seeds, dc2 seeding from dc1's seed Service")
	for _, r := range e.records(e.workers[0], e.onlyNode(e.workers[0], m.remoteNamespaces[0])) {
		if r.Invocation == nil {
			continue
		}
		for _, seed := range r.Invocation.Settings.Seeds {
			if strings.HasSuffix(seed, ".svc") || seed == members[m.dcs[1]].BroadcastAddress {
				t.Errorf("dc1's ScyllaDB started with seeds %q, which reach outside dc1", r.Invocation.Settings.Seeds)
				break
			}
		}
	}
	dc2Records := e.records(e.workers[1], e.onlyNode(e.workers[1], m.remoteNamespaces[1]))
	if first := dc2Records[0]; first.Invocation == nil || !slices.Contains(first.Invocation.Settings.Seeds, seedHost) {
		t.Errorf("dc2's ScyllaDB first started without dc1's seed Service %q as a seed: %+v", seedHost, first)
	}
	// The seed Service's name resolves, in dc2's worker, to dc1's node.
	if !slices.ContainsFunc(dc2Records, func(r fakescylladb.Record) bool {
		return slices.Contains(r.ResolvedSeeds, members[m.dcs[0]].BroadcastAddress)
	}) {
		t.Errorf("no start of dc2's ScyllaDB resolved its seeds to dc1's node %s: %+v", members[m.dcs[0]].BroadcastAddress, dc2Records)
	}

	t.Log("Every datacenter's agents use the cluster's one token")
	token := e.clusterAuthToken(m)
	for i, w := range e.workers {
		name := naming.AgentAuthTokenSecretName(m.datacenterName(i))
		secret, err := w.c.Clients.Kube.CoreV1().Secrets(m.remoteNamespaces[i]).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("can't get the agent auth-token Secret of %s: %v", m.dcs[i], err)
		}
		got, err := scyllaagent.AuthTokenFromConfig(secret.Data[naming.ScyllaDBManagerAgentAuthTokenKey])
		if err != nil {
			t.Fatalf("can't read the agent auth-token Secret %s/%s of %s: %v", secret.Namespace, secret.Name, w.name(), err)
		}
		if got != token {
			t.Errorf("the agents of %s use another token (Secret %s/%s of %s) than the cluster's", m.dcs[i], secret.Namespace, secret.Name, w.name())
		}
	}
	if _, err := e.meta.c.Clients.Kube.CoreV1().Services(sc.Namespace).Get(ctx, naming.ScyllaDBClusterClientServiceName(sc.Name), metav1.GetOptions{}); err != nil {
		t.Errorf("the meta cluster's client Service of the ScyllaDBCluster: %v", err)
	}

	t.Log("ScyllaDB Manager holds the ScyllaDBCluster as one cluster, registered once, with that token")
	clusterID := naming.ScyllaDBManagerClusterID(scyllaDBClusterKind, converged.UID)
	host := naming.ScyllaDBManagerClusterHostForScyllaDBCluster(sc.Namespace, sc.Name)
	e.waitForManager(fake, "ScyllaDB Manager to hold the ScyllaDBCluster as its one cluster", func(st fakescyllamanager.State) error {
		c := clusterByID(st, clusterID)
		switch {
		case c == nil:
			return fmt.Errorf("no cluster %s", clusterID)
		case len(st.Clusters) != 1:
			return fmt.Errorf("%d clusters, want 1", len(st.Clusters))
		case c.Host != host:
			return fmt.Errorf("cluster %s has host %q, want %q", clusterID, c.Host, host)
		case c.Name != naming.ScyllaDBManagerClusterNameForObject(sc.Namespace, scyllaDBClusterKind, sc.Name):
			return fmt.Errorf("cluster %s is named %q, want %q", clusterID, c.Name, naming.ScyllaDBManagerClusterNameForObject(sc.Namespace, scyllaDBClusterKind, sc.Name))
		case c.AuthToken != token:
			return fmt.Errorf("cluster %s has another agent auth token than the ScyllaDBCluster's", clusterID)
		}
		return nil
	})

	t.Log("A backup task referencing the ScyllaDBCluster, one location per datacenter, is scheduled once")
	topology := fakescyllamanager.Topology{Keyspaces: fakescyllamanager.DefaultTopology().Keyspaces}
	var locations []string
	for _, dc := range m.dcs {
		member := members[dc]
		topology.Datacenters = append(topology.Datacenters, fakescyllamanager.Datacenter{
			Name:  dc,
			Nodes: []fakescyllamanager.Node{{Address: member.BroadcastAddress, HostID: member.HostID}},
		})
		locations = append(locations, dc+":s3:backups-"+dc)
	}
	if err := fake.UpdateKnobs(ctx, func(k *fakescyllamanager.Knobs) {
		if k.Topologies == nil {
			k.Topologies = map[string]fakescyllamanager.Topology{}
		}
		k.Topologies[host] = topology
	}); err != nil {
		t.Fatal(err)
	}
	task := &scyllav1alpha1.ScyllaDBManagerTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: sc.Namespace, Name: "backup"},
		Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
			ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: scyllaDBClusterKind, Name: sc.Name},
			Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeBackup,
			Backup: &scyllav1alpha1.ScyllaDBManagerBackupTaskOptions{
				ScyllaDBManagerTaskSchedule: scyllav1alpha1.ScyllaDBManagerTaskSchedule{Cron: ptr.To(backupCron)},
				DC:                          m.dcs,
				Location:                    locations,
			},
		},
	}
	tasks := e.meta.scylla.ScyllaV1alpha1().ScyllaDBManagerTasks(sc.Namespace)
	if _, err := tasks.Create(ctx, task, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitForManager(fake, "the backup task to be scheduled and reported", func(st fakescyllamanager.State) error {
		got, err := tasks.Get(ctx, task.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := conditionsProblem(got.Status.Conditions, got.Generation, map[string]metav1.ConditionStatus{"Available": metav1.ConditionTrue, "Degraded": metav1.ConditionFalse}); err != nil {
			return fmt.Errorf("ScyllaDBManagerTask %q: %w", task.Name, err)
		}
		live := liveTasks(st, clusterID, "backup")
		if len(live) != 1 {
			return fmt.Errorf("cluster %s has %d live backup tasks, want 1", clusterID, len(live))
		}
		if id := ptr.Deref(got.Status.TaskID, ""); id != live[0].ID {
			return fmt.Errorf("ScyllaDBManagerTask %q has status.taskID %q, ScyllaDB Manager's task is %s", task.Name, id, live[0].ID)
		}
		return nil
	})
	reqs, err := managerRequests(ctx, fake)
	if err != nil {
		t.Fatal(err)
	}
	ofCluster := framework.ScyllaDBManagerRequestsOfCluster(reqs, clusterID)
	if creates := successful(ofCluster, fakescyllamanager.EndpointCreateCluster); len(creates) != 1 {
		t.Errorf("ScyllaDB Manager got %d successful cluster creates for the ScyllaDBCluster, want 1:\n%s", len(creates), framework.DescribeScyllaDBManagerRequests(creates))
	}
	if creates := successful(ofCluster, fakescyllamanager.EndpointCreateTask); len(creates) != 1 {
		t.Errorf("ScyllaDB Manager got %d successful task creates for the ScyllaDBCluster, want 1:\n%s", len(creates), framework.DescribeScyllaDBManagerRequests(creates))
	}

	t.Logf("Converged, it costs no write over a resync window (%v): no operator, manager-controller or ScyllaDB Manager write", resyncPeriod)
	e.expectSteadyState(m, fake)

	t.Logf("%s unreachable: only dc2 is degraded and stale, and dc1 keeps being reconciled", e.workers[1].name())
	remotes[1].proxy.cutOff()
	e.waitFor(stepTimeout, "dc2 to be reported degraded and stale, dc1 not", func(ctx context.Context) (bool, error) {
		got, err := scs.Get(ctx, sc.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		degraded := meta.FindStatusCondition(got.Status.Conditions, "Degraded")
		switch {
		case degraded == nil || degraded.Status != metav1.ConditionTrue:
			return false, fmt.Errorf("not Degraded: %s", describeCondition(degraded))
		case !strings.Contains(degraded.Message, m.dcs[1]) || !strings.Contains(degraded.Message, remotes[1].name):
			return false, fmt.Errorf("Degraded does not name datacenter %s and RemoteKubernetesCluster %s: %q", m.dcs[1], remotes[1].name, degraded.Message)
		case strings.Contains(degraded.Message, remotes[0].name):
			return false, fmt.Errorf("Degraded names dc1's RemoteKubernetesCluster %s, which is reachable: %q", remotes[0].name, degraded.Message)
		}
		if s := datacenterStatus(got, m.dcs[1]); s == nil || !ptr.Deref(s.Stale, false) {
			return false, fmt.Errorf("dc2's status is not stale: %+v", s)
		}
		if s := datacenterStatus(got, m.dcs[0]); s == nil || ptr.Deref(s.Stale, false) {
			return false, fmt.Errorf("dc1's status is missing or stale: %+v", s)
		}
		t.Logf("Degraded: %s", degraded.Message)
		return true, nil
	})
	e.expectDatacenterReconciled(m, 0, token)

	t.Logf("%s reachable again: everything converges", e.workers[1].name())
	remotes[1].proxy.restore()
	m.waitForConvergence("the ScyllaDBCluster to converge again after the worker came back")
	e.waitForManager(fake, "ScyllaDB Manager to still hold the ScyllaDBCluster as its one cluster, with the backup task", func(st fakescyllamanager.State) error {
		if c := clusterByID(st, clusterID); c == nil || len(st.Clusters) != 1 {
			return fmt.Errorf("want cluster %s as the only one, got %d clusters", clusterID, len(st.Clusters))
		}
		if live := liveTasks(st, clusterID, "backup"); len(live) != 1 {
			return fmt.Errorf("cluster %s has %d live backup tasks, want 1", clusterID, len(live))
		}
		return nil
	})
	if reqs, err = managerRequests(ctx, fake); err != nil {
		t.Fatal(err)
	}
	if creates := successful(framework.ScyllaDBManagerRequestsOfCluster(reqs, clusterID), fakescyllamanager.EndpointCreateCluster); len(creates) != 1 {
		t.Errorf("after the worker came back, ScyllaDB Manager got %d successful cluster creates for the ScyllaDBCluster in all, want 1:\n%s", len(creates), framework.DescribeScyllaDBManagerRequests(creates))
	}

	t.Log("Deleting the ScyllaDBCluster leaves no namespace in any worker and nothing in ScyllaDB Manager")
	if err := scs.Delete(ctx, sc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitForManager(fake, "the ScyllaDBCluster, its remote namespaces and its ScyllaDB Manager cluster to be gone", func(st fakescyllamanager.State) error {
		var left []string
		if got, err := scs.Get(ctx, sc.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			if err != nil {
				return err
			}
			left = append(left, fmt.Sprintf("ScyllaDBCluster (finalizers %q)", got.Finalizers))
		}
		for i, w := range e.workers {
			ns, err := w.c.Clients.Kube.CoreV1().Namespaces().Get(ctx, m.remoteNamespaces[i], metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				if err != nil {
					return err
				}
				left = append(left, fmt.Sprintf("namespace %s of %s (%s)", ns.Name, w.name(), ns.Status.Phase))
			}
		}
		for _, c := range st.Clusters {
			left = append(left, fmt.Sprintf("ScyllaDB Manager cluster %s %q", c.ID, c.Name))
		}
		if len(left) != 0 {
			return fmt.Errorf("still there: %s", strings.Join(left, "; "))
		}
		return nil
	})

	t.Log("The ScyllaDBManagerTask outlives the ScyllaDBCluster (no owner reference), and deleting it then completes")
	got, err := tasks.Get(ctx, task.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ScyllaDBManagerTask %q did not outlive the ScyllaDBCluster it references: %v", task.Name, err)
	}
	if got.DeletionTimestamp != nil || len(got.OwnerReferences) != 0 {
		t.Errorf("ScyllaDBManagerTask %q is being deleted (%v) or owned (%v) after its ScyllaDBCluster went", task.Name, got.DeletionTimestamp, got.OwnerReferences)
	}
	if err := tasks.Delete(ctx, task.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitForManager(fake, "the ScyllaDBManagerTask of the deleted ScyllaDBCluster to go, leaving ScyllaDB Manager empty", func(st fakescyllamanager.State) error {
		if got, err := tasks.Get(ctx, task.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			if err != nil {
				return err
			}
			return fmt.Errorf("ScyllaDBManagerTask %q is still there (finalizers %q)", task.Name, got.Finalizers)
		}
		if len(st.Clusters) != 0 {
			return fmt.Errorf("ScyllaDB Manager holds %d clusters", len(st.Clusters))
		}
		return nil
	})
}

// checkSeedService checks the seed Service of dc1 in dc2's remote namespace: headless, without a selector, its
// EndpointSlices holding dc1's node address; and that dc1's namespace holds no seed Service (dc1 seeds from no one).
func (e *env) checkSeedService(m *multiDC, dc1Address string) {
	e.t.Helper()
	ctx := e.t.Context()
	w := e.workers[1]
	name := naming.ScyllaDBClusterSeedServiceName(m.name, m.dcs[0])
	svc, err := w.c.Clients.Kube.CoreV1().Services(m.remoteNamespaces[1]).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("dc1's seed Service in dc2's namespace on %s: %v", w.name(), err)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || len(svc.Spec.Selector) != 0 {
		e.t.Errorf("seed Service %s/%s has cluster IP %q and selector %v, want a headless one without selector", svc.Namespace, svc.Name, svc.Spec.ClusterIP, svc.Spec.Selector)
	}
	endpointSlices, err := w.c.Clients.Kube.DiscoveryV1().EndpointSlices(svc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		e.t.Fatal(err)
	}
	var addresses []string
	for _, s := range endpointSlices.Items {
		for _, ep := range s.Endpoints {
			addresses = append(addresses, ep.Addresses...)
		}
	}
	if !slices.Equal(addresses, []string{dc1Address}) {
		e.t.Errorf("the EndpointSlices of seed Service %s/%s hold addresses %q, want dc1's node address %q", svc.Namespace, name, addresses, dc1Address)
	}
	other := naming.ScyllaDBClusterSeedServiceName(m.name, m.dcs[1])
	if _, err := e.workers[0].c.Clients.Kube.CoreV1().Services(m.remoteNamespaces[0]).Get(ctx, other, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		e.t.Errorf("dc1's namespace has a seed Service %q of a later datacenter, or can't be read: %v", other, err)
	}
}

// clusterAuthToken returns the agent auth token of the ScyllaDBCluster's Secret in the meta cluster.
func (e *env) clusterAuthToken(m *multiDC) string {
	e.t.Helper()
	name := naming.ScyllaDBClusterAuthTokenSecretName(m.name)
	secret, err := e.meta.c.Clients.Kube.CoreV1().Secrets(m.namespace()).Get(e.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("the ScyllaDBCluster's auth-token Secret in the meta cluster: %v", err)
	}
	token, err := scyllaagent.AuthTokenFromConfig(secret.Data[naming.ScyllaDBManagerAgentAuthTokenKey])
	if err != nil || token == "" {
		e.t.Fatalf("the ScyllaDBCluster's auth-token Secret %s/%s holds no token: %v", secret.Namespace, secret.Name, err)
	}
	return token
}

// expectDatacenterReconciled shows that datacenter i keeps being reconciled: its copy of the auth-token Secret,
// deleted in its worker, comes back with the cluster's token.
func (e *env) expectDatacenterReconciled(m *multiDC, i int, token string) {
	e.t.Helper()
	w := e.workers[i]
	secrets := w.c.Clients.Kube.CoreV1().Secrets(m.remoteNamespaces[i])
	name := naming.ScyllaDBClusterAuthTokenSecretName(m.name)
	old, err := secrets.Get(e.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("%s's copy of the auth-token Secret on %s: %v", m.dcs[i], w.name(), err)
	}
	if err := secrets.Delete(e.t.Context(), name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &old.UID}}); err != nil {
		e.t.Fatal(err)
	}
	e.waitFor(stepTimeout, fmt.Sprintf("%s's copy of the auth-token Secret, deleted on %s, to be created again", m.dcs[i], w.name()), func(ctx context.Context) (bool, error) {
		got, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got.UID == old.UID {
			return false, fmt.Errorf("Secret %s/%s is still the deleted one", got.Namespace, got.Name)
		}
		if t, err := scyllaagent.AuthTokenFromConfig(got.Data[naming.ScyllaDBManagerAgentAuthTokenKey]); err != nil || t != token {
			return false, fmt.Errorf("Secret %s/%s does not hold the cluster's token (%v)", got.Namespace, got.Name, err)
		}
		return true, nil
	})
}

// waitForManager waits until check, given what the fake ScyllaDB Manager holds, returns nil, reading the fake at
// most every managerPollEvery.
func (e *env) waitForManager(fake *framework.FakeScyllaDBManager, what string, check func(fakescyllamanager.State) error) {
	e.t.Helper()
	var last time.Time
	lastErr := errors.New("not checked yet")
	e.waitFor(rolloutTimeout, what, func(ctx context.Context) (bool, error) {
		if time.Since(last) < managerPollEvery {
			return false, lastErr
		}
		last = time.Now()
		st, err := fake.State(ctx)
		if err == nil {
			err = check(st)
		}
		lastErr = err
		return err == nil, err
	})
}

// expectSteadyState watches one resync period and then some, and fails the test if the operators of any plane
// wrote to the ScyllaDBCluster's namespaces (or cluster-scoped objects), the manager-controller to the meta
// namespace, or anything to ScyllaDB Manager.
func (e *env) expectSteadyState(m *multiDC, fake *framework.FakeScyllaDBManager) {
	e.t.Helper()
	ctx := e.t.Context()
	planes := append([]*plane{e.meta}, e.workers...)
	marks := e.markAudit(planes...)
	before, err := fake.Requests(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	select {
	case <-ctx.Done():
		e.t.Fatal(ctx.Err())
	case <-time.After(resyncPeriod + 15*time.Second):
	}
	// The operators did run meanwhile: the meta operator probes every worker through its RemoteKubernetesCluster.
	for p, events := range e.eventsSince(marks) {
		if p == e.meta {
			continue
		}
		if n := framework.CountRequests(events, framework.UserAgentPrefix(operatorUserAgentPrefix)).Total(); n < 2 {
			e.t.Errorf("the audit log of %s holds %d operator requests over %v; the window saw no operator at work", p.name(), n, resyncPeriod)
		}
	}
	namespaces := append([]string{m.namespace()}, m.remoteNamespaces...)
	for p, writes := range e.writesSince(marks, framework.UserAgentPrefix(operatorUserAgentPrefix), inNamespaces(namespaces...)) {
		e.t.Errorf("operators wrote to %s while nothing changed:\n%s", p.name(), describeEvents(writes))
	}
	metaMarks := auditMarks{e.meta: marks[e.meta]}
	for p, writes := range e.writesSince(metaMarks, framework.UserAgentPrefix(managerControllerUserAgentPrefix), inNamespaces(m.namespace())) {
		e.t.Errorf("the manager-controller wrote to %s while nothing changed:\n%s", p.name(), describeEvents(writes))
	}
	after, err := fake.Requests(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(after) < len(before) {
		e.t.Fatalf("the fake ScyllaDB Manager's request log shrank from %d to %d entries", len(before), len(after))
	}
	if writes := framework.ScyllaDBManagerWrites(framework.ManagerAPIRequests(after[len(before):])); len(writes) != 0 {
		e.t.Errorf("ScyllaDB Manager got writes while nothing changed:\n%s", framework.DescribeScyllaDBManagerRequests(writes))
	}
}

func describeCondition(c *metav1.Condition) string {
	if c == nil {
		return "no such condition"
	}
	return fmt.Sprintf("%s=%s at generation %d since %v (%s: %s)", c.Type, c.Status, c.ObservedGeneration, c.LastTransitionTime, c.Reason, c.Message)
}

func describeConditions(conditions []metav1.Condition) string {
	var parts []string
	for i := range conditions {
		parts = append(parts, describeCondition(&conditions[i]))
	}
	return strings.Join(parts, "; ")
}
