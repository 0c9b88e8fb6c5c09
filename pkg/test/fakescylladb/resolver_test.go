package fakescylladb

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scyllakube/scylla-operator/pkg/scyllaclient"
)

// mapResolver resolves the names of a map and remembers what it was asked.
type mapResolver struct {
	names map[string][]string

	lock  sync.Mutex
	asked []string
}

func (r *mapResolver) Resolve(_ context.Context, name string) ([]string, error) {
	r.lock.Lock()
	r.asked = append(r.asked, name)
	r.lock.Unlock()
	if name == "broken" {
		return nil, errors.New("can't reach the resolver")
	}
	addrs, ok := r.names[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, ErrNotFound)
	}
	return addrs, nil
}

func (r *mapResolver) askedNames() []string {
	r.lock.Lock()
	defer r.lock.Unlock()
	return slices.Clone(r.asked)
}

func TestResolverClientAndHandlerSpeakOneProtocol(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("GET /dns/{namespace}", NewResolverHandler(func(req *http.Request, name string) ([]string, error) {
		switch name {
		case "seed":
			return []string{"10.0.0.1", req.PathValue("namespace")}, nil
		case "empty":
			return nil, nil
		case "broken":
			return nil, errors.New("the API server is down")
		}
		return nil, fmt.Errorf("%s: %w", name, ErrNotFound)
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	tests := []struct {
		name         string
		url          string
		resolve      string
		want         []string
		wantNotFound bool
		wantErr      string
	}{
		{name: "a known name answers its addresses", url: srv.URL + "/dns/db", resolve: "seed", want: []string{"10.0.0.1", "db"}},
		{name: "the resolver's path reaches the handler", url: srv.URL + "/dns/other", resolve: "seed", want: []string{"10.0.0.1", "other"}},
		{name: "an unknown name is not found", url: srv.URL + "/dns/db", resolve: "nope.db.svc", wantNotFound: true, wantErr: `can't resolve "nope.db.svc": nope.db.svc: not found: not found`},
		{name: "a name without addresses is not found", url: srv.URL + "/dns/db", resolve: "empty", wantNotFound: true, wantErr: `can't resolve "empty": empty has no addresses: not found: not found`},
		{name: "a failing resolver is an error, not a missing name", url: srv.URL + "/dns/db", resolve: "broken", wantErr: `can't resolve "broken": resolver returned 500: the API server is down`},
		{name: "another path answers 404", url: srv.URL + "/elsewhere", resolve: "seed", wantNotFound: true, wantErr: `can't resolve "seed": 404 page not found: not found`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := NewResolverClient(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Resolve(context.Background(), tc.resolve)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("want error %q, got %v (%v)", tc.wantErr, err, got)
				}
				if errors.Is(err, ErrNotFound) != tc.wantNotFound {
					t.Errorf("error %v: wraps ErrNotFound = %v, want %v", err, !tc.wantNotFound, tc.wantNotFound)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("addresses differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolverHandlerNeedsAName(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(NewResolverHandler(func(*http.Request, string) ([]string, error) { return []string{"10.0.0.1"}, nil }))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a request without a name answered %d, want 400", resp.StatusCode)
	}
}

func TestNewResolverClientRefusesABadURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "127.0.0.1:80", "ftp://127.0.0.1/x", "http://"} {
		if _, err := NewResolverClient(u); err == nil {
			t.Errorf("NewResolverClient(%q) accepted it", u)
		}
	}
}

func TestNodeResolvesSeedNamesBeforeJoining(t *testing.T) {
	t.Parallel()
	names := map[string][]string{
		// 10.0.0.9 has no node: only the founder at 10.0.0.1 is live.
		"seed.db.svc":     {"10.0.0.9", "10.0.0.1"},
		"nobody.db.svc":   {"10.0.0.8"},
		"founder.db.svc.": {"10.0.0.1"},
	}
	tests := []struct {
		name        string
		seeds       []string
		wantAsked   []string
		wantJoinErr string
		// wantResolved are the record's ResolvedSeeds.
		wantResolved []string
	}{
		{
			name:         "a name joins the ring of a live node among its addresses",
			seeds:        []string{"seed.db.svc"},
			wantAsked:    []string{"seed.db.svc"},
			wantResolved: []string{"10.0.0.9", "10.0.0.1"},
		},
		{
			name:         "names that can't be resolved are left out, addresses kept, duplicates dropped",
			seeds:        []string{"nope.db.svc", "broken", "10.0.0.1", "founder.db.svc."},
			wantAsked:    []string{"nope.db.svc", "broken", "founder.db.svc."},
			wantResolved: []string{"10.0.0.1"},
		},
		{
			name:         "IP addresses are not resolved",
			seeds:        []string{"10.0.0.1", "fd00::1"},
			wantResolved: []string{"10.0.0.1", "fd00::1"},
		},
		{
			name:        "no seed left fails the join",
			seeds:       []string{"nope.db.svc", "broken"},
			wantAsked:   []string{"nope.db.svc", "broken"},
			wantJoinErr: "can't join a ring: none of the seeds [nope.db.svc broken] resolved to an address",
		},
		{
			name:         "resolved addresses without a live node fail the join as literal ones do",
			seeds:        []string{"nobody.db.svc"},
			wantAsked:    []string{"nobody.db.svc"},
			wantJoinErr:  "no live node at any of its seeds [10.0.0.8]",
			wantResolved: []string{"10.0.0.8"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			registry := NewRegistry(0)
			regURL := serveRegistry(t, registry)
			founder := startTestNode(t, regURL, t.TempDir(), "10.0.0.1", Knobs{}, "10.0.0.1")
			founder.waitForMode(t, scyllaclient.OperationModeNormal)

			recordPath := filepath.Join(t.TempDir(), "records.json")
			for _, r := range []Record{{Args: []string{"earlier start"}}, {Args: []string{"this start"}}} {
				if err := AppendRecord(recordPath, r); err != nil {
					t.Fatal(err)
				}
			}
			resolver := &mapResolver{names: names}
			n := runTestNode(t, regURL, NodeOptions{
				Invocation: testInvocation(t.TempDir(), "10.0.0.2", tc.seeds...),
				Resolver:   resolver,
				RecordPath: recordPath,
			})
			if tc.wantJoinErr != "" {
				if err := n.wait(); err == nil || !strings.Contains(err.Error(), tc.wantJoinErr) {
					t.Errorf("want a join error with %q, got %v", tc.wantJoinErr, err)
				}
			} else {
				n.waitForMode(t, scyllaclient.OperationModeNormal)
				want := []string{founder.node.HostID(), n.node.HostID()}
				slices.Sort(want)
				if diff := cmp.Diff([][]string{want}, sortedRingsOf(registry)); diff != "" {
					t.Errorf("rings differ (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.wantAsked, resolver.askedNames()); diff != "" {
				t.Errorf("names resolved differ (-want +got):\n%s", diff)
			}

			records, err := ReadRecords(recordPath)
			if err != nil {
				t.Fatal(err)
			}
			if len(records) != 2 || records[0].Args[0] != "earlier start" {
				t.Fatalf("want the earlier record kept and this start's replaced, got %+v", records)
			}
			got := records[1]
			if diff := cmp.Diff(tc.seeds, got.Invocation.Settings.Seeds); diff != "" {
				t.Errorf("the record's seeds aren't the seeds as given (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantResolved, got.ResolvedSeeds); diff != "" {
				t.Errorf("the record's resolved seeds differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeWithoutAResolverMatchesSeedNamesLiterally(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	regURL := serveRegistry(t, reg)
	n := startTestNode(t, regURL, t.TempDir(), "10.0.0.2", Knobs{}, "seed.db.svc")
	if err := n.wait(); err == nil || !strings.Contains(err.Error(), "no live node at any of its seeds [seed.db.svc]") {
		t.Errorf("unexpected error %v", err)
	}
}

// sortedRingsOf lists each ring's members by host ID with sorted members, as ringsOf does.
func sortedRingsOf(reg *Registry) [][]string {
	rings := ringsOf(reg)
	for _, r := range rings {
		slices.Sort(r)
	}
	return rings
}
