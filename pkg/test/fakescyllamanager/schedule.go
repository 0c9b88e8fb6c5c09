package fakescyllamanager

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// cronParser accepts what ScyllaDB Manager accepts: five fields with an optional leading seconds field, the
// @descriptors, "@every <duration>", and TZ= or CRON_TZ= prefixes.
var cronParser = cron.NewParser(
	cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor,
)

// cronField is the cron of a request: a plain spec, or the JSON document ScyllaDB Manager itself returns.
type cronField struct {
	spec  string
	sched cron.Schedule
}

// cronDocument is the JSON document inside the cron string of responses.
type cronDocument struct {
	Spec      string    `json:"spec"`
	StartDate time.Time `json:"start_date"`
}

func (c *cronField) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*c = cronField{}
		return nil
	}
	var value string
	if err := json.Unmarshal(data, &value); err != nil {
		return fmt.Errorf("cron: %w", err)
	}
	spec := value
	if strings.HasPrefix(strings.TrimSpace(value), "{") {
		var doc cronDocument
		if err := json.Unmarshal([]byte(value), &doc); err != nil {
			return fmt.Errorf("cron: %w", err)
		}
		spec = doc.Spec
	}
	parsed, err := parseCron(spec)
	if err != nil {
		return err
	}
	*c = parsed
	return nil
}

func parseCron(spec string) (cronField, error) {
	if spec == "" {
		return cronField{}, nil
	}
	sched, err := cronParser.Parse(spec)
	if err != nil {
		return cronField{}, fmt.Errorf("cron: %w", err)
	}
	return cronField{spec: spec, sched: sched}, nil
}

// durationField is ScyllaDB Manager's duration: digits with units d, h, m and s, for example "7d" or "1d12h".
type durationField time.Duration

var durationPart = regexp.MustCompile(`^(\d+)(d|h|m|s)`)

func (d *durationField) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*d = 0
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = durationField(v)
	return nil
}

func parseDuration(s string) (time.Duration, error) {
	if s == "" || s == "0" {
		return 0, nil
	}
	var total time.Duration
	rest := s
	for rest != "" {
		m := durationPart.FindStringSubmatch(rest)
		// A unit followed by a letter ("ms", "us") is a sub-second unit ScyllaDB Manager rejects.
		if m == nil || (len(rest) > len(m[0]) && rest[len(m[0])] >= 'a' && rest[len(m[0])] <= 'z') {
			return 0, fmt.Errorf("invalid duration %q: use digits with units d, h, m and s, for example 7d or 1d12h", s)
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q: %w", s, err)
		}
		unit := map[string]time.Duration{"d": 24 * time.Hour, "h": time.Hour, "m": time.Minute, "s": time.Second}[m[2]]
		total += time.Duration(n) * unit
		rest = rest[len(m[0]):]
	}
	return total, nil
}

// formatDuration renders a duration the way it is parsed; zero is "0".
func formatDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	var b strings.Builder
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.unit; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.unit
		}
	}
	return b.String()
}

// windowField is a list of "[Mon-]H:MM" points, an even number of them.
type windowField []string

var windowPoint = regexp.MustCompile(`^(?i:(mon|tue|wed|thu|fri|sat|sun)-)?([01]?\d|2[0-3]):[0-5]\d$`)

func (w *windowField) UnmarshalJSON(data []byte) error {
	var points []string
	if err := json.Unmarshal(data, &points); err != nil {
		return fmt.Errorf("window: %w", err)
	}
	if len(points)%2 != 0 {
		return fmt.Errorf("window: number of points must be even, got %d", len(points))
	}
	for _, p := range points {
		if !windowPoint.MatchString(p) {
			return fmt.Errorf("window: invalid point %q, the format is [Mon-]H:MM", p)
		}
	}
	*w = points
	return nil
}

// timezoneField is an IANA time zone name.
type timezoneField string

func (tz *timezoneField) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("timezone: %w", err)
	}
	if s != "" {
		if _, err := time.LoadLocation(s); err != nil {
			return fmt.Errorf("timezone: %w", err)
		}
	}
	*tz = timezoneField(s)
	return nil
}

// scheduleIn is the schedule of a request.
type scheduleIn struct {
	Cron       cronField     `json:"cron"`
	Window     windowField   `json:"window"`
	Timezone   timezoneField `json:"timezone"`
	StartDate  *time.Time    `json:"start_date"`
	Interval   durationField `json:"interval"`
	NumRetries int           `json:"num_retries"`
	RetryWait  durationField `json:"retry_wait"`
}

