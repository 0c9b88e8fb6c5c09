//go:build e2e

package backups

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	"github.com/scyllakube/managerclient"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

const (
	// credentialsSecretName holds the S3 server's keys in the test's namespace.
	credentialsSecretName = "backup-credentials"
	// gracePeriod is the bucket's deletionGracePeriod: long enough to watch the directory stay, short for a test.
	gracePeriod = 20 * time.Second

	// scyllaVersion and agentVersion are those of deploy/examples/scyllacluster-basic.yaml.
	scyllaVersion = "2025.1.2"
	agentVersion  = "3.5.0"
	// datacenterName is also the datacenter of the fake ScyllaDB Manager's default topology.
	datacenterName = "dc1"
	// managerBackup is ScyllaDB Manager's backup task type; backupName is every cluster's backup.
	managerBackup = "backup"
	backupName    = "daily"
	// yearlyCron keeps the fake from running the backup on its own; the test starts it, as `sctool start` would.
	yearlyCron = "0 3 1 1 *"

	// rolloutTimeout bounds a wait for the clusters to roll out and their backups to be scheduled.
	rolloutTimeout = 4 * time.Minute
	// stepTimeout bounds a wait for one reaction of a controller or of Kubernetes' garbage collector.
	stepTimeout = time.Minute
	// purgeTimeout bounds the wait for a purge once the grace period is over.
	purgeTimeout = time.Minute
	// clockSkew is how far apart the API server's and the test's clocks may read the same moment: both run on this
	// machine, but timestamps in the API have whole seconds.
	clockSkew = 2 * time.Second

	// managerControllerUserAgentPrefix selects the manager-controller's requests in the audit log.
	managerControllerUserAgentPrefix = "scylla-operator-manager-controller/"
)

// backedUpCluster is a ScyllaCluster whose backup went into the shared bucket.
type backedUpCluster struct {
	name string
	// sdcUID is the UID of the ScyllaCluster's ScyllaDBDatacenter, the cluster object its entry references.
	sdcUID types.UID
	// clusterID is the ScyllaDB Manager cluster ID: the name of the cluster's directory.
	clusterID string
	// entry is the name of the cluster's ScyllaDBBackupEntry.
	entry string
	// keys are the keys of the cluster's directory after its backup, sorted.
	keys []string
}

// scenario is a test's stack with a declared ScyllaDBBackupBucket and ScyllaClusters whose backups went into it.
type scenario struct {
	t      *testing.T
	f      *framework.Framework
	c      *framework.Cluster
	ns     string
	s      *stack
	scylla scyllaclientset.Interface
	store  objectstore.Interface
	// bucketObjectName is the ScyllaDBBackupBucket's name; bucketName is the bucket's name in the S3 server.
	bucketObjectName string
	bucketName       string
	clusters         map[string]*backedUpCluster
	// gate, when the scenario has one, stands between the ScyllaDBBackupBucket's endpoint and versitygw: the
	// manager-controller and the operator reach the bucket through it, the test and the fake ScyllaDB Manager do
	// not.
	gate *framework.TCPGate
}

// scenarioOptions change what newScenarioWith sets up.
type scenarioOptions struct {
	// gated puts a framework.TCPGate in front of versitygw as the bucket's endpoint.
	gated bool
	// versioned serves the bucket with S3 versioning enabled (see restartWithVersioning).
	versioned bool
}

// newScenario starts the stack, declares a ScyllaDBBackupBucket named bucketObjectName (a bucket of the same name
// in versitygw, with credentials from a Secret and a deletionGracePeriod of gracePeriod) and waits until it is
// Available, then creates a ScyllaCluster for each name with a backup to it, waits until each has its entry and its
// backup scheduled, runs every backup and checks that the bucket holds exactly the clusters' directories.
func newScenario(t *testing.T, bucketObjectName string, names ...string) *scenario {
	t.Helper()
	return newScenarioWith(t, scenarioOptions{}, bucketObjectName, names...)
}

