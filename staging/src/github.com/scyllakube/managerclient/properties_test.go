package managerclient

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rawProperties is what BackupProperties and RepairProperties have in common.
type rawProperties interface {
	Raw() (json.RawMessage, error)
}

func TestPropertiesCarryUnknownProperties(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name  string
		raw   string
		empty func() rawProperties
		want  rawProperties
	}{
		{
			name: "backup",
			raw: `{"location":["dc1:s3:b1","gcs:b2"],"retention":0,"retention_days":30,"continue":false,"transfers":-1,` +
				`"method":"native","purge_only":true,"new_flag":true,"new_obj":{"a":[1,2]}}`,
			empty: func() rawProperties { return &BackupProperties{} },
			want: &BackupProperties{
				Location: []string{"dc1:s3:b1", "gcs:b2"}, Retention: ptr[int64](0), RetentionDays: ptr[int64](30),
				Continue: ptr(false), Transfers: ptr[int64](-1), Method: "native", PurgeOnly: ptr(true),
				Extra: map[string]json.RawMessage{"new_flag": json.RawMessage(`true`), "new_obj": json.RawMessage(`{"a":[1,2]}`)},
			},
		},
		{
			name: "repair",
			raw: `{"keyspace":["*","!system_traces"],"dc":["dc1"],"host":"10.0.0.1","ignore_down_hosts":true,"fail_fast":false,` +
				`"intensity":0.5,"parallel":0,"small_table_threshold":1073741824,"allow_empty":true,"incremental_mode":"disabled"}`,
			empty: func() rawProperties { return &RepairProperties{} },
			want: &RepairProperties{
				Keyspace: []string{"*", "!system_traces"}, DC: []string{"dc1"}, Host: "10.0.0.1", IgnoreDownHosts: ptr(true),
				FailFast: ptr(false), Intensity: ptr(0.5), Parallel: ptr[int64](0), SmallTableThreshold: ptr[int64](1 << 30),
				AllowEmpty: ptr(true), Extra: map[string]json.RawMessage{"incremental_mode": json.RawMessage(`"disabled"`)},
			},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.empty()
			if err := json.Unmarshal([]byte(tc.raw), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, equateJSON); diff != "" {
				t.Fatalf("decoded (-want +got):\n%s", diff)
			}
			encoded, err := got.Raw()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(json.RawMessage(tc.raw), encoded, equateJSON); diff != "" {
				t.Errorf("re-encoded (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPropertiesEncoding(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name    string
		props   json.Marshaler
		want    string
		wantErr string
	}{
		{
			name:  "empty backup properties are an empty object",
			props: BackupProperties{},
			want:  `{}`,
		},
		{
			name:  "unset scalars are omitted and explicit zeros kept",
			props: BackupProperties{Location: []string{"s3:b"}, Retention: ptr[int64](0), SkipSchema: ptr(false)},
			want:  `{"location":["s3:b"],"retention":0,"skip_schema":false}`,
		},
		{
			name: "a modelled field wins over an extra property of the same name, even when empty",
			props: RepairProperties{Keyspace: []string{"ks"}, Extra: map[string]json.RawMessage{
				"keyspace": json.RawMessage(`["other"]`), "host": json.RawMessage(`"10.0.0.9"`), "x": json.RawMessage(`1`),
			}},
			want: `{"keyspace":["ks"],"x":1}`,
		},
		{
			name:    "an invalid extra property is an error",
			props:   RepairProperties{Extra: map[string]json.RawMessage{"x": json.RawMessage(`{`)}},
			wantErr: "not valid JSON",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.props.MarshalJSON()
			if expectError(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(json.RawMessage(tc.want), json.RawMessage(got), equateJSON); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTaskPropertiesDecoding(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name       string
		properties string
		wantBackup *BackupProperties
		wantErr    string
	}{
		{name: "absent properties decode to zero", properties: "", wantBackup: &BackupProperties{}},
		{name: "null properties decode to zero", properties: "null", wantBackup: &BackupProperties{}},
		{name: "an empty object decodes to zero", properties: "{}", wantBackup: &BackupProperties{}},
		{name: "a list is an error", properties: `["s3:b"]`, wantErr: `can't decode backup properties of task "t1"`},
		{name: "a wrongly typed field is an error", properties: `{"retention":"3"}`, wantErr: "cannot unmarshal string"},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			task := &Task{ID: "t1", Properties: json.RawMessage(tc.properties)}
			got, err := task.BackupProperties()
			if expectError(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(tc.wantBackup, got); diff != "" {
				t.Errorf("properties (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("repair properties decode from a task", func(t *testing.T) {
		t.Parallel()
		task := &Task{ID: "t2", Properties: json.RawMessage(`{"intensity":2,"parallel":1}`)}
		got, err := task.RepairProperties()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&RepairProperties{Intensity: ptr(2.0), Parallel: ptr[int64](1)}, got); diff != "" {
			t.Errorf("properties (-want +got):\n%s", diff)
		}
	})
}
