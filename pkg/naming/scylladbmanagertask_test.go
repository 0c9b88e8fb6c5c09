package naming

import "testing"

func TestScyllaDBManagerTaskNameInManagerPrefersTheOverrideAnnotation(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name        string
		annotations map[string]string
		want        string
	}{
		{name: "no annotations give the object's name", want: "basic-backup-daily-abcde"},
		{name: "an empty override gives the object's name", annotations: map[string]string{ScyllaDBManagerTaskNameOverrideAnnotation: ""}, want: "basic-backup-daily-abcde"},
		{name: "the override wins", annotations: map[string]string{ScyllaDBManagerTaskNameOverrideAnnotation: "daily"}, want: "daily"},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := ScyllaDBManagerTaskNameInManager("basic-backup-daily-abcde", tc.annotations); got != tc.want {
				t.Errorf("expected %q, got %q", tc.want, got)
			}
		})
	}
}

func TestScyllaDBManagerTaskClusterRefIndexKeyTellsKindsApart(t *testing.T) {
	t.Parallel()

	dc := ScyllaDBManagerTaskClusterRefIndexKey("ns", "ScyllaDBDatacenter", "basic")
	if dc != "ns/ScyllaDBDatacenter/basic" {
		t.Errorf("unexpected key %q", dc)
	}
	if dc == ScyllaDBManagerTaskClusterRefIndexKey("ns", "ScyllaDBCluster", "basic") {
		t.Errorf("a ScyllaDBCluster and a ScyllaDBDatacenter of the same name share the key %q", dc)
	}
}
