package naming

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestScyllaDBBackupEntryNameIsReadableAndStable(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name                  string
		kind, cluster, bucket string
		want                  string
	}{
		{
			name:    "a datacenter's entry is <cluster>-<bucket>-<hash5>",
			kind:    "ScyllaDBDatacenter",
			cluster: "basic",
			bucket:  "backups",
			want:    "basic-backups-" + Hash5("ScyllaDBDatacenter", "basic", "backups"),
		},
		{
			// Existing entries keep their names across upgrades: a new name would make a second entry for the
			// directory, which the entry controller refuses (DuplicateEntry). This is docs/backups.md's example.
			name:    "an existing entry's name is pinned",
			kind:    "ScyllaDBDatacenter",
			cluster: "basic",
			bucket:  "shared-backups",
			want:    "basic-shared-backups-1zt73",
		},
		{
			name:    "dots of the bucket become dashes",
			kind:    "ScyllaDBCluster",
			cluster: "multi",
			bucket:  "acme.backups.eu",
			want:    "multi-acme-backups-eu-" + Hash5("ScyllaDBCluster", "multi", "acme.backups.eu"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := ScyllaDBBackupEntryName(tc.kind, tc.cluster, tc.bucket)
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if again := ScyllaDBBackupEntryName(tc.kind, tc.cluster, tc.bucket); again != got {
				t.Errorf("the same inputs gave %q, then %q", got, again)
			}
		})
	}
}

func TestScyllaDBBackupEntryNameOfIncarnationIsReadableAndStable(t *testing.T) {
	t.Parallel()

	const id = "0b4c1e6e-7a8f-5a1d-9a34-1f2d3c4b5a69"
	got := ScyllaDBBackupEntryNameOfIncarnation("ScyllaDBDatacenter", "basic", "acme.backups", id)
	if want := "basic-acme-backups-" + Hash5("ScyllaDBDatacenter", "basic", "acme.backups", id); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if again := ScyllaDBBackupEntryNameOfIncarnation("ScyllaDBDatacenter", "basic", "acme.backups", id); again != got {
		t.Errorf("the same inputs gave %q, then %q", got, again)
	}
}

func TestScyllaDBBackupEntryNameIsAValidLabelForLongInputs(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name            string
		cluster, bucket string
	}{
		{name: "longest datacenter name and bucket name", cluster: strings.Repeat("a", 63), bucket: strings.Repeat("b", 63)},
		{name: "longest subdomain cluster name", cluster: strings.Repeat("c", 100) + "." + strings.Repeat("d", 100), bucket: "backups"},
		{name: "truncation right after a dot of the bucket", cluster: strings.Repeat("e", 50), bucket: "abc.defghijklmnop"},
		{name: "truncation right after a dash", cluster: strings.Repeat("f", 56) + "-", bucket: "xyz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, kind := range []string{"ScyllaDBDatacenter", "ScyllaDBCluster"} {
				for _, got := range []string{
					ScyllaDBBackupEntryName(kind, tc.cluster, tc.bucket),
					ScyllaDBBackupEntryNameOfIncarnation(kind, tc.cluster, tc.bucket, "0b4c1e6e-7a8f-5a1d-9a34-1f2d3c4b5a69"),
				} {
					if errs := validation.IsDNS1123Label(got); len(errs) != 0 {
						t.Errorf("%s: %q is not a DNS label: %v", kind, got, errs)
					}
					if errs := validation.IsDNS1123Subdomain(got); len(errs) != 0 {
						t.Errorf("%s: %q is not an object name: %v", kind, got, errs)
					}
				}
			}
		})
	}
}

func TestScyllaDBBackupEntryNamesAreCollisionFree(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 70)

	for _, tc := range []struct {
		name string
		a, b string
	}{
		{
			name: "a ScyllaDBCluster and a ScyllaDBDatacenter of the same name in one bucket",
			a:    ScyllaDBBackupEntryName("ScyllaDBCluster", "basic", "backups"),
			b:    ScyllaDBBackupEntryName("ScyllaDBDatacenter", "basic", "backups"),
		},
		{
			name: "one cluster in two buckets",
			a:    ScyllaDBBackupEntryName("ScyllaDBDatacenter", "basic", "backups-a"),
			b:    ScyllaDBBackupEntryName("ScyllaDBDatacenter", "basic", "backups-b"),
		},
		{
			name: "splits of the same text into cluster and bucket",
			a:    ScyllaDBBackupEntryName("ScyllaDBDatacenter", "a-b", "cde"),
			b:    ScyllaDBBackupEntryName("ScyllaDBDatacenter", "a", "b-cde"),
		},
		{
			name: "buckets that differ only by a dot and a dash",
			a:    ScyllaDBBackupEntryName("ScyllaDBDatacenter", "basic", "acme.backups"),
			b:    ScyllaDBBackupEntryName("ScyllaDBDatacenter", "basic", "acme-backups"),
		},
		{
			name: "long clusters sharing a prefix",
			a:    ScyllaDBBackupEntryName("ScyllaDBCluster", long+"1", "backups"),
			b:    ScyllaDBBackupEntryName("ScyllaDBCluster", long+"2", "backups"),
		},
		{
			name: "long buckets sharing a prefix",
			a:    ScyllaDBBackupEntryName("ScyllaDBDatacenter", "basic", strings.Repeat("y", 62)+"1"),
			b:    ScyllaDBBackupEntryName("ScyllaDBDatacenter", "basic", strings.Repeat("y", 62)+"2"),
		},
		{
			name: "a cluster created again and its deleted predecessor",
			a:    ScyllaDBBackupEntryName("ScyllaDBDatacenter", "basic", "backups"),
			b:    ScyllaDBBackupEntryNameOfIncarnation("ScyllaDBDatacenter", "basic", "backups", "0b4c1e6e-7a8f-5a1d-9a34-1f2d3c4b5a69"),
		},
		{
			name: "two later incarnations of one cluster",
			a:    ScyllaDBBackupEntryNameOfIncarnation("ScyllaDBDatacenter", "basic", "backups", "0b4c1e6e-7a8f-5a1d-9a34-1f2d3c4b5a69"),
			b:    ScyllaDBBackupEntryNameOfIncarnation("ScyllaDBDatacenter", "basic", "backups", "6f1e2d3c-4b5a-5968-8776-5a4b3c2d1e0f"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.a == tc.b {
				t.Errorf("both are %q", tc.a)
			}
		})
	}
}
