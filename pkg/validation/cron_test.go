package validation

import (
	"testing"
	"time"
)

func TestParseManagerDuration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0}, {"0", 0}, {"0s", 0}, {"7d", 7 * 24 * time.Hour}, {"1d12h", 36 * time.Hour}, {"10m0s", 10 * time.Minute}, {"1h30m", 90 * time.Minute},
	} {
		got, err := ParseManagerDuration(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseManagerDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParseManagerDuration("soon"); err == nil {
		t.Errorf("expected an error for a duration that is none")
	}

	if _, err := ParseManagerDuration("106751992d"); err == nil {
		t.Errorf("expected an error for a duration that overflows")
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"1GiB": 1 << 30, "512MiB": 512 << 20, "7B": 7, "1024": 1024, "1Gi": 1 << 30, "1G": 1e9} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "big", "1.5KiB", "-1", "0.5"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("expected an error for %q", in)
		}
	}
}

func TestParseRelativeStartDate(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"now": 0, "now+1d2h": 26 * time.Hour, " now+30s ": 30 * time.Second} {
		got, ok, err := ParseRelativeStartDate(in)
		if !ok || err != nil || got != want {
			t.Errorf("ParseRelativeStartDate(%q) = %v, %v, %v; want %v", in, got, ok, err, want)
		}
	}
	for _, in := range []string{"2026-01-01T00:00:00Z", "now-1d", "later"} {
		if _, ok, _ := ParseRelativeStartDate(in); ok {
			t.Errorf("ParseRelativeStartDate(%q) took it for a relative start date", in)
		}
	}
}
