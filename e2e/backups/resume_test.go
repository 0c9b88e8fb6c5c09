//go:build e2e

package backups

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
)

const (
	// purgeBatch is how many keys one purge batch of the manager-controller deletes (one S3 DeleteObjects).
	purgeBatch = 999
	// extraDoomedKeys are uploaded into the doomed cluster's directory besides its backup, so that its purge takes
	// three batches.
	extraDoomedKeys = 2*purgeBatch + 500
)

// TestPurgeKilledBetweenBatchesResumesFromItsCursor: a deleted cluster's directory holds more than two purge batches
// of keys, next to another cluster's directory and keys just outside the deleted one's prefixes. The
// manager-controller reaches versitygw through a TCP gate that passes the first DeleteObjects and holds the second:
// the purge is then between its first and second batch, with its cursor recorded. The manager-controller is
// SIGKILLed there and the held request dropped, so versitygw never sees it. A new replica resumes the purge from the
// cursor, not from the start: its first listing starts after the cursor and it deletes only the two batches left.
// In the end exactly the deleted cluster's keys are gone and every other key is as it was.
func TestPurgeKilledBetweenBatchesResumesFromItsCursor(t *testing.T) {
	sc := newScenarioWith(t, scenarioOptions{gated: true}, "e2e-resume", "doomed", "survivor")
	ctx := t.Context()
	s, scylla, ns, gate := sc.s, sc.scylla, sc.ns, sc.gate
	doomed, survivor := sc.clusters["doomed"], sc.clusters["survivor"]

	// Keys of the doomed directory besides its backup, spread over its three prefixes; more of the survivor's; and
	// keys the purge must never touch although they look close: another ID sharing all but the last character,
	// and names just outside the doomed directory's prefixes.
	var extra []string
	for i := range extraDoomedKeys {
		kind := []string{"meta", "schema", "sst", "sst", "sst"}[i%5]
		extra = append(extra, fmt.Sprintf("backup/%s/cluster/%s/dc/%s/node/n1/extra/object-%05d", kind, doomed.clusterID, datacenterName, i))
	}
	for i := range 200 {
		extra = append(extra, fmt.Sprintf("backup/sst/cluster/%s/dc/%s/node/n1/extra/object-%05d", survivor.clusterID, datacenterName, i))
	}
	neighbour := doomed.clusterID[:len(doomed.clusterID)-1] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", doomed.clusterID[len(doomed.clusterID)-1])+1)%16])
	extra = append(extra,
		"backup/sst/cluster/"+neighbour+"/dc/dc1/node/n1/object-00000",
		"backup/meta/cluster/"+neighbour+"/dc/dc1/node/n1/manifest.json.gz",
		"backup/sst/cluster/"+doomed.clusterID+"x/object-00000",
		"backup/sst/cluster/"+doomed.clusterID+"-old/object-00000",
		"backup/task/cluster/"+doomed.clusterID+"/task.json",
	)
	uploadKeys(t, sc.store, sc.bucketName, extra)

	doomedKeys := sc.listDirectory(doomed.clusterID)
	if want := len(doomed.keys) + extraDoomedKeys; len(doomedKeys) != want {
		t.Fatalf("the doomed directory holds %d keys, want %d", len(doomedKeys), want)
	}
	before := sc.listAll()
	others := slices.DeleteFunc(slices.Clone(before), func(k string) bool { return slices.Contains(doomedKeys, k) })
	t.Logf("the bucket holds %d keys: %d of the doomed cluster's directory (%d purge batches), %d others", len(before), len(doomedKeys), (len(doomedKeys)+purgeBatch-1)/purgeBatch, len(others))
	objects, bytes := sc.directorySize(doomed.clusterID)

	// The first DeleteObjects of the bucket goes through, the second is held.
	isDelete := func(method, target string) bool {
		u, err := url.ParseRequestURI(target)
		return err == nil && method == "POST" && strings.Trim(u.Path, "/") == sc.bucketName && u.Query().Has("delete")
	}
	hold := gate.Arm(isDelete, 1)
	defer hold.Release()

	deletedAt := time.Now()
	if err := scylla.ScyllaV1().ScyllaClusters(ns).Delete(ctx, doomed.name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("can't delete ScyllaCluster %q: %v", doomed.name, err)
	}
	purgeAfter := sc.waitForHeld(doomed, deletedAt)
	sc.waitForInventory(doomed, objects, bytes)
	t.Logf("ScyllaDBBackupEntry %q inventoried %d objects, %d bytes and is held until %s", doomed.entry, objects, bytes, purgeAfter.UTC().Format(time.RFC3339))

	if err := hold.Wait(ctx, time.Until(purgeAfter)+purgeTimeout); err != nil {
		t.Fatalf("the purge's second DeleteObjects never came: %v", err)
	}
	// The first batch is deleted and recorded: the cursor, and the progress in lastOperation.
	var cursor string
	s.waitFor(stepTimeout, fmt.Sprintf("ScyllaDBBackupEntry %q to record its purge's first batch", doomed.entry), func(ctx context.Context) (bool, error) {
		e, err := scylla.ScyllaV1alpha1().ScyllaDBBackupEntries(ns).Get(ctx, doomed.entry, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		op := e.Status.LastOperation
		if op == nil || op.Type != scyllav1alpha1.ScyllaDBBackupEntryOperationTypePurge || op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateRunning || ptr.Deref(op.ObjectsDeleted, 0) != purgeBatch {
			return false, fmt.Errorf("no running purge with one batch deleted: %s", describeEntry(e))
		}
		cursor = e.Annotations[naming.ScyllaDBBackupPurgeCursorAnnotation]
		if !slices.Contains(doomedKeys, cursor) {
			return false, framework.StopPolling(fmt.Errorf("the purge cursor %q is not a key of the directory: %s", cursor, describeEntry(e)))
		}
		return true, nil
	})
	if left := sc.listDirectory(doomed.clusterID); len(left) != len(doomedKeys)-purgeBatch {
		t.Fatalf("after one batch, %d keys of the doomed directory are left, want %d", len(left), len(doomedKeys)-purgeBatch)
	}

	// SIGKILL between the batches; the held request is dropped, never reaching versitygw.
	s.killManagerController()
	hold.Drop()
	if left := sc.listDirectory(doomed.clusterID); len(left) != len(doomedKeys)-purgeBatch {
		t.Fatalf("the dropped DeleteObjects reached versitygw: %d keys left, want %d", len(left), len(doomedKeys)-purgeBatch)
	}
	mark := len(gate.Requests())
	s.startManagerController()
	sc.waitForEntryGone(doomed.entry, purgeTimeout, fmt.Sprintf("ScyllaDBBackupEntry %q to resume its purge and be gone", doomed.entry))

	if left := sc.listDirectory(doomed.clusterID); len(left) != 0 {
		t.Errorf("%d keys of the purged cluster %q remain in the bucket, for example %q", len(left), doomed.name, left[:min(5, len(left))])
	}
	if diff := cmp.Diff(others, sc.listAll()); diff != "" {
		t.Errorf("after the purge, the bucket is not exactly the other keys as listed before (-before +now):\n%s", diff)
	}

	// The new replica resumed after the cursor: its first listing of the directory starts there, and it deleted the
	// two batches left, no more.
	prefixes, err := objectstore.ClusterPrefixes(doomed.clusterID)
	if err != nil {
		t.Fatal(err)
	}
	var lists []string
	deletes := 0
	for _, r := range gate.Requests()[mark:] {
		u, err := url.ParseRequestURI(r.Target)
		if err != nil || strings.Trim(u.Path, "/") != sc.bucketName {
			continue
		}
		q := u.Query()
		switch {
		case r.Method == "POST" && q.Has("delete"):
			deletes++
		case r.Method == "GET" && q.Get("list-type") == "2" && slices.Contains(prefixes, q.Get("prefix")):
			lists = append(lists, fmt.Sprintf("prefix=%s start-after=%s", q.Get("prefix"), q.Get("start-after")))
		}
	}
	cursorPrefix := prefixes[slices.IndexFunc(prefixes, func(p string) bool { return strings.HasPrefix(cursor, p) })]
	if want := fmt.Sprintf("prefix=%s start-after=%s", cursorPrefix, cursor); len(lists) == 0 || lists[0] != want {
		t.Errorf("the resumed purge's first listing is not after the cursor: want %q, got %q", want, lists)
	}
	if want := (len(doomedKeys) - purgeBatch + purgeBatch - 1) / purgeBatch; deletes != want {
		t.Errorf("the resumed purge sent %d DeleteObjects, want %d (the batches left after the cursor)", deletes, want)
	}
	requests, err := s.s3.Requests()
	if err != nil {
		t.Fatal(err)
	}
	served := 0
	for _, r := range requests {
		if r.Operation == "s3_DeleteObjects" && r.Bucket == sc.bucketName {
			served++
		}
	}
	if want := (len(doomedKeys) + purgeBatch - 1) / purgeBatch; served != want {
		t.Errorf("versitygw served %d DeleteObjects of the bucket, want %d: one per batch, none repeated", served, want)
	}
	t.Logf("the resumed purge listed %q first and sent %d DeleteObjects; versitygw served %d in all", lists[:min(3, len(lists))], deletes, served)

	// The progress survived the kill: the purge reports every object deleted, across both replicas.
	s.waitFor(stepTimeout, "the DirectoryPurged event to count both replicas' deletions", func(ctx context.Context) (bool, error) {
		events, err := sc.c.Clients.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		want := fmt.Sprintf("Purged %d objects", len(doomedKeys))
		if !slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.InvolvedObject.Name == doomed.entry && e.Reason == "DirectoryPurged" && strings.HasPrefix(e.Message, want)
		}) {
			return false, fmt.Errorf("no DirectoryPurged event of %q saying %q", doomed.entry, want)
		}
		return true, nil
	})
}

// uploadKeys puts a small object under each of keys, a few at a time.
func uploadKeys(t *testing.T, store objectstore.Interface, bucketName string, keys []string) {
	t.Helper()
	const workers = 8
	ctx := t.Context()
	work := make(chan string)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				if err := store.PutObject(ctx, bucketName, k, []byte("extra object "+k)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	start := time.Now()
	for _, k := range keys {
		select {
		case work <- k:
		case err := <-errs:
			close(work)
			wg.Wait()
			t.Fatalf("can't upload: %v", err)
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatalf("can't upload: %v", err)
	default:
	}
	t.Logf("uploaded %d keys in %v", len(keys), time.Since(start).Round(time.Millisecond))
}
