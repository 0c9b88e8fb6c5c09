package sidecar

import (
	"fmt"
	"testing"
)

func TestOutputWatcherFindsThePhraseAcrossWrites(t *testing.T) {
	t.Parallel()
	refusal := "ERROR 2026-01-01 init - This node was decommissioned and will not rejoin the ring unless override_decommission=true has been set\n"
	for _, tc := range []struct {
		name   string
		writes []string
		want   int
	}{
		{name: "in one write", writes: []string{refusal}, want: 1},
		{name: "split in two", writes: []string{refusal[:40], refusal[40:]}, want: 1},
		{name: "one byte at a time", writes: bytesOf(refusal), want: 1},
		{name: "twice is reported once", writes: []string{refusal, refusal}, want: 1},
		{name: "other output", writes: []string{"INFO starting\n", "was decommissioned and will\n", " not rejoin the ring"}, want: 0},
		{name: "nothing", want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			found := 0
			w := newOutputWatcher(DecommissionRefusal, func() { found++ })
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if found != tc.want {
				t.Errorf("found %d times, want %d", found, tc.want)
			}
		})
	}
}

func bytesOf(s string) []string {
	var out []string
	for i := range len(s) {
		out = append(out, fmt.Sprintf("%c", s[i]))
	}
	return out
}