// newScenarioWith is newScenario with opts.
func newScenarioWith(t *testing.T, opts scenarioOptions, bucketObjectName string, names ...string) *scenario {
	t.Helper()
	bucketName := bucketObjectName + "-backups"
	f := framework.NewFramework(t)
	c := f.Cluster()
	ctx := t.Context()
	ns := c.Namespace
	// Runs after the stack stopped (cleanups run last first): the test's namespace is deleted next, and the entries
	// of clusters that still exist would hold it forever on a finalizer that no manager-controller removes, and
	// show up in the next test's manager-controller.
	t.Cleanup(func() { releaseEntries(t, c, ns) })
	s := startStack(t, f, c, bucketName)
	scylla, err := scyllaclientset.NewForConfig(c.Clients.Config)
	if err != nil {
		t.Fatalf("can't create the scylla.scylladb.com client: %v", err)
	}
	store, err := s.s3.Client()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		t.Logf("===== ScyllaDBBackupBucket =====\n%s", describeBucket(ctx, scylla, bucketObjectName))
		t.Logf("===== bucket %s in versitygw =====\n%s", bucketName, describeKeys(ctx, store, bucketName))
		t.Logf("===== fake ScyllaDB Manager (%s) =====\n%s", s.fake.URL, s.describeManager(ctx))
		t.Logf("manager-controller logs: %s", filepath.Join(c.ControlPlane.Dir, "manager-controller-"+bucketName+"-*.log"))
	})

	endpoint := s.s3.Endpoint
	var gate *framework.TCPGate
	if opts.gated {
		gate, err = framework.StartTCPGate(strings.TrimPrefix(s.s3.Endpoint, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = gate.Close() })
		endpoint = gate.URL()
		t.Logf("the ScyllaDBBackupBucket reaches versitygw through the gate %s", endpoint)
	}

	if opts.versioned {
		restartWithVersioning(t, s.s3)
	}
	if err := s.s3.CreateBucket(ctx, bucketName); err != nil {
		t.Fatalf("can't create bucket %q in versitygw: %v", bucketName, err)
	}
	if opts.versioned {
		enableVersioning(t, s.s3.Config(), bucketName)
	}
	_, err = c.Clients.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: credentialsSecretName},
		StringData: map[string]string{
			naming.ScyllaDBBackupBucketAccessKeyIDKey:     s.s3.AccessKey,
			naming.ScyllaDBBackupBucketSecretAccessKeyKey: s.s3.SecretKey,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("can't create the credentials Secret: %v", err)
	}
	_, err = scylla.ScyllaV1alpha1().ScyllaDBBackupBuckets().Create(ctx, &scyllav1alpha1.ScyllaDBBackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: bucketObjectName},
		Spec: scyllav1alpha1.ScyllaDBBackupBucketSpec{
			Provider:             scyllav1alpha1.ScyllaDBBackupProviderS3,
			BucketName:           bucketName,
			Region:               framework.S3Region,
			Endpoint:             endpoint,
			CredentialsSecretRef: &scyllav1alpha1.ScyllaDBBackupBucketSecretReference{Namespace: ns, Name: credentialsSecretName},
			DeletionGracePeriod:  &metav1.Duration{Duration: gracePeriod},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("can't create ScyllaDBBackupBucket %q: %v", bucketObjectName, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := scylla.ScyllaV1alpha1().ScyllaDBBackupBuckets().Delete(ctx, bucketObjectName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("can't delete ScyllaDBBackupBucket %q: %v", bucketObjectName, err)
		}
	})
	s.waitFor(stepTimeout, fmt.Sprintf("ScyllaDBBackupBucket %q to be Available", bucketObjectName), func(ctx context.Context) (bool, error) {
		b, err := scylla.ScyllaV1alpha1().ScyllaDBBackupBuckets().Get(ctx, bucketObjectName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if err := conditionTrue(b.Status.Conditions, "Available"); err != nil {
			return false, fmt.Errorf("ScyllaDBBackupBucket %q: %w", bucketObjectName, err)
		}
		return true, nil
	})

	for _, name := range names {
		sc := newScyllaCluster(ns, name, backupTask(backupName, yearlyCron, "s3:"+bucketName))
		if _, err := scylla.ScyllaV1().ScyllaClusters(ns).Create(ctx, sc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("can't create ScyllaCluster %q: %v", name, err)
		}
	}
	sc := &scenario{t: t, f: f, c: c, ns: ns, s: s, scylla: scylla, store: store, bucketObjectName: bucketObjectName, bucketName: bucketName, gate: gate}
	clusters := map[string]*backedUpCluster{}
	for _, name := range names {
		clusters[name] = sc.waitForBackupScheduled(name)
	}
	sc.clusters = clusters
	// Every cluster has exactly one entry, and no entry is left over.
	entries, err := scylla.ScyllaV1alpha1().ScyllaDBBackupEntries(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var gotEntries, wantEntries []string
	for _, e := range entries.Items {
		gotEntries = append(gotEntries, e.Spec.ClusterRef.Name+"="+e.Name)
	}
	for _, name := range names {
		wantEntries = append(wantEntries, name+"="+clusters[name].entry)
	}
	slices.Sort(gotEntries)
	if diff := cmp.Diff(wantEntries, gotEntries); diff != "" {
		t.Fatalf("ScyllaDBBackupEntries (cluster=entry) differ from one per cluster (-want +got):\n%s", diff)
	}
	s.waitFor(stepTimeout, fmt.Sprintf("ScyllaDBBackupBucket %q to count %d clusters", bucketObjectName, len(names)), func(ctx context.Context) (bool, error) {
		b, err := scylla.ScyllaV1alpha1().ScyllaDBBackupBuckets().Get(ctx, bucketObjectName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got := ptr.Deref(b.Status.Clusters, -1); got != int32(len(names)) {
			return false, fmt.Errorf("status.clusters is %d", got)
		}
		return true, nil
	})

	// Each backup, started as a user would, uploads into the cluster's own directory and nowhere else.
	for _, name := range names {
		bc := clusters[name]
		bc.keys = sc.runBackup(bc)
		t.Logf("ScyllaCluster %q backed up %d keys into the directory of ScyllaDB Manager cluster %s", name, len(bc.keys), bc.clusterID)
	}
	var allKeys []string
	for _, name := range names {
		allKeys = append(allKeys, clusters[name].keys...)
	}
	slices.Sort(allKeys)
	before := sc.listAll()
	if diff := cmp.Diff(allKeys, before); diff != "" {
		t.Fatalf("the bucket holds other keys than the clusters' directories (-directories +bucket):\n%s", diff)
	}
	return sc
}

// TestSharedBucketKeepsADeletedClustersDirectoryForTheGracePeriodThenPurgesOnlyIt: three ScyllaClusters back up into
// one declared ScyllaDBBackupBucket, each into its own directory, through one ScyllaDBBackupEntry each. Deleting one
// keeps its entry on its finalizer, and all of its keys, until status.purgeAfter (the deletion plus the bucket's
// deletionGracePeriod); then its entry goes and none of its keys remain, while the other clusters' keys are exactly
// as listed before. The third cluster's entry is annotated keep: deleting it lets the entry go at once and leaves its
// directory as it was.
func TestSharedBucketKeepsADeletedClustersDirectoryForTheGracePeriodThenPurgesOnlyIt(t *testing.T) {
	sc := newScenario(t, "e2e-shared", "alpha", "beta", "kept")
	ctx := t.Context()
	s, scylla, ns, c := sc.s, sc.scylla, sc.ns, sc.c
	bucketObjectName := sc.bucketObjectName
	clusters := sc.clusters
	alpha, beta, kept := clusters["alpha"], clusters["beta"], clusters["kept"]
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, naming.ScyllaDBBackupRetentionAnnotation, naming.ScyllaDBBackupRetentionKeep)
	if _, err := scylla.ScyllaV1alpha1().ScyllaDBBackupEntries(ns).Patch(ctx, kept.entry, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("can't annotate ScyllaDBBackupEntry %q to keep its directory: %v", kept.entry, err)
	}

	deletedAt := time.Now()
	for _, bc := range []*backedUpCluster{alpha, kept} {
		if err := scylla.ScyllaV1().ScyllaClusters(ns).Delete(ctx, bc.name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("can't delete ScyllaCluster %q: %v", bc.name, err)
		}
	}
	t.Logf("deleted ScyllaClusters %q and %q at %s", alpha.name, kept.name, deletedAt.UTC().Format(time.RFC3339Nano))

	// The kept entry lets go without waiting for the grace period, and its directory stays.
	s.waitFor(stepTimeout, fmt.Sprintf("ScyllaDBBackupEntry %q, annotated keep, to be released and gone", kept.entry), func(ctx context.Context) (bool, error) {
		e, err := scylla.ScyllaV1alpha1().ScyllaDBBackupEntries(ns).Get(ctx, kept.entry, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return false, fmt.Errorf("still there: %s", describeEntry(e))
	})
	if time.Since(deletedAt) >= gracePeriod {
		t.Errorf("ScyllaDBBackupEntry %q, annotated keep, was released only %v after its cluster's deletion, not before the grace period of %v", kept.entry, time.Since(deletedAt), gracePeriod)
	}
	if diff := cmp.Diff(kept.keys, sc.listDirectory(kept.clusterID)); diff != "" {
		t.Errorf("the directory of the kept cluster %q changed after its deletion (-before +now):\n%s", kept.name, diff)
	}

	// The deleted cluster's entry is held on its finalizer with purgeAfter = deletion + grace period, and its
	// directory is inventoried: what is kept, and what the purge will remove.
	purgeAfter := sc.waitForHeld(alpha, deletedAt)
	t.Logf("ScyllaDBBackupEntry %q is held until %s (%v after the ScyllaCluster's deletion)", alpha.entry, purgeAfter.UTC().Format(time.RFC3339), purgeAfter.Sub(deletedAt).Round(time.Millisecond))
	objects, bytes := sc.directorySize(alpha.clusterID)
	if objects != int64(len(alpha.keys)) {
		t.Fatalf("the directory of %q holds %d objects, its backup uploaded %d", alpha.name, objects, len(alpha.keys))
	}
	sc.waitForInventory(alpha, objects, bytes)

	// Until purgeAfter, the entry and every key of its directory stay.
	checks := 0
	for time.Until(purgeAfter) > clockSkew {
		e, err := scylla.ScyllaV1alpha1().ScyllaDBBackupEntries(ns).Get(ctx, alpha.entry, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("ScyllaDBBackupEntry %q is not there %v before its purgeAfter: %v", alpha.entry, time.Until(purgeAfter), err)
		}
		if !slices.Contains(e.Finalizers, naming.ScyllaDBBackupEntryFinalizer) {
			t.Fatalf("ScyllaDBBackupEntry %q lost its finalizer %v before its purgeAfter: %s", alpha.entry, time.Until(purgeAfter), describeEntry(e))
		}
		if diff := cmp.Diff(alpha.keys, sc.listDirectory(alpha.clusterID)); diff != "" {
			t.Fatalf("the directory of the deleted cluster %q changed %v before its purgeAfter (-before +now):\n%s", alpha.name, time.Until(purgeAfter), diff)
		}
		checks++
		time.Sleep(time.Second)
	}
	t.Logf("the entry and all %d keys of the deleted cluster's directory stayed through %d checks until %v before purgeAfter", len(alpha.keys), checks, clockSkew)

	// After purgeAfter the directory is purged and the entry goes.
	s.waitFor(time.Until(purgeAfter)+purgeTimeout, fmt.Sprintf("ScyllaDBBackupEntry %q to purge its directory and be gone after its purgeAfter", alpha.entry), func(ctx context.Context) (bool, error) {
		e, err := scylla.ScyllaV1alpha1().ScyllaDBBackupEntries(ns).Get(ctx, alpha.entry, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return false, fmt.Errorf("still there: %s", describeEntry(e))
	})
	if goneAt := time.Now(); goneAt.Before(purgeAfter.Add(-clockSkew)) {
		t.Errorf("ScyllaDBBackupEntry %q was gone at %s, before its purgeAfter %s", alpha.entry, goneAt.UTC().Format(time.RFC3339Nano), purgeAfter.UTC().Format(time.RFC3339))
	}
	if left := sc.listDirectory(alpha.clusterID); len(left) != 0 {
		t.Errorf("%d keys of the purged cluster %q remain in the bucket:\n  %s", len(left), alpha.name, strings.Join(left, "\n  "))
	}
	want := append(slices.Clone(beta.keys), kept.keys...)
	slices.Sort(want)
	if diff := cmp.Diff(want, sc.listAll()); diff != "" {
		t.Errorf("after the purge, the bucket is not exactly the other clusters' directories as listed before (-before +now):\n%s", diff)
	}
	if diff := cmp.Diff(beta.keys, sc.listDirectory(beta.clusterID)); diff != "" {
		t.Errorf("the directory of the cluster that still exists, %q, changed (-before +now):\n%s", beta.name, diff)
	}

	s.waitFor(stepTimeout, "the purge and the kept directory to be reported in events", func(ctx context.Context) (bool, error) {
		events, err := c.Clients.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		var missing []string
		for _, want := range []struct{ entry, reason string }{{alpha.entry, "DirectoryPurged"}, {kept.entry, "DirectoryKept"}} {
			if !slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
				return e.InvolvedObject.Kind == "ScyllaDBBackupEntry" && e.InvolvedObject.Name == want.entry && e.Reason == want.reason
			}) {
				missing = append(missing, want.reason+" of "+want.entry)
			}
		}
		if len(missing) != 0 {
			return false, fmt.Errorf("no event %s", strings.Join(missing, ", "))
		}
		return true, nil
	})
	s.waitFor(stepTimeout, fmt.Sprintf("ScyllaDBBackupBucket %q to count the one cluster left", bucketObjectName), func(ctx context.Context) (bool, error) {
		b, err := scylla.ScyllaV1alpha1().ScyllaDBBackupBuckets().Get(ctx, bucketObjectName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got, pending := ptr.Deref(b.Status.Clusters, -1), ptr.Deref(b.Status.EntriesPendingPurge, -1); got != 1 || pending != 0 {
			return false, fmt.Errorf("status.clusters is %d, status.entriesPendingPurge %d", got, pending)
		}
		return true, nil
	})

	sc.expectQuietAtRest()
}

// expectQuietAtRest watches a little over one resync period of the converged manager-controller: the S3 server must
// get nothing but bucket existence checks (at most one per resync), and the API no write from the manager-controller.
func (sc *scenario) expectQuietAtRest() {
	t := sc.t
	t.Helper()
	const window = resyncPeriod + 10*time.Second
	s3Before, err := sc.s.s3.Requests()
	if err != nil {
		t.Fatal(err)
	}
	mark, err := sc.c.ControlPlane.Audit.Mark()
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now().Add(window)
	sc.s.waitFor(window+10*time.Second, fmt.Sprintf("%v at rest", window), func(context.Context) (bool, error) {
		return time.Now().After(end), nil
	})
	s3After, err := sc.s.s3.Requests()
	if err != nil {
		t.Fatal(err)
	}
	heads := 0
	var other []string
	for _, r := range s3After[len(s3Before):] {
		if r.Operation == "s3_HeadBucket" && r.Bucket == sc.bucketName {
			heads++
			continue
		}
		other = append(other, fmt.Sprintf("%s %s/%s -> %d", r.Operation, r.Bucket, r.Key, r.Status))
	}
	// A window a little over one resync period holds one resync, two if it starts just before one.
	if len(other) != 0 || heads > 2 {
		t.Errorf("at rest for %v, the S3 server got %d existence checks of %q (want at most 2) and %d other requests (want none):\n  %s",
			window, heads, sc.bucketName, len(other), strings.Join(other, "\n  "))
	}
	events, err := sc.c.ControlPlane.Audit.EventsSince(mark)
	if err != nil {
		t.Fatal(err)
	}
	writes := framework.CountRequests(events, framework.UserAgentPrefix(managerControllerUserAgentPrefix), framework.Writes())
	if writes.Total() != 0 {
		t.Errorf("at rest for %v, the manager-controller made %d API writes, want none:\n%s", window, writes.Total(), writes)
	}
	t.Logf("at rest for %v: %d existence checks of the bucket, no other S3 request, no API write by the manager-controller", window, heads)
}

// releaseEntries removes the finalizers of the ScyllaDBBackupEntries left in namespace, directories untouched.
func releaseEntries(t *testing.T, c *framework.Cluster, namespace string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	scylla, err := scyllaclientset.NewForConfig(c.Clients.Config)
	if err != nil {
		t.Errorf("can't create the scylla.scylladb.com client: %v", err)
		return
	}
	entries, err := scylla.ScyllaV1alpha1().ScyllaDBBackupEntries(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Errorf("can't list the ScyllaDBBackupEntries left: %v", err)
		return
	}
	for _, e := range entries.Items {
		_, err := scylla.ScyllaV1alpha1().ScyllaDBBackupEntries(namespace).Patch(ctx, e.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("can't remove the finalizers of ScyllaDBBackupEntry %q: %v", e.Name, err)
		}
	}
}

// waitForHeld waits until the entry of bc, whose cluster was deleted at deletedAt, is held on its finalizer with
// status.purgeAfter = status.clusterDeletedAt + gracePeriod, clusterDeletedAt no earlier than deletedAt, and returns
// purgeAfter.
func (sc *scenario) waitForHeld(bc *backedUpCluster, deletedAt time.Time) time.Time {
	sc.t.Helper()
	scylla, ns := sc.scylla, sc.ns
	var purgeAfter time.Time
	sc.s.waitFor(stepTimeout, fmt.Sprintf("ScyllaDBBackupEntry %q to be held for the grace period, with status.purgeAfter", bc.entry), func(ctx context.Context) (bool, error) {
		e, err := scylla.ScyllaV1alpha1().ScyllaDBBackupEntries(ns).Get(ctx, bc.entry, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if e.DeletionTimestamp == nil || e.Status.PurgeAfter == nil || e.Status.ClusterDeletedAt == nil {
			return false, fmt.Errorf("not yet: %s", describeEntry(e))
		}
		if !slices.Contains(e.Finalizers, naming.ScyllaDBBackupEntryFinalizer) {
			return false, framework.StopPolling(fmt.Errorf("the entry being deleted lost its finalizer before the grace period ended: %s", describeEntry(e)))
		}
		wantPurgeAfter := e.Status.ClusterDeletedAt.Add(gracePeriod)
		if !e.Status.PurgeAfter.Time.Equal(wantPurgeAfter) {
			return false, framework.StopPolling(fmt.Errorf("status.purgeAfter %s is not status.clusterDeletedAt + %v = %s: %s",
				e.Status.PurgeAfter.UTC().Format(time.RFC3339), gracePeriod, wantPurgeAfter.UTC().Format(time.RFC3339), describeEntry(e)))
		}
		// The cluster went some seconds after the ScyllaCluster's deletion: its datacenter is deregistered first.
		if d := e.Status.ClusterDeletedAt.Sub(deletedAt); d < -clockSkew || d > stepTimeout {
			return false, framework.StopPolling(fmt.Errorf("status.clusterDeletedAt %s is %v from the ScyllaCluster's deletion at %s: %s",
				e.Status.ClusterDeletedAt.UTC().Format(time.RFC3339), d, deletedAt.UTC().Format(time.RFC3339), describeEntry(e)))
		}
		purgeAfter = e.Status.PurgeAfter.Time
		return true, nil
	})
	return purgeAfter
}

// waitForEntryGone waits until the ScyllaDBBackupEntry is gone.
func (sc *scenario) waitForEntryGone(entry string, timeout time.Duration, what string) {
	sc.t.Helper()
	sc.s.waitFor(timeout, what, func(ctx context.Context) (bool, error) {
		e, err := sc.scylla.ScyllaV1alpha1().ScyllaDBBackupEntries(sc.ns).Get(ctx, entry, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return false, fmt.Errorf("still there: %s", describeEntry(e))
	})
}

// waitForBackupScheduled waits until ScyllaCluster name rolled out, its ScyllaDBBackupEntry in the shared bucket is
// usable and holds its finalizer, and its backup is scheduled in ScyllaDB Manager.
func (sc *scenario) waitForBackupScheduled(name string) *backedUpCluster {
	t, scylla, s, ns, bucketObjectName := sc.t, sc.scylla, sc.s, sc.ns, sc.bucketObjectName
	t.Helper()
	bc := &backedUpCluster{name: name}
	what := fmt.Sprintf("ScyllaCluster %q to get one usable ScyllaDBBackupEntry in ScyllaDBBackupBucket %q and its backup scheduled in ScyllaDB Manager", name, bucketObjectName)
	s.waitFor(rolloutTimeout, what, func(ctx context.Context) (bool, error) {
		sdc, err := scylla.ScyllaV1alpha1().ScyllaDBDatacenters(ns).Get(ctx, naming.ScyllaDBDatacenterNameForScyllaCluster(name), metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("no ScyllaDBDatacenter: %w", err)
		}
		bc.sdcUID = sdc.UID
		bc.clusterID = naming.ScyllaDBManagerClusterID("ScyllaDBDatacenter", sdc.UID)
		entries, err := scylla.ScyllaV1alpha1().ScyllaDBBackupEntries(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		var own []scyllav1alpha1.ScyllaDBBackupEntry
		for _, e := range entries.Items {
			if e.Spec.ClusterRef.Name == sdc.Name {
				own = append(own, e)
			}
		}
		if len(own) != 1 {
			return false, fmt.Errorf("%d ScyllaDBBackupEntries reference ScyllaDBDatacenter %q, want 1", len(own), sdc.Name)
		}
		e := &own[0]
		bc.entry = e.Name
		wantSpec := scyllav1alpha1.ScyllaDBBackupEntrySpec{
			BucketRef:        bucketObjectName,
			ClusterRef:       scyllav1alpha1.ScyllaDBBackupEntryClusterReference{Kind: "ScyllaDBDatacenter", Name: sdc.Name, UID: sdc.UID},
			ManagerClusterID: bc.clusterID,
		}
		if diff := cmp.Diff(wantSpec, e.Spec); diff != "" {
			return false, framework.StopPolling(fmt.Errorf("ScyllaDBBackupEntry %q has an unexpected spec (-want +got):\n%s", e.Name, diff))
		}
		if !slices.Contains(e.Finalizers, naming.ScyllaDBBackupEntryFinalizer) {
			return false, fmt.Errorf("ScyllaDBBackupEntry %q has no finalizer yet", e.Name)
		}
		if err := conditionTrue(e.Status.Conditions, "Available"); err != nil {
			return false, fmt.Errorf("ScyllaDBBackupEntry %q: %w", e.Name, err)
		}
		st, err := s.fake.State(ctx)
		if err != nil {
			return false, err
		}
		if backupTaskOf(st, bc.clusterID) == nil {
			return false, fmt.Errorf("ScyllaDB Manager has no backup %q of cluster %s", backupName, bc.clusterID)
		}
		return true, nil
	})
	return bc
}

// runBackup starts the cluster's backup in the fake ScyllaDB Manager, which uploads it before it answers, and
// returns the keys of the cluster's directory, checking that they are those the run uploaded and fill the three
// prefixes.
func (sc *scenario) runBackup(bc *backedUpCluster) []string {
	t, s := sc.t, sc.s
	t.Helper()
	ctx := t.Context()
	st, err := s.fake.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	task := backupTaskOf(st, bc.clusterID)
	if task == nil {
		t.Fatalf("ScyllaDB Manager has no backup %q of cluster %s", backupName, bc.clusterID)
	}
	if err := s.manager.StartTask(ctx, bc.clusterID, managerclient.TaskTypeBackup, task.ID, managerclient.StartTaskOptions{}); err != nil {
		t.Fatalf("can't start backup %s of ScyllaCluster %q: %v", task.ID, bc.name, err)
	}
	st, err = s.fake.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	task = backupTaskOf(st, bc.clusterID)
	if task == nil || len(task.Runs) == 0 {
		t.Fatalf("backup %q of cluster %s has no run after it was started", backupName, bc.clusterID)
	}
	var uploaded []string
	for _, u := range task.Runs[0].Uploads {
		if u.Error != "" {
			t.Fatalf("the backup of ScyllaCluster %q failed to upload to %s: %s", bc.name, u.Location, u.Error)
		}
		uploaded = append(uploaded, u.Keys...)
	}
	slices.Sort(uploaded)
	keys := sc.listDirectory(bc.clusterID)
	if len(keys) == 0 {
		t.Fatalf("the backup of ScyllaCluster %q put nothing into its directory (run %s %s)", bc.name, task.Runs[0].ID, task.Runs[0].Status)
	}
	if diff := cmp.Diff(uploaded, keys); diff != "" {
		t.Fatalf("the directory of ScyllaCluster %q is not what its backup uploaded (-uploaded +listed):\n%s", bc.name, diff)
	}
	prefixes, err := objectstore.ClusterPrefixes(bc.clusterID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prefixes {
		if !slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, p) }) {
			t.Fatalf("the backup of ScyllaCluster %q put nothing under %s", bc.name, p)
		}
	}
	return keys
}

// backupTaskOf returns the live backup task of the ScyllaDB Manager cluster, or nil.
func backupTaskOf(st fakescyllamanager.State, clusterID string) *fakescyllamanager.TaskState {
	for i := range st.Tasks {
		t := &st.Tasks[i]
		if t.ClusterID == clusterID && t.Type == managerBackup && t.Name == backupName && !t.Deleted {
			return t
		}
	}
	return nil
}

// listDirectory returns the sorted keys of the directory of ScyllaDB Manager cluster clusterID in the shared bucket.
func (sc *scenario) listDirectory(clusterID string) []string {
	t := sc.t
	t.Helper()
	prefixes, err := objectstore.ClusterPrefixes(clusterID)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, p := range prefixes {
		k, err := listKeys(t.Context(), sc.store, sc.bucketName, p)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k...)
	}
	slices.Sort(keys)
	return keys
}

// listAll returns every key of the shared bucket, sorted.
func (sc *scenario) listAll() []string {
	t := sc.t
	t.Helper()
	keys, err := listKeys(t.Context(), sc.store, sc.bucketName, "")
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// listKeys lists the keys of the shared bucket under prefix in lexical order.
func listKeys(ctx context.Context, store objectstore.Interface, bucketName, prefix string) ([]string, error) {
	objects, err := listObjects(ctx, store, bucketName, prefix)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(objects))
	for _, o := range objects {
		keys = append(keys, o.Key)
	}
	return keys, nil
}

// listObjects lists the objects of the shared bucket under prefix, page by page, in lexical order.
func listObjects(ctx context.Context, store objectstore.Interface, bucketName, prefix string) ([]objectstore.Object, error) {
	var objects []objectstore.Object
	after := ""
	for {
		page, err := store.ListObjects(ctx, bucketName, prefix, after, 1000)
		if err != nil {
			return nil, fmt.Errorf("can't list %q in bucket %q: %w", prefix, bucketName, err)
		}
		objects = append(objects, page.Objects...)
		if !page.More || len(page.Objects) == 0 {
			return objects, nil
		}
		after = page.Objects[len(page.Objects)-1].Key
	}
}

// directorySize returns how many objects and bytes the directory of ScyllaDB Manager cluster clusterID holds.
func (sc *scenario) directorySize(clusterID string) (int64, int64) {
	t := sc.t
	t.Helper()
	prefixes, err := objectstore.ClusterPrefixes(clusterID)
	if err != nil {
		t.Fatal(err)
	}
	var objects, bytes int64
	for _, p := range prefixes {
		listed, err := listObjects(t.Context(), sc.store, sc.bucketName, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range listed {
			objects++
			bytes += o.Size
		}
	}
	return objects, bytes
}

// waitForInventory waits until the entry of bc, whose cluster is deleted, reports a finished inventory of objects
// objects and bytes bytes.
func (sc *scenario) waitForInventory(bc *backedUpCluster, objects, bytes int64) {
	sc.t.Helper()
	sc.s.waitFor(stepTimeout, fmt.Sprintf("ScyllaDBBackupEntry %q to report the inventory of its directory: %d objects, %d bytes", bc.entry, objects, bytes), func(ctx context.Context) (bool, error) {
		e, err := sc.scylla.ScyllaV1alpha1().ScyllaDBBackupEntries(sc.ns).Get(ctx, bc.entry, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		op := e.Status.LastOperation
		if op == nil || op.Type != scyllav1alpha1.ScyllaDBBackupEntryOperationTypeInventory || op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateSucceeded {
			return false, fmt.Errorf("no finished inventory: %s", describeEntry(e))
		}
		if got := [2]int64{ptr.Deref(e.Status.Objects, -1), ptr.Deref(e.Status.Bytes, -1)}; got != [2]int64{objects, bytes} {
			return false, framework.StopPolling(fmt.Errorf("the inventory counted %d objects, %d bytes: %s", got[0], got[1], describeEntry(e)))
		}
		if _, ok := e.Annotations[naming.ScyllaDBBackupInventoryCursorAnnotation]; ok {
			return false, framework.StopPolling(fmt.Errorf("the finished inventory left its cursor: %s", describeEntry(e)))
		}
		return true, nil
	})
}

// conditionTrue returns an error describing the condition unless it is True.
func conditionTrue(conditions []metav1.Condition, typ string) error {
	c := meta.FindStatusCondition(conditions, typ)
	switch {
	case c == nil:
		return fmt.Errorf("no %s condition yet", typ)
	case c.Status != metav1.ConditionTrue:
		return fmt.Errorf("%s is %s (%s): %s", typ, c.Status, c.Reason, c.Message)
	}
	return nil
}

// describeEntry summarizes an entry's deletion, finalizers and status for messages.
func describeEntry(e *scyllav1alpha1.ScyllaDBBackupEntry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ScyllaDBBackupEntry %q deletionTimestamp=%v finalizers=%v annotations=%v", e.Name, e.DeletionTimestamp, e.Finalizers, e.Annotations)
	fmt.Fprintf(&b, " clusterDeletedAt=%v purgeAfter=%v objects=%d bytes=%d", e.Status.ClusterDeletedAt, e.Status.PurgeAfter, ptr.Deref(e.Status.Objects, -1), ptr.Deref(e.Status.Bytes, -1))
	if op := e.Status.LastOperation; op != nil {
		fmt.Fprintf(&b, " lastOperation={%s %s %s deleted=%d %q}", op.Type, op.State, op.Time.UTC().Format(time.RFC3339), ptr.Deref(op.ObjectsDeleted, 0), op.Message)
	}
	for _, c := range e.Status.Conditions {
		fmt.Fprintf(&b, " %s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}

// describeBucket renders the ScyllaDBBackupBucket as YAML, without managed fields.
func describeBucket(ctx context.Context, scylla scyllaclientset.Interface, bucketObjectName string) string {
	b, err := scylla.ScyllaV1alpha1().ScyllaDBBackupBuckets().Get(ctx, bucketObjectName, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	b.ManagedFields = nil
	data, err := yaml.Marshal(b)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// describeKeys lists the shared bucket's keys for failure messages.
func describeKeys(ctx context.Context, store objectstore.Interface, bucketName string) string {
	keys, err := listKeys(ctx, store, bucketName, "")
	if err != nil {
		return err.Error()
	}
	if len(keys) == 0 {
		return "(empty)"
	}
	return strings.Join(keys, "\n")
}

// newScyllaCluster returns a ScyllaCluster of one rack with one small node that starts without waiting.
func newScyllaCluster(namespace, name string, backups ...scyllav1.BackupTaskSpec) *scyllav1.ScyllaCluster {
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	return &scyllav1.ScyllaCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: scyllav1.ScyllaClusterSpec{
			Version:         scyllaVersion,
			AgentVersion:    agentVersion,
			MinReadySeconds: ptr.To[int32](0),
			Datacenter: scyllav1.DatacenterSpec{
				Name: datacenterName,
				Racks: []scyllav1.RackSpec{{
					Name:      "a",
					Members:   1,
					Storage:   scyllav1.Storage{Capacity: "1Gi"},
					Resources: corev1.ResourceRequirements{Requests: small.DeepCopy(), Limits: small.DeepCopy()},
				}},
			},
			Backups: backups,
		},
	}
}

func backupTask(name, cron string, location ...string) scyllav1.BackupTaskSpec {
	return scyllav1.BackupTaskSpec{
		TaskSpec: scyllav1.TaskSpec{Name: name, SchedulerTaskSpec: scyllav1.SchedulerTaskSpec{Cron: ptr.To(cron)}},
		Location: location,
	}
}
