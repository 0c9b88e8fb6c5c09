package framework

import (
	"flag"
	"io"
	"strconv"
	"testing"
)

func TestSetDefaultFlagKeepsACommandLineValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		flag    string
		want    string
		wantErr string
	}{
		{name: "unset flag gets the default", flag: "test.parallel", want: "8"},
		{name: "command line wins", args: []string{"-test.parallel=3"}, flag: "test.parallel", want: "3"},
		{name: "unknown flag", flag: "nope", wantErr: "no -nope flag: call this from TestMain, after flag.Parse"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			parallel := fs.Int("test.parallel", 2, "")
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := setDefaultFlag(fs, tc.flag, "8")
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("want error %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fs.Lookup("test.parallel").Value.String(); got != tc.want || got != strconv.Itoa(*parallel) {
				t.Errorf("want -test.parallel=%s, got %s", tc.want, got)
			}
		})
	}
}