// schedule is a stored schedule.
type schedule struct {
	Cron cronField
	// CronStartDate is the start date the request carried; ScyllaDB Manager copies it into the cron.
	CronStartDate time.Time
	StartDate     time.Time
	// ScheduledAt is when ScyllaDB Manager's scheduler queued the schedule: the task's creation or last update. The
	// next activation it lists is the one queued then, which "@every" counts from.
	ScheduledAt time.Time
	Interval    time.Duration
	Window      []string
	Timezone    string
	NumRetries  int
	RetryWait   time.Duration
}

func (in scheduleIn) schedule() schedule {
	s := schedule{
		Cron:       in.Cron,
		Window:     slices.Clone([]string(in.Window)),
		Timezone:   string(in.Timezone),
		Interval:   time.Duration(in.Interval),
		NumRetries: in.NumRetries,
		RetryWait:  time.Duration(in.RetryWait),
	}
	if in.StartDate != nil {
		// Stored in a CQL timestamp, which keeps milliseconds.
		s.StartDate = in.StartDate.UTC().Truncate(time.Millisecond)
		s.CronStartDate = s.StartDate
	}
	return s
}

// scheduleOut is a schedule in a response: cron is a JSON document inside a string.
type scheduleOut struct {
	Cron       string    `json:"cron"`
	Window     []string  `json:"window"`
	Timezone   string    `json:"timezone"`
	StartDate  time.Time `json:"start_date"`
	Interval   string    `json:"interval"`
	NumRetries int       `json:"num_retries"`
	RetryWait  string    `json:"retry_wait"`
}

func (s schedule) out() scheduleOut {
	doc, err := json.Marshal(cronDocument{Spec: s.Cron.spec, StartDate: s.CronStartDate})
	if err != nil {
		panic(fmt.Sprintf("can't encode cron document: %v", err))
	}
	return scheduleOut{
		Cron:       string(doc),
		Window:     slices.Clone(s.Window),
		Timezone:   s.Timezone,
		StartDate:  s.StartDate,
		Interval:   formatDuration(s.Interval),
		NumRetries: s.NumRetries,
		RetryWait:  formatDuration(s.RetryWait),
	}
}

func (s schedule) location() *time.Location {
	if s.Timezone == "" {
		return time.UTC
	}
	loc, err := time.LoadLocation(s.Timezone)
	if err != nil {
		// The name was validated when the schedule was decoded.
		return time.UTC
	}
	return loc
}

// nextActivation is the next time the schedule fires after now, or nil if it never fires again. Cron takes
// precedence; its first activation is the first match after its start date. "@every" counts from when the task was
// scheduled (or from its start date, when later), as ScyllaDB Manager lists the activation its scheduler queued then
// rather than one counted from the time of the list. Without cron, the legacy interval repeats from the start date;
// without either, a start date in the future is a one-shot.
func (s schedule) nextActivation(now time.Time) *time.Time {
	var next time.Time
	every, isEvery := s.Cron.sched.(cron.ConstantDelaySchedule)
	switch {
	case isEvery && !s.ScheduledAt.IsZero() && every.Delay > 0:
		from := s.ScheduledAt
		if s.CronStartDate.After(from) {
			from = s.CronStartDate
		}
		// As cron's Next does, from a whole second.
		next = from.Truncate(time.Second).Add(every.Delay)
		if !next.After(now) {
			next = next.Add((now.Sub(next)/every.Delay + 1) * every.Delay)
		}
	case s.Cron.sched != nil:
		from := now
		if s.CronStartDate.After(from) {
			from = s.CronStartDate
		}
		next = s.Cron.sched.Next(from.In(s.location())).UTC()
	case s.Interval > 0:
		next = s.StartDate
		if !next.After(now) {
			periods := now.Sub(next)/s.Interval + 1
			next = next.Add(periods * s.Interval)
		}
	case s.StartDate.After(now):
		next = s.StartDate
	default:
		return nil
	}
	if next.IsZero() {
		return nil
	}
	return &next
}

// validateCreate applies the start-date rules of task creation and reports whether the task runs immediately.
func (s *schedule) validateCreate(now time.Time) (runNow bool, err error) {
	if s.StartDate.IsZero() {
		s.StartDate = now.UTC().Truncate(time.Millisecond)
		return s.Cron.sched == nil, nil
	}
	if s.StartDate.Before(now) && s.Interval != 0 {
		return false, errors.New("start date of scheduled task cannot be in the past")
	}
	return false, nil
}
