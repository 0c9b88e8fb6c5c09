package objectstore

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	testID = "7b3c1a52-9d4e-4f6a-8b1c-2d3e4f5a6b7c"
	// testIDSibling shares all but the last character of testID.
	testIDSibling = "7b3c1a52-9d4e-4f6a-8b1c-2d3e4f5a6b7d"
)

func TestClusterPrefixes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		id      string
		want    []string
		wantErr string
	}{
		{
			name: "canonical UUID gives the three Manager prefixes in lexical order",
			id:   testID,
			want: []string{
				"backup/meta/cluster/" + testID + "/",
				"backup/schema/cluster/" + testID + "/",
				"backup/sst/cluster/" + testID + "/",
			},
		},
		{name: "empty ID is refused", id: "", wantErr: "is not a UUID"},
		{name: "path traversal is refused", id: "../", wantErr: "is not a UUID"},
		{name: "UUID followed by a path is refused", id: testID + "/..", wantErr: "is not a UUID"},
		{name: "UUID with a suffix is refused", id: testID + "0", wantErr: "is not a UUID"},
		{name: "UUID with a trailing slash is refused", id: testID + "/", wantErr: "is not a UUID"},
		{name: "truncated UUID is refused", id: testID[:35], wantErr: "is not a UUID"},
		{name: "UUID with surrounding space is refused", id: " " + testID, wantErr: "is not a UUID"},
		{name: "wildcard is refused", id: "*", wantErr: "is not a UUID"},
		{name: "uppercase UUID is refused, not normalised", id: strings.ToUpper(testID), wantErr: "not in canonical lowercase form"},
		{name: "mixed case UUID is refused", id: "7B3c1a52-9d4e-4f6a-8b1c-2d3e4f5a6b7c", wantErr: "not in canonical lowercase form"},
		{name: "UUID without dashes is refused", id: strings.ReplaceAll(testID, "-", ""), wantErr: "not in canonical lowercase form"},
		{name: "UUID in braces is refused", id: "{" + testID + "}", wantErr: "not in canonical lowercase form"},
		{name: "URN form is refused", id: "urn:uuid:" + testID, wantErr: "not in canonical lowercase form"},
		{name: "nil UUID is refused", id: "00000000-0000-0000-0000-000000000000", wantErr: "is the nil UUID"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ClusterPrefixes(tc.id)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error containing %q, got %v (prefixes %q)", tc.wantErr, err, got)
				}
				if got != nil {
					t.Errorf("want no prefixes with an error, got %q", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("prefixes differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterPrefixRefusesUnknownKind(t *testing.T) {
	t.Parallel()
	if _, err := ClusterPrefix("../meta", testID); err == nil {
		t.Fatal("want an error for an unknown kind")
	}
	got, err := ClusterPrefix(KindSST, testID)
	if err != nil {
		t.Fatal(err)
	}
	if want := "backup/sst/cluster/" + testID + "/"; got != want {
		t.Errorf("want %q, got %q", want, got)
	}
}

func TestIsClusterKey(t *testing.T) {
	t.Parallel()
	meta := "backup/meta/cluster/" + testID + "/"
	schema := "backup/schema/cluster/" + testID + "/"
	sst := "backup/sst/cluster/" + testID + "/"
	tests := []struct {
		name string
		id   string
		key  string
		want bool
	}{
		{name: "manifest of the cluster", id: testID, key: meta + "dc/dc1/node/h1/task_t_tag_sm_20260101000000UTC_manifest.json.gz", want: true},
		{name: "schema of the cluster", id: testID, key: schema + "task_t_tag_sm_20260101000000UTC_schema.tar.gz", want: true},
		{name: "sstable of the cluster", id: testID, key: sst + "dc/dc1/node/h1/keyspace/ks/table/t/abc/me-1-big-Data.db", want: true},
		{name: "single segment under the prefix", id: testID, key: sst + "x", want: true},
		{name: "directory marker under the prefix", id: testID, key: sst + "dc/", want: true},
		{name: "dots inside a name are fine", id: testID, key: sst + "a..b/.hidden/c.", want: true},

		{name: "prefix itself", id: testID, key: sst, want: false},
		{name: "prefix without its trailing slash", id: testID, key: strings.TrimSuffix(sst, "/"), want: false},
		{name: "prefix followed by a second slash", id: testID, key: sst + "/", want: false},
		{name: "empty segment", id: testID, key: sst + "a//b", want: false},
		{name: "leading empty segment", id: testID, key: sst + "/a", want: false},
		{name: "parent segment escaping to another cluster", id: testID, key: sst + "../" + testIDSibling + "/x", want: false},
		{name: "parent segment at the end", id: testID, key: sst + "a/..", want: false},
		{name: "parent segment as a directory marker", id: testID, key: sst + "../", want: false},
		{name: "current segment", id: testID, key: sst + "./x", want: false},
		{name: "backslash separator", id: testID, key: sst + `..\x`, want: false},
		{name: "control character", id: testID, key: sst + "a\x00b", want: false},
		{name: "newline", id: testID, key: sst + "a\nb", want: false},

		{name: "other cluster sharing all but the last character", id: testID, key: "backup/sst/cluster/" + testIDSibling + "/x", want: false},
		{name: "ID that is a textual prefix of the key's ID", id: testID, key: "backup/sst/cluster/" + testID + "0/x", want: false},
		{name: "key's ID that is a textual prefix of the ID", id: testID, key: "backup/sst/cluster/" + testID[:35] + "/x", want: false},
		{name: "uppercase spelling of the cluster's ID in the key", id: testID, key: "backup/sst/cluster/" + strings.ToUpper(testID) + "/x", want: false},
		{name: "permission check files of the cluster", id: testID, key: ".permission-check/cluster/" + testID + "/x", want: false},
		{name: "other kind of data", id: testID, key: "backup/other/cluster/" + testID + "/x", want: false},
		{name: "outside backup", id: testID, key: "meta/cluster/" + testID + "/x", want: false},
		{name: "prefix embedded deeper", id: testID, key: "x/" + sst + "y", want: false},
		{name: "empty key", id: testID, key: "", want: false},

		{name: "uppercase ID is refused even for its own lowercase keys", id: strings.ToUpper(testID), key: sst + "x", want: false},
		{name: "empty ID", id: "", key: "backup/sst/cluster//x", want: false},
		{name: "traversal ID", id: "..", key: "backup/sst/cluster/../x", want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := IsClusterKey(tc.id, tc.key); got != tc.want {
				t.Errorf("IsClusterKey(%q, %q) = %v, want %v", tc.id, tc.key, got, tc.want)
			}
		})
	}
}

// TestIsClusterKeyAgreesWithPrefixes checks, for every prefix of both clusters, that keys of one cluster are never
// keys of the other.
func TestIsClusterKeyAgreesWithPrefixes(t *testing.T) {
	t.Parallel()
	for _, ids := range [][2]string{{testID, testIDSibling}, {testIDSibling, testID}} {
		prefixes, err := ClusterPrefixes(ids[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range prefixes {
			key := p + "dc/dc1/node/h/file"
			if !IsClusterKey(ids[0], key) {
				t.Errorf("key %q is not a key of its own cluster %s", key, ids[0])
			}
			if IsClusterKey(ids[1], key) {
				t.Errorf("key %q of cluster %s is taken for a key of cluster %s", key, ids[0], ids[1])
			}
		}
	}
}
