package managerclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Schedule is a task schedule.
//
// ScyllaDB Manager echoes cron as a JSON document inside a string, for example
// "{\"spec\":\"0 2 * * *\",\"start_date\":\"0001-01-01T00:00:00Z\"}". Schedule decodes both that form and a plain
// spec into Cron, and always sends the plain spec. A zero start date and a zero interval ("0", "0s") decode as unset,
// so a schedule read back compares equal to the one that was sent.
type Schedule struct {
	// Cron is the cron spec: five fields, an optional leading seconds field, or a descriptor such as @daily or
	// "@every 1h". Empty means no cron.
	Cron string
	// StartDate is the first time the task may run. Without it and without Cron, a new task runs immediately.
	StartDate *time.Time
	// Interval is the deprecated repeat interval, for example "7d" or "1d12h".
	Interval string
	// Window is an even list of "[Mon-]H:MM" points; each pair is a slot in which the task may run.
	Window []string
	// Timezone is the IANA name cron is evaluated in; empty means UTC.
	Timezone string
	// NumRetries is how many times a failed run is retried.
	NumRetries int
	// RetryWait is the initial wait between retries, for example "10m".
	RetryWait string
}

type scheduleWire struct {
	Cron       json.RawMessage `json:"cron,omitempty"`
	StartDate  *time.Time      `json:"start_date,omitempty"`
	Interval   string          `json:"interval,omitempty"`
	Window     []string        `json:"window,omitempty"`
	Timezone   string          `json:"timezone,omitempty"`
	NumRetries int             `json:"num_retries,omitempty"`
	RetryWait  string          `json:"retry_wait,omitempty"`
}

// cronDocument is the JSON document ScyllaDB Manager puts inside the cron string of its responses.
type cronDocument struct {
	Spec      string    `json:"spec"`
	StartDate time.Time `json:"start_date"`
}

// MarshalJSON sends the plain cron spec.
func (s Schedule) MarshalJSON() ([]byte, error) {
	w := scheduleWire{
		StartDate:  s.StartDate,
		Interval:   s.Interval,
		Window:     s.Window,
		Timezone:   s.Timezone,
		NumRetries: s.NumRetries,
		RetryWait:  s.RetryWait,
	}
	if s.Cron != "" {
		spec, err := json.Marshal(s.Cron)
		if err != nil {
			return nil, err
		}
		w.Cron = spec
	}
	return json.Marshal(w)
}

// UnmarshalJSON accepts cron as a plain spec, as a JSON document inside a string, or as a JSON object.
func (s *Schedule) UnmarshalJSON(data []byte) error {
	var w scheduleWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	spec, err := decodeCron(w.Cron)
	if err != nil {
		return err
	}
	*s = Schedule{
		Cron:       spec,
		StartDate:  w.StartDate,
		Interval:   w.Interval,
		Window:     w.Window,
		Timezone:   w.Timezone,
		NumRetries: w.NumRetries,
		RetryWait:  w.RetryWait,
	}
	if s.StartDate != nil && s.StartDate.IsZero() {
		s.StartDate = nil
	}
	if s.Interval == "0" || s.Interval == "0s" {
		s.Interval = ""
	}
	return nil
}

// ParseCron returns the spec of a cron value as ScyllaDB Manager returns it: either a plain spec or the JSON
// document {"spec": ..., "start_date": ...}.
func ParseCron(value string) (string, error) {
	trimmed := strings.TrimSpace(value)
	if !strings.HasPrefix(trimmed, "{") {
		return value, nil
	}
	var doc cronDocument
	if err := json.Unmarshal([]byte(trimmed), &doc); err != nil {
		return "", fmt.Errorf("can't decode cron document %q: %w", value, err)
	}
	return doc.Spec, nil
}

func decodeCron(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	if raw[0] == '{' {
		var doc cronDocument
		if err := json.Unmarshal(raw, &doc); err != nil {
			return "", fmt.Errorf("can't decode cron object: %w", err)
		}
		return doc.Spec, nil
	}
	var value string
	if err := json.Unmarshal(raw, &value); err != nil {
		return "", fmt.Errorf("can't decode cron: %w", err)
	}
	return ParseCron(value)
}
