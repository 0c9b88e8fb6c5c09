package managerclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// BackupProperties are the properties of a backup task. Optional scalars are pointers so that "unset" (and with it
// ScyllaDB Manager's default) differs from an explicit zero. Extra carries properties this type does not model;
// they are sent and received verbatim.
type BackupProperties struct {
	// Location lists "[dc:]<provider>:<bucket>" entries; providers are s3, gcs, azure and localstorage.
	Location []string `json:"location,omitempty"`
	// Keyspace lists keyspace and table glob patterns; a leading "!" excludes.
	Keyspace []string `json:"keyspace,omitempty"`
	// DC lists datacenter glob patterns; a leading "!" excludes.
	DC []string `json:"dc,omitempty"`
	// Retention is how many backups to keep; ScyllaDB Manager uses 3 when both retentions are unset.
	Retention *int64 `json:"retention,omitempty"`
	// RetentionDays is how many days to keep backups.
	RetentionDays *int64 `json:"retention_days,omitempty"`
	// RateLimit lists "[dc:]<MiB/s>" upload limits.
	RateLimit []string `json:"rate_limit,omitempty"`
	// SnapshotParallel lists "[dc:]<nodes>" limits.
	SnapshotParallel []string `json:"snapshot_parallel,omitempty"`
	// UploadParallel lists "[dc:]<nodes>" limits.
	UploadParallel []string `json:"upload_parallel,omitempty"`
	// Transfers is the rclone transfer count; -1 takes it from the agent configuration.
	Transfers *int64 `json:"transfers,omitempty"`
	// Continue resumes an interrupted backup; ScyllaDB Manager defaults it to true.
	Continue   *bool `json:"continue,omitempty"`
	PurgeOnly  *bool `json:"purge_only,omitempty"`
	SkipSchema *bool `json:"skip_schema,omitempty"`
	// Method is auto, rclone (the default) or native.
	Method string `json:"method,omitempty"`
	// RetentionLockMode is disabled, unlocked, locked or event_based_hold; only GCS supports the lock modes.
	RetentionLockMode string `json:"retention_lock_mode,omitempty"`

	// Extra holds properties not modelled above, keyed by JSON name.
	Extra map[string]json.RawMessage `json:"-"`
}

// MarshalJSON merges Extra into the modelled fields; a modelled field wins over an Extra key of the same name.
func (p BackupProperties) MarshalJSON() ([]byte, error) {
	type plain BackupProperties
	return marshalWithExtra(plain(p), p.Extra)
}

// UnmarshalJSON decodes the modelled fields and keeps every other key in Extra.
func (p *BackupProperties) UnmarshalJSON(data []byte) error {
	type plain BackupProperties
	var v plain
	extra, err := unmarshalWithExtra(data, &v)
	if err != nil {
		return err
	}
	*p = BackupProperties(v)
	p.Extra = extra
	return nil
}

// Raw encodes the properties for TaskUpdate.Properties.
func (p BackupProperties) Raw() (json.RawMessage, error) {
	return json.Marshal(p)
}

// RepairProperties are the properties of a repair task. Optional scalars are pointers so that "unset" (and with it
// ScyllaDB Manager's default) differs from an explicit zero. Extra carries properties this type does not model,
// for example incremental_mode and keyspace_replication; they are sent and received verbatim.
type RepairProperties struct {
	// Keyspace lists keyspace and table glob patterns; ScyllaDB Manager defaults it to ["*", "!system_traces"].
	Keyspace []string `json:"keyspace,omitempty"`
	// DC lists datacenter glob patterns; a leading "!" excludes.
	DC []string `json:"dc,omitempty"`
	// Host limits the repair to the token ranges of one node; it must be an IP address.
	Host            string `json:"host,omitempty"`
	IgnoreDownHosts *bool  `json:"ignore_down_hosts,omitempty"`
	FailFast        *bool  `json:"fail_fast,omitempty"`
	// Continue resumes an interrupted repair; ScyllaDB Manager defaults it to true.
	Continue *bool `json:"continue,omitempty"`
	// Intensity is sent as a number: 0 means the maximum, values in (0,1) become 1 and larger values are truncated.
	// Send whole numbers only.
	Intensity *float64 `json:"intensity,omitempty"`
	// Parallel is the number of parallel repair jobs; 0 means the maximum.
	Parallel *int64 `json:"parallel,omitempty"`
	// SmallTableThreshold is in bytes; ScyllaDB Manager defaults it to 1 GiB.
	SmallTableThreshold *int64 `json:"small_table_threshold,omitempty"`
	AllowEmpty          *bool  `json:"allow_empty,omitempty"`

	// Extra holds properties not modelled above, keyed by JSON name.
	Extra map[string]json.RawMessage `json:"-"`
}

// MarshalJSON merges Extra into the modelled fields; a modelled field wins over an Extra key of the same name.
func (p RepairProperties) MarshalJSON() ([]byte, error) {
	type plain RepairProperties
	return marshalWithExtra(plain(p), p.Extra)
}

// UnmarshalJSON decodes the modelled fields and keeps every other key in Extra.
func (p *RepairProperties) UnmarshalJSON(data []byte) error {
	type plain RepairProperties
	var v plain
	extra, err := unmarshalWithExtra(data, &v)
	if err != nil {
		return err
	}
	*p = RepairProperties(v)
	p.Extra = extra
	return nil
}

// Raw encodes the properties for TaskUpdate.Properties.
func (p RepairProperties) Raw() (json.RawMessage, error) {
	return json.Marshal(p)
}

// decodeProperties decodes raw task properties into v; empty and null properties leave v zero.
func decodeProperties(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// marshalWithExtra encodes v, a struct, and adds the keys of extra that v does not have.
func marshalWithExtra(v any, extra map[string]json.RawMessage) ([]byte, error) {
	known, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(extra) == 0 {
		return known, nil
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(known, &fields); err != nil {
		return nil, err
	}
	tagged := jsonFieldNames(reflect.TypeOf(v))
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, isField := tagged[k]; isField {
			// A modelled field owns its key even when it is empty and omitted.
			continue
		}
		if !json.Valid(extra[k]) {
			return nil, fmt.Errorf("extra property %q is not valid JSON", k)
		}
		fields[k] = extra[k]
	}
	return json.Marshal(fields)
}

// unmarshalWithExtra decodes data into v, a pointer to a struct, and returns the keys v has no field for.
func unmarshalWithExtra(data []byte, v any) (map[string]json.RawMessage, error) {
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	tagged := jsonFieldNames(reflect.TypeOf(v).Elem())
	var extra map[string]json.RawMessage
	for k, val := range fields {
		if _, isField := tagged[k]; isField {
			continue
		}
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[k] = val
	}
	return extra, nil
}

var fieldNamesCache sync.Map // reflect.Type -> map[string]struct{}

// jsonFieldNames returns the JSON names of t's exported, encoded fields.
func jsonFieldNames(t reflect.Type) map[string]struct{} {
	if cached, ok := fieldNamesCache.Load(t); ok {
		return cached.(map[string]struct{})
	}
	names := map[string]struct{}{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		names[name] = struct{}{}
	}
	fieldNamesCache.Store(t, names)
	return names
}
