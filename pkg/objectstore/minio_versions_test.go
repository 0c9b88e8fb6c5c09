package objectstore

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// versionServer is an S3 server of one bucket whose versioning is versioning ("NotImplemented" answers so), with
// the versions of keys as ListObjectVersions pages them, and a DeleteObjects that refuses the versions of locked as
// object lock does. It records the queries of the listings and the bodies of the deletions.
type versionServer struct {
	versioning string
	versions   []ObjectVersion
	locked     map[string]bool
	// markersFirst puts a page's delete markers before its versions, as versitygw does.
	markersFirst bool

	mu        sync.Mutex
	listings  []string
	deletions []string
}

func (vs *versionServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	w.Header().Set("Content-Type", "application/xml")
	switch {
	case r.Method == http.MethodGet && q.Has("versioning"):
		if vs.versioning == ErrorCodeNotImplemented {
			w.WriteHeader(http.StatusNotImplemented)
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotImplemented</Code><Message>A header you provided implies functionality that is not implemented</Message></Error>`))
			return
		}
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>%s</Status></VersioningConfiguration>`, vs.versioning)
	case r.Method == http.MethodGet && q.Has("versions"):
		vs.mu.Lock()
		vs.listings = append(vs.listings, r.URL.RawQuery)
		vs.mu.Unlock()
		vs.list(w, q)
	case r.Method == http.MethodPost && q.Has("delete"):
		body, _ := io.ReadAll(r.Body)
		vs.mu.Lock()
		vs.deletions = append(vs.deletions, string(body))
		vs.mu.Unlock()
		vs.delete(w, body)
	default:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidRequest</Code><Message>unexpected request</Message></Error>`))
	}
}

func (vs *versionServer) list(w http.ResponseWriter, q map[string][]string) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	maxKeys, err := strconv.Atoi(get("max-keys"))
	if err != nil || maxKeys <= 0 || maxKeys > 1000 {
		maxKeys = 1000
	}
	keyMarker, versionMarker := get("key-marker"), get("version-id-marker")
	var page []ObjectVersion
	past := versionMarker == ""
	for _, v := range vs.versions {
		if !strings.HasPrefix(v.Key, get("prefix")) || v.Key < keyMarker || (v.Key == keyMarker && past) {
			continue
		}
		if v.Key == keyMarker && !past {
			past = v.VersionID == versionMarker
			continue
		}
		page = append(page, v)
	}
	truncated := len(page) > maxKeys
	page = page[:min(len(page), maxKeys)]
	if vs.markersFirst {
		page = slices.Clone(page)
		slices.SortStableFunc(page, func(a, b ObjectVersion) int {
			switch {
			case a.DeleteMarker == b.DeleteMarker:
				return 0
			case a.DeleteMarker:
				return -1
			}
			return 1
		})
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListVersionsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	fmt.Fprintf(&b, "<Name>bkt</Name><Prefix>%s</Prefix><KeyMarker>%s</KeyMarker><MaxKeys>%d</MaxKeys><IsTruncated>%t</IsTruncated>", get("prefix"), keyMarker, maxKeys, truncated)
	if truncated {
		last := page[len(page)-1]
		fmt.Fprintf(&b, "<NextKeyMarker>%s</NextKeyMarker><NextVersionIdMarker>%s</NextVersionIdMarker>", last.Key, last.VersionID)
	}
	for _, v := range page {
		if v.DeleteMarker {
			fmt.Fprintf(&b, "<DeleteMarker><Key>%s</Key><VersionId>%s</VersionId><IsLatest>true</IsLatest></DeleteMarker>", v.Key, v.VersionID)
			continue
		}
		fmt.Fprintf(&b, "<Version><Key>%s</Key><VersionId>%s</VersionId><IsLatest>false</IsLatest><Size>%d</Size></Version>", v.Key, v.VersionID, v.Size)
	}
	b.WriteString("</ListVersionsResult>")
	_, _ = w.Write([]byte(b.String()))
}

func (vs *versionServer) delete(w http.ResponseWriter, body []byte) {
	var req struct {
		Objects []struct {
			Key       string `xml:"Key"`
			VersionID string `xml:"VersionId"`
		} `xml:"Object"`
	}
	if err := xml.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	for _, o := range req.Objects {
		if vs.locked[o.Key+"@"+o.VersionID] {
			fmt.Fprintf(&b, "<Error><Key>%s</Key><VersionId>%s</VersionId><Code>AccessDenied</Code><Message>Access Denied because object protected by object lock.</Message></Error>", o.Key, o.VersionID)
			continue
		}
		fmt.Fprintf(&b, "<Deleted><Key>%s</Key><VersionId>%s</VersionId></Deleted>", o.Key, o.VersionID)
	}
	b.WriteString("</DeleteResult>")
	_, _ = w.Write([]byte(b.String()))
}

func newVersionServerStore(t *testing.T, vs *versionServer) Interface {
	t.Helper()
	srv := httptest.NewServer(vs)
	t.Cleanup(srv.Close)
	store, err := New(Config{Endpoint: srv.URL, Region: "us-east-1", AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// TestListObjectVersionsIsOneRequest lists 1500 keys of two versions each, every third one's newest a delete
// marker, as S3's ListObjectVersions pages them (and as versitygw does, a page's markers first), checks that the
// listing is in key order, and counts the requests each listing makes.
func TestListObjectVersionsIsOneRequest(t *testing.T) {
	t.Parallel()
	for _, markersFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("markersFirst=%t", markersFirst), func(t *testing.T) {
			t.Parallel()
			testListObjectVersionsIsOneRequest(t, markersFirst)
		})
	}
}

// testListObjectVersionsIsOneRequest is TestListObjectVersionsIsOneRequest against a store that puts the delete
// markers of a page first, or not.
func testListObjectVersionsIsOneRequest(t *testing.T, markersFirst bool) {
	vs := &versionServer{markersFirst: markersFirst}
	for i := range 1500 {
		key := fmt.Sprintf("backup/sst/%05d", i)
		vs.versions = append(vs.versions,
			ObjectVersion{Key: key, VersionID: fmt.Sprintf("b%05d", i), Size: 3, DeleteMarker: i%3 == 0},
			ObjectVersion{Key: key, VersionID: fmt.Sprintf("a%05d", i), Size: 3},
		)
	}
	for i := range vs.versions {
		if vs.versions[i].DeleteMarker {
			vs.versions[i].Size = 0
		}
	}
	store := newVersionServerStore(t, vs)
	for _, tc := range []struct {
		limit       int
		startAfter  string
		wantFirst   int
		wantCount   int
		wantNextKey string
	}{
		// The 1000th version, the one that tells whether more remain, is of the key of the 999th.
		{limit: 1000, wantFirst: 0, wantCount: 999, wantNextKey: "backup/sst/00499"},
		{limit: 5000, wantFirst: 0, wantCount: 999, wantNextKey: "backup/sst/00499"},
		{limit: 10, wantFirst: 0, wantCount: 10, wantNextKey: "backup/sst/00005"},
		{limit: 1000, startAfter: "backup/sst/00499", wantFirst: 1000, wantCount: 999, wantNextKey: "backup/sst/00999"},
		{limit: 1000, startAfter: "backup/sst/01000", wantFirst: 2002, wantCount: 998},
	} {
		vs.mu.Lock()
		vs.listings = nil
		vs.mu.Unlock()
		list, err := store.ListObjectVersions(context.Background(), "bkt", "backup/sst/", tc.startAfter, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		want := ObjectVersionList{
			Versions: vs.versions[tc.wantFirst : tc.wantFirst+tc.wantCount],
			More:     tc.wantNextKey != "",
			NextKey:  tc.wantNextKey,
		}
		if diff := cmp.Diff(want, list); diff != "" {
			t.Errorf("limit %d after %q: listing differs (-want +got):\n%s", tc.limit, tc.startAfter, diff)
		}
		vs.mu.Lock()
		listings := vs.listings
		vs.mu.Unlock()
		if len(listings) != 1 {
			t.Errorf("limit %d after %q: %d requests, want 1: %q", tc.limit, tc.startAfter, len(listings), listings)
		}
	}
}

func TestDeleteObjectVersionsSendsVersionIDsAndNamesTheLockedOnes(t *testing.T) {
	t.Parallel()
	vs := &versionServer{locked: map[string]bool{"backup/sst/b@v2": true}}
	store := newVersionServerStore(t, vs)
	versions := []ObjectVersion{
		{Key: "backup/sst/a", VersionID: "v1"},
		{Key: "backup/sst/b", VersionID: "v2"},
		{Key: "backup/sst/b", VersionID: "null", DeleteMarker: true},
	}
	err := store.DeleteObjectVersions(context.Background(), "bkt", versions)
	var doe *DeleteObjectsError
	if !errors.As(err, &doe) {
		t.Fatalf("want a *DeleteObjectsError, got %v", err)
	}
	if len(doe.Errors) != 1 || doe.Errors[0].Key != "backup/sst/b" || doe.Errors[0].VersionID != "v2" {
		t.Errorf("want only version v2 of backup/sst/b failed, got %v", doe.Errors)
	}
	if ErrorCode(err) != ErrorCodeAccessDenied || !strings.Contains(err.Error(), `can't delete version "v2" of object "backup/sst/b": Access Denied because object protected by object lock.`) {
		t.Errorf("want the store's refusal of the version, got %v", err)
	}
	vs.mu.Lock()
	deletions := vs.deletions
	vs.mu.Unlock()
	if len(deletions) != 1 {
		t.Fatalf("want one DeleteObjects request, got %d", len(deletions))
	}
	for _, v := range versions {
		if want := "<Key>" + v.Key + "</Key><VersionId>" + v.VersionID + "</VersionId>"; !strings.Contains(deletions[0], want) {
			t.Errorf("want the request to hold %s, got %s", want, deletions[0])
		}
	}

	if err := store.DeleteObjectVersions(context.Background(), "bkt", []ObjectVersion{{Key: "backup/sst/a"}}); err == nil || !strings.Contains(err.Error(), "has no version ID") {
		t.Errorf("want a version without ID refused, got %v", err)
	}
}

func TestBucketVersionedOverMinio(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		versioning string
		want       bool
	}{
		{versioning: "", want: false},
		{versioning: VersioningEnabled, want: true},
		{versioning: VersioningSuspended, want: true},
		{versioning: ErrorCodeNotImplemented, want: false},
	} {
		store := newVersionServerStore(t, &versionServer{versioning: tc.versioning})
		got, err := BucketVersioned(context.Background(), store, "bkt")
		if err != nil || got != tc.want {
			t.Errorf("versioning %q: got %v, %v; want %v", tc.versioning, got, err, tc.want)
		}
	}
}
