package scylladbmanagertask

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/scyllakube/managerclient"
)

// countingLister serves task lists per cluster and counts the reads.
type countingLister struct {
	reads atomic.Int32
	// release, when set, is waited for by every read, so that tests can hold reads in flight.
	release chan struct{}

	mu    sync.Mutex
	items map[string][]managerclient.TaskListItem
	err   error
}

func (l *countingLister) list(_ context.Context, clusterID string) ([]managerclient.TaskListItem, error) {
	l.reads.Add(1)
	if l.release != nil {
		<-l.release
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return nil, l.err
	}
	return append([]managerclient.TaskListItem(nil), l.items[clusterID]...), nil
}

func item(id string) managerclient.TaskListItem {
	return managerclient.TaskListItem{Task: managerclient.Task{ID: id}}
}

func ids(items []managerclient.TaskListItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

func TestTaskListsServeAFreshListWithoutReadingAgain(t *testing.T) {
	t.Parallel()

	clock := &testClock{now: testStart}
	lister := &countingLister{items: map[string][]managerclient.TaskListItem{"a": {item("1")}, "b": {item("2")}}}
	lists := newTaskLists(time.Minute, clock.Now, lister.list)

	for range 3 {
		got, err := lists.get(t.Context(), "a")
		if err != nil || !cmp.Equal(ids(got), []string{"1"}) {
			t.Fatalf("unexpected list %v, %v", ids(got), err)
		}
	}
	if _, err := lists.get(t.Context(), "b"); err != nil {
		t.Fatal(err)
	}
	if n := lister.reads.Load(); n != 2 {
		t.Errorf("expected one read per cluster, got %d", n)
	}

	clock.Advance(time.Minute)
	if _, err := lists.get(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	if n := lister.reads.Load(); n != 3 {
		t.Errorf("expected an expired list to be read again, got %d reads", n)
	}
}

func TestTaskListsShareOneReadBetweenConcurrentSyncs(t *testing.T) {
	t.Parallel()

	clock := &testClock{now: testStart}
	lister := &countingLister{items: map[string][]managerclient.TaskListItem{"a": {item("1")}}, release: make(chan struct{})}
	lists := newTaskLists(time.Minute, clock.Now, lister.list)

	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, err := lists.get(t.Context(), "a"); err != nil {
				t.Error(err)
			}
		})
	}
	// Let the first read through only once every sync is waiting for it.
	time.Sleep(10 * time.Millisecond)
	close(lister.release)
	wg.Wait()
	if n := lister.reads.Load(); n != 1 {
		t.Errorf("expected one read for ten concurrent syncs, got %d", n)
	}
}

func TestTaskListsFollowOwnWritesAndForgetOn404(t *testing.T) {
	t.Parallel()

	clock := &testClock{now: testStart}
	lister := &countingLister{items: map[string][]managerclient.TaskListItem{"a": {item("1"), item("2")}}}
	lists := newTaskLists(time.Minute, clock.Now, lister.list)
	if _, err := lists.get(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}

	// A delete needs no read to be known.
	lists.remove("a", "1")
	got, err := lists.get(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"2"}, ids(got)); diff != "" {
		t.Errorf("unexpected memo after a delete (-want +got):\n%s", diff)
	}
	if n := lister.reads.Load(); n != 1 {
		t.Errorf("expected the memo to follow a delete without reading, got %d reads", n)
	}

	// A create or update is read back: ScyllaDB Manager fills in what was not sent.
	lister.items["a"] = []managerclient.TaskListItem{item("2"), item("3")}
	lists.invalidate("a")
	got, err = lists.get(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"2", "3"}, ids(got)); diff != "" {
		t.Errorf("unexpected list after a write (-want +got):\n%s", diff)
	}
	if n := lister.reads.Load(); n != 2 {
		t.Errorf("expected a write to make the next get read, got %d reads", n)
	}

	lister.err = &managerclient.APIError{StatusCode: http.StatusNotFound, Message: "get resource: not found"}
	clock.Advance(time.Minute)
	if _, err := lists.get(t.Context(), "a"); !managerclient.IsNotFound(err) {
		t.Fatalf("expected a 404, got %v", err)
	}
	lister.err = nil
	lister.items["a"] = nil
	clock.Advance(-time.Minute)
	if got, err := lists.get(t.Context(), "a"); err != nil || len(got) != 0 {
		t.Errorf("expected the 404 to drop the memo, got %v, %v", ids(got), err)
	}
}

func TestTaskListsDoNotMemoiseAReadThatStartedBeforeAWrite(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name  string
		write func(lists *taskLists)
	}{
		{"create or update", func(lists *taskLists) { lists.invalidate("a") }},
		{"delete", func(lists *taskLists) { lists.remove("a", "1") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			clock := &testClock{now: testStart}
			lister := &countingLister{items: map[string][]managerclient.TaskListItem{"a": {item("1")}}, release: make(chan struct{})}
			lists := newTaskLists(time.Minute, clock.Now, lister.list)

			// Another sync's read is in flight while this sync writes; what it read predates the write.
			done := make(chan struct{})
			go func() {
				defer close(done)
				if _, err := lists.get(t.Context(), "a"); err != nil {
					t.Error(err)
				}
			}()
			for lister.reads.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
			tc.write(lists)
			lister.mu.Lock()
			lister.items["a"] = []managerclient.TaskListItem{item("2")}
			lister.mu.Unlock()
			close(lister.release)
			<-done

			got, err := lists.get(t.Context(), "a")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"2"}, ids(got)); diff != "" {
				t.Errorf("the read from before the write was memoised (-want +got):\n%s", diff)
			}
			if n := lister.reads.Load(); n != 2 {
				t.Errorf("expected a read after the write, got %d reads", n)
			}
		})
	}
}

func TestTaskListsDoNotMemoiseErrors(t *testing.T) {
	t.Parallel()

	clock := &testClock{now: testStart}
	lister := &countingLister{err: errors.New("connection refused")}
	lists := newTaskLists(time.Minute, clock.Now, lister.list)
	if _, err := lists.get(t.Context(), "a"); err == nil {
		t.Fatal("expected an error")
	}
	lister.err = nil
	if _, err := lists.get(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	if n := lister.reads.Load(); n != 2 {
		t.Errorf("expected the failed read to be retried, got %d reads", n)
	}

	lists.invalidate("a")
	if _, err := lists.get(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	if n := lister.reads.Load(); n != 3 {
		t.Errorf("expected an invalidated memo to be read again, got %d reads", n)
	}
}

func TestTaskListsForgetExpiredClusters(t *testing.T) {
	t.Parallel()

	clock := &testClock{now: testStart}
	lister := &countingLister{}
	lists := newTaskLists(time.Minute, clock.Now, lister.list)
	for _, id := range []string{"a", "b", "c"} {
		if _, err := lists.get(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(2 * time.Minute)
	if _, err := lists.get(t.Context(), "d"); err != nil {
		t.Fatal(err)
	}
	lists.mu.Lock()
	defer lists.mu.Unlock()
	if len(lists.entries) != 1 {
		t.Errorf("expected only the memo of d to stay, got %d entries", len(lists.entries))
	}
}
