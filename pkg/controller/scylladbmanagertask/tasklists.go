package scylladbmanagertask

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/scyllakube/managerclient"
)

// defaultTaskListTTL is how long a cluster's task list read from ScyllaDB Manager serves the syncs of its tasks. It
// only has to cover a burst: the informer resync and the status refresh sync every task at once, and a worker gets
// through the tasks of a cluster in a few seconds. It must stay well below the shortest --resync-period (1m), so that
// every resync reads ScyllaDB Manager again: a task changed or deleted there by hand is then seen by the first resync
// or status refresh after the change, at most min(--resync-period, defaultStatusRefreshInterval) later.
const defaultTaskListTTL = 15 * time.Second

// taskLists memoises ScyllaDB Manager's task list (GET /cluster/{id}/tasks?all=true) of each cluster.
//
// Every ScyllaDBManagerTask of a cluster needs the same list, which carries all that the controller compares and
// reflects (properties, schedule, labels, run status, next activation). A burst of syncs of a cluster's tasks shares
// one read while it is fresh (ttl), and concurrent syncs wait for the one read in flight instead of making their own.
// The controller's own creates and updates invalidate the memo (invalidate): ScyllaDB Manager fills in and normalises
// what was sent, and only its list tells the next activation, so the status of a written task comes from a list read
// after the write, never from a guess. Deletes only remove the task (remove), which needs no guess. A 404 invalidates
// the cluster's memo: the cluster (or a task) is gone from ScyllaDB Manager, so the rest of the memo is suspect too;
// the controller invalidates it after any failed write for the same reason. Changes made by others (sctool, another
// client) are seen once the TTL passes.
type taskLists struct {
	ttl   time.Duration
	clock func() time.Time
	list  func(ctx context.Context, clusterID string) ([]managerclient.TaskListItem, error)

	mu sync.Mutex
	// seq orders the starts of reads and the changes of the memo: a read is memoised only when it started after the
	// entry's last change, so that a read in flight during a write can't bring back what the write changed.
	seq     uint64
	entries map[string]*taskListEntry
}

// taskListEntry is the memoised task list of one cluster.
type taskListEntry struct {
	// fetchMu is held while the list is read, so that concurrent syncs of the cluster's tasks share one read.
	fetchMu sync.Mutex

	// The fields below are guarded by taskLists.mu.
	valid   bool
	fetched time.Time
	items   []managerclient.TaskListItem
	// changed is the taskLists.seq of the last invalidate or remove.
	changed uint64
}

func newTaskLists(ttl time.Duration, clock func() time.Time, list func(ctx context.Context, clusterID string) ([]managerclient.TaskListItem, error)) *taskLists {
	return &taskLists{ttl: ttl, clock: clock, list: list, entries: map[string]*taskListEntry{}}
}

// get returns the task list of the cluster clusterID, from the memo while it is fresh. The items are shared with
// the memo: callers must not change what their maps, slices and pointers refer to.
func (l *taskLists) get(ctx context.Context, clusterID string) ([]managerclient.TaskListItem, error) {
	e := l.entry(clusterID)
	e.fetchMu.Lock()
	defer e.fetchMu.Unlock()

	if items, ok := l.fresh(e); ok {
		return items, nil
	}

	// The list describes ScyllaDB Manager as of the request at the latest; counting its age from before the request
	// errs on the fresh side of nothing.
	l.mu.Lock()
	l.seq++
	start, startSeq := l.clock(), l.seq
	l.mu.Unlock()
	items, err := l.list(ctx, clusterID)
	if err != nil {
		if managerclient.IsNotFound(err) {
			l.invalidate(clusterID)
		}
		return nil, err
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if startSeq > e.changed {
		e.valid, e.fetched, e.items = true, start, slices.Clone(items)
	}
	return slices.Clone(items), nil
}

// entry returns the memo entry of clusterID, adding it when there is none. Expired and invalid entries of other
// clusters are dropped on the way, so that clusters no task refers to any more do not stay in memory.
func (l *taskLists) entry(clusterID string) *taskListEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock()
	for id, e := range l.entries {
		// An entry being read (its fetchMu held) is about to be fresh again.
		if id != clusterID && (!e.valid || now.Sub(e.fetched) >= l.ttl) && e.fetchMu.TryLock() {
			delete(l.entries, id)
			e.fetchMu.Unlock()
		}
	}
	e, ok := l.entries[clusterID]
	if !ok {
		e = &taskListEntry{}
		l.entries[clusterID] = e
	}
	return e
}

func (l *taskLists) fresh(e *taskListEntry) ([]managerclient.TaskListItem, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !e.valid || l.clock().Sub(e.fetched) >= l.ttl {
		return nil, false
	}
	return slices.Clone(e.items), true
}

// invalidate forgets the memo of clusterID, after the controller wrote to it or found it gone: the next get reads
// ScyllaDB Manager, and no read that started before is memoised.
func (l *taskLists) invalidate(clusterID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	if e, ok := l.entries[clusterID]; ok {
		e.valid, e.items, e.changed = false, nil, l.seq
	}
}

// remove drops the task taskID, which the controller just deleted, from the memo of clusterID, if there is one; no
// read that started before the delete is memoised.
func (l *taskLists) remove(clusterID, taskID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	e, ok := l.entries[clusterID]
	if !ok {
		return
	}
	e.changed = l.seq
	if e.valid {
		e.items = slices.DeleteFunc(slices.Clone(e.items), func(it managerclient.TaskListItem) bool { return it.ID == taskID })
	}
}
