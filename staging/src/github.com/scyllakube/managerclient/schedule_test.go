package managerclient

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScheduleSendsPlainCron(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name     string
		schedule Schedule
		want     string
	}{
		{
			name:     "an empty schedule is an empty object",
			schedule: Schedule{},
			want:     `{}`,
		},
		{
			name:     "cron is sent as the plain spec",
			schedule: Schedule{Cron: "0 2 * * *"},
			want:     `{"cron":"0 2 * * *"}`,
		},
		{
			name: "every field is sent",
			schedule: Schedule{
				Cron: "@every 1h", StartDate: timePtr("2025-01-02T03:04:05Z"), Interval: "7d", Window: []string{"22:00", "6:00"},
				Timezone: "Europe/Warsaw", NumRetries: 3, RetryWait: "10m",
			},
			want: `{"cron":"@every 1h","start_date":"2025-01-02T03:04:05Z","interval":"7d","window":["22:00","6:00"],` +
				`"timezone":"Europe/Warsaw","num_retries":3,"retry_wait":"10m"}`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(tc.schedule)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScheduleDecodesCronQuirk(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name    string
		json    string
		want    Schedule
		wantErr string
	}{
		{
			name: "JSON document inside a string",
			json: `{"cron":"{\"spec\":\"0 2 * * *\",\"start_date\":\"0001-01-01T00:00:00Z\"}"}`,
			want: Schedule{Cron: "0 2 * * *"},
		},
		{
			name: "JSON document with an empty spec",
			json: `{"cron":"{\"spec\":\"\",\"start_date\":\"0001-01-01T00:00:00Z\"}"}`,
			want: Schedule{},
		},
		{
			name: "JSON document with leading spaces",
			json: `{"cron":"  {\"spec\":\"@daily\"}"}`,
			want: Schedule{Cron: "@daily"},
		},
		{
			name: "plain spec",
			json: `{"cron":"@every 15s"}`,
			want: Schedule{Cron: "@every 15s"},
		},
		{
			name: "JSON object instead of a string",
			json: `{"cron":{"spec":"0 3 * * *","start_date":"2025-01-01T00:00:00Z"}}`,
			want: Schedule{Cron: "0 3 * * *"},
		},
		{
			name: "null cron",
			json: `{"cron":null}`,
			want: Schedule{},
		},
		{
			name: "zero start date and zero interval are unset",
			json: `{"start_date":"0001-01-01T00:00:00Z","interval":"0","retry_wait":"10m","num_retries":2}`,
			want: Schedule{RetryWait: "10m", NumRetries: 2},
		},
		{
			name: "zero interval spelled 0s is unset",
			json: `{"interval":"0s","start_date":null}`,
			want: Schedule{},
		},
		{
			name: "every field",
			json: `{"cron":"{\"spec\":\"0 2 * * SAT\",\"start_date\":\"2025-01-01T00:00:00Z\"}","window":["Sat-22:00","Sun-06:00"],` +
				`"timezone":"UTC","start_date":"2025-01-01T00:00:00Z","interval":"1d12h","num_retries":3,"retry_wait":"5m"}`,
			want: Schedule{
				Cron: "0 2 * * SAT", Window: []string{"Sat-22:00", "Sun-06:00"}, Timezone: "UTC",
				StartDate: timePtr("2025-01-01T00:00:00Z"), Interval: "1d12h", NumRetries: 3, RetryWait: "5m",
			},
		},
		{
			name:    "a broken JSON document is an error",
			json:    `{"cron":"{\"spec\":"}`,
			wantErr: "can't decode cron document",
		},
		{
			name:    "a cron that is a number is an error",
			json:    `{"cron":5}`,
			wantErr: "can't decode cron",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got Schedule
			err := json.Unmarshal([]byte(tc.json), &got)
			if expectError(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("schedule (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScheduleRoundTripsThroughTheServerForm(t *testing.T) {
	t.Parallel()
	sent := Schedule{Cron: "0 23 * * SAT", StartDate: timePtr("2025-03-01T00:00:00Z"), NumRetries: 3, Timezone: "UTC"}
	// The server echoes the spec inside a JSON document in a string.
	echoed := `{"cron":"{\"spec\":\"0 23 * * SAT\",\"start_date\":\"2025-03-01T00:00:00Z\"}","window":null,"timezone":"UTC",` +
		`"start_date":"2025-03-01T00:00:00Z","interval":"0","num_retries":3,"retry_wait":""}`
	var got Schedule
	if err := json.Unmarshal([]byte(echoed), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sent, got); diff != "" {
		t.Errorf("echoed schedule differs from the sent one (-sent +echoed):\n%s", diff)
	}
}

func TestParseCron(t *testing.T) {
	t.Parallel()
	tt := []struct {
		value   string
		want    string
		wantErr bool
	}{
		{value: "0 2 * * *", want: "0 2 * * *"},
		{value: `{"spec":"0 2 * * *","start_date":"0001-01-01T00:00:00Z"}`, want: "0 2 * * *"},
		{value: "", want: ""},
		{value: `{"spec":`, wantErr: true},
	}
	for _, tc := range tt {
		t.Run(tc.value, func(t *testing.T) {
			t.Parallel()
			got, err := ParseCron(tc.value)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("spec %q, want %q", got, tc.want)
			}
		})
	}
}
