package validation

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	// Time zone names are checked with time.LoadLocation, which needs the zone database; the webhook's container
	// image has none.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// cronParser parses cron expressions as ScyllaDB Manager does (scylla-manager-api.md): five fields with an optional
// leading seconds field, and the @ descriptors including @every <duration>.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// validateCron checks a cron expression. TZ= and CRON_TZ= prefixes are refused (manager-integration.md): how they
// combine with a timezone is undefined in ScyllaDB Manager.
func validateCron(spec string, path *field.Path) field.ErrorList {
	trimmed := strings.TrimSpace(spec)
	if strings.HasPrefix(trimmed, "TZ=") || strings.HasPrefix(trimmed, "CRON_TZ=") {
		return field.ErrorList{field.Invalid(path, spec, "must not start with TZ= or CRON_TZ=: schedules are in UTC or in the task's timezone")}
	}
	if len(trimmed) == 0 {
		return field.ErrorList{field.Invalid(path, spec, `must be a cron expression such as "0 23 * * SAT" or "@daily"`)}
	}
	if _, err := cronParser.Parse(trimmed); err != nil {
		return field.ErrorList{field.Invalid(path, spec, fmt.Sprintf(`must be a cron expression with five fields and an optional leading seconds field, or @yearly, @monthly, @weekly, @daily, @hourly or "@every <duration>": %v`, err))}
	}
	// The cron library (ScyllaDB Manager's too) runs an @every shorter than a second, zero or negative every second,
	// and drops fractions of a second: none of them is what was written.
	if rest, ok := strings.CutPrefix(trimmed, "@every "); ok {
		if d, err := time.ParseDuration(strings.TrimSpace(rest)); err == nil && (d < time.Second || d%time.Second != 0) {
			return field.ErrorList{field.Invalid(path, spec, "@every needs a whole number of seconds, at least 1s, e.g. @every 12h")}
		}
	}
	return nil
}

// validateTimezone checks an IANA time zone name.
func validateTimezone(name string, path *field.Path) field.ErrorList {
	if _, err := time.LoadLocation(strings.TrimSpace(name)); err != nil || strings.EqualFold(strings.TrimSpace(name), "local") {
		return field.ErrorList{field.Invalid(path, name, "must be an IANA time zone name such as Europe/Warsaw or UTC")}
	}
	return nil
}

var (
	// relativeStartDatePattern matches "now" and "now+<duration>" as the ScyllaCluster API writes start dates.
	relativeStartDatePattern = regexp.MustCompile(`^now(?:\+((?:[0-9]+[dhms])+))?$`)

	// managerDurationPattern matches ScyllaDB Manager's durations: digits with units d, h, m and s, e.g. 1d12h.
	managerDurationPattern     = regexp.MustCompile(`^(?:[0-9]+[dhms])+$`)
	managerDurationPartPattern = regexp.MustCompile(`([0-9]+)([dhms])`)
	managerDurationUnits       = map[string]time.Duration{"d": 24 * time.Hour, "h": time.Hour, "m": time.Minute, "s": time.Second}

	// sizePattern matches the sizes the ScyllaCluster API writes for smallTableThreshold: a number and a binary unit.
	sizePattern = regexp.MustCompile(`^([0-9]+)\s*(B|KiB|MiB|GiB|TiB|PiB)?$`)
	sizeUnits   = map[string]int64{"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50}
)

// ParseManagerDuration parses a duration as ScyllaDB Manager writes them (units d, h, m and s, e.g. 1d12h; "" and
// "0" are zero), or as Go does (e.g. 10m0s).
func ParseManagerDuration(value string) (time.Duration, error) {
	value = strings.TrimSpace(value)
	if value == "" || value == "0" {
		return 0, nil
	}
	if managerDurationPattern.MatchString(value) {
		var total time.Duration
		for _, part := range managerDurationPartPattern.FindAllStringSubmatch(value, -1) {
			n, err := strconv.ParseInt(part[1], 10, 64)
			unit := managerDurationUnits[part[2]]
			if err != nil || n > int64(math.MaxInt64/unit) || total > math.MaxInt64-time.Duration(n)*unit {
				return 0, fmt.Errorf("duration %q is too long", value)
			}
			total += time.Duration(n) * unit
		}
		return total, nil
	}
	return time.ParseDuration(value)
}

// ParseRelativeStartDate parses "now" or "now+<duration>" (units d, h, m and s) and returns the offset; ok is false
// when value has neither form.
func ParseRelativeStartDate(value string) (offset time.Duration, ok bool, err error) {
	m := relativeStartDatePattern.FindStringSubmatch(strings.TrimSpace(value))
	if m == nil {
		return 0, false, nil
	}
	offset, err = ParseManagerDuration(m[1])
	return offset, true, err
}

// ParseSize parses a size in bytes: a number with an optional binary unit (B, KiB, MiB, GiB, TiB, PiB), or a
// Kubernetes quantity (1Gi, 512M) that is a whole number of bytes.
func ParseSize(value string) (int64, error) {
	value = strings.TrimSpace(value)
	if m := sizePattern.FindStringSubmatch(value); m != nil {
		n, err := strconv.ParseInt(m[1], 10, 64)
		unit := sizeUnits[m[2]]
		if err != nil || n > math.MaxInt64/unit {
			return 0, fmt.Errorf("size %q is too large", value)
		}
		return n * unit, nil
	}
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return 0, fmt.Errorf("want a size such as 1GiB or 512MiB")
	}
	bytes, ok := q.AsInt64()
	if !ok || bytes < 0 {
		return 0, fmt.Errorf("want a non-negative whole number of bytes")
	}
	return bytes, nil
}

// validateStartDate checks a start date as the ScyllaCluster API writes it: now, now+<duration> or RFC 3339.
func validateStartDate(value string, path *field.Path) field.ErrorList {
	_, ok, err := ParseRelativeStartDate(value)
	switch {
	case ok && err != nil:
		return field.ErrorList{field.Invalid(path, value, err.Error())}
	case ok:
		return nil
	}
	if _, err := time.Parse(time.RFC3339, strings.TrimSpace(value)); err != nil {
		return field.ErrorList{field.Invalid(path, value, "must be now, now+<duration> (e.g. now+3d2h) or an RFC 3339 time")}
	}
	return nil
}

// validateManagerDuration checks a non-negative duration in units d, h, m and s.
func validateManagerDuration(value string, path *field.Path) field.ErrorList {
	d, err := ParseManagerDuration(value)
	if err != nil || d < 0 {
		return field.ErrorList{field.Invalid(path, value, "must be a non-negative duration in d, h, m and s, e.g. 7d or 1d12h")}
	}
	return nil
}

// validateRetryWait checks that a retry wait isn't negative.
func validateRetryWait(d *metav1.Duration, path *field.Path) field.ErrorList {
	if d != nil && d.Duration < 0 {
		return field.ErrorList{field.Invalid(path, d.Duration.String(), "must not be negative")}
	}
	return nil
}

// FormatSize renders bytes with the largest binary unit that divides them, the way the ScyllaCluster API writes
// sizes (e.g. 1GiB).
func FormatSize(bytes int64) string {
	for _, unit := range []string{"PiB", "TiB", "GiB", "MiB", "KiB"} {
		if size := sizeUnits[unit]; bytes != 0 && bytes%size == 0 {
			return strconv.FormatInt(bytes/size, 10) + unit
		}
	}
	return strconv.FormatInt(bytes, 10) + "B"
}
