package sidecar

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// joinedMarkerHostID returns what the joined marker holds, trimmed, or "" when there is none.
func joinedMarkerHostID(t *testing.T, m *JoinedMarker) string {
	t.Helper()
	data, err := os.ReadFile(m.Path())
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

func TestJoinedMarkerReadsAsJoinedOnlyWhenItHoldsAHostID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, dataDir string)
		want    bool
		wantErr string
	}{
		{
			name:    "no marker: not joined",
			prepare: func(*testing.T, string) {},
		},
		{
			name: "a marker with a host ID: joined",
			prepare: func(t *testing.T, dir string) {
				writeTestFile(t, filepath.Join(dir, joinedMarkerFileName), replacedHostID+"\n")
			},
			want: true,
		},
		{
			name:    "an empty marker, a write cut short, is an error",
			prepare: func(t *testing.T, dir string) { writeTestFile(t, filepath.Join(dir, joinedMarkerFileName), "") },
			wantErr: `the joined marker "DIR/scylla-operator-joined" doesn't hold a host ID: "" is not a host ID: want a UUID like 8d5ed9f4-7764-4dbd-bad8-43fddce94b7c`,
		},
		{
			name: "a directory in the marker's place is an error",
			prepare: func(t *testing.T, dir string) {
				if err := os.Mkdir(filepath.Join(dir, joinedMarkerFileName), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: `can't read the joined marker "DIR/scylla-operator-joined": read DIR/scylla-operator-joined: is a directory`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tc.prepare(t, dir)
			m := NewJoinedMarker(dir)
			got, err := m.read()
			if diff := cmp.Diff(tc.wantErr, strings.ReplaceAll(errorString(err), dir, "DIR")); diff != "" {
				t.Errorf("unexpected error (-want +got):\n%s", diff)
			}
			if got != tc.want {
				t.Errorf("read() = %v, want %v", got, tc.want)
			}
			// Trouble reads as not joined: waiting is the safe choice.
			if joined := m.Joined(context.Background()); joined != tc.want {
				t.Errorf("Joined() = %v, want %v", joined, tc.want)
			}
		})
	}
}

func TestJoinedMarkerIsRecordedOnceAndRemovedForAReplacement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := NewJoinedMarker(t.TempDir())
	m.Record(ctx, "not-a-host-id")
	if got := joinedMarkerHostID(t, m); got != "" {
		t.Fatalf("a value that is no host ID was recorded: %q", got)
	}
	m.Record(ctx, strings.ToUpper(replacedHostID))
	if got := joinedMarkerHostID(t, m); got != replacedHostID {
		t.Fatalf("the marker holds %q, want %q", got, replacedHostID)
	}
	m.Remove(ctx)
	if _, err := os.Stat(m.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the marker is still there after Remove: %v", err)
	}
	if m.Joined(ctx) {
		t.Error("a removed marker reads as joined")
	}
	// Removing what isn't there is no trouble, and the next readiness pass records the node again.
	m.Remove(ctx)
	m.Record(ctx, replacedHostID)
	if !m.Joined(ctx) {
		t.Error("the marker recorded after a removal doesn't read as joined")
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
