package scyllaagent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

func TestConfigSetsS3(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name    string
		data    string
		want    bool
		wantErr string
	}{
		{name: "a config with s3 credentials", data: "auth_token: x\ns3:\n  access_key_id: a\n  secret_access_key: b\n", want: true},
		{name: "a config setting only the s3 region", data: "s3:\n  region: us-east-1\n", want: true},
		{name: "a config without s3", data: "auth_token: x\ngcs:\n  service_account_file: /f\n"},
		{name: "an empty s3 section", data: "s3: {}\n"},
		{name: "a null s3 section", data: "s3:\n"},
		{name: "an empty file", data: ""},
		{name: "not YAML, and the error does not quote it", data: "s3: [secret", wantErr: "it is not a valid YAML agent configuration"},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ConfigSetsS3([]byte(tc.data))
			switch {
			case len(tc.wantErr) != 0 && (err == nil || err.Error() != tc.wantErr):
				t.Fatalf("expected error %q, got %v", tc.wantErr, err)
			case len(tc.wantErr) == 0 && err != nil:
				t.Fatalf("unexpected error: %v", err)
			}
			if got != tc.want {
				t.Errorf("expected %v, got %v", tc.want, got)
			}
		})
	}
}

func TestMakeConfigWritesTheAgentS3Section(t *testing.T) {
	t.Parallel()
	s3 := &S3Config{AccessKeyID: "AKID", SecretAccessKey: "secret: with colon", Provider: S3ProviderMinio, Region: "us-east-1", Endpoint: "http://127.0.0.1:7070"}
	data, err := MakeConfig("token", s3)
	if err != nil {
		t.Fatal(err)
	}
	// The keys are those of scylla-manager-agent.yaml.
	var got map[string]any
	if err := yaml.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"auth_token": "token",
		"s3": map[string]any{
			"access_key_id":     "AKID",
			"secret_access_key": "secret: with colon",
			"provider":          "Minio",
			"region":            "us-east-1",
			"endpoint":          "http://127.0.0.1:7070",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected config (-want +got):\n%s", diff)
	}
	if token, err := AuthTokenFromConfig(data); err != nil || token != "token" {
		t.Errorf("the token reads back as %q, %v", token, err)
	}
	if sets, err := ConfigSetsS3(data); err != nil || !sets {
		t.Errorf("the config reads back as setting no s3: %v, %v", sets, err)
	}
}

func TestMakeConfigWithoutS3IsTheAuthTokenFile(t *testing.T) {
	t.Parallel()
	withNil, err := MakeConfig("token", nil)
	if err != nil {
		t.Fatal(err)
	}
	tokenOnly, err := MakeAuthTokenConfig("token")
	if err != nil {
		t.Fatal(err)
	}
	if string(withNil) != string(tokenOnly) || strings.Contains(string(withNil), "s3") {
		t.Errorf("expected %q, got %q", tokenOnly, withNil)
	}
	if string(tokenOnly) != "auth_token: token\n" {
		t.Errorf("the auth token file changed: %q", tokenOnly)
	}
}
