package scyllaagent

import (
	"strings"
	"testing"
)

func TestAuthTokenFromConfig(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name    string
		data    string
		want    string
		wantErr string
	}{
		{name: "a config setting the token", data: "auth_token: secret\nhttps: 0.0.0.0:10001\n", want: "secret"},
		{name: "a config without a token", data: "s3:\n  region: us-east-1\n"},
		{name: "an empty file", data: ""},
		{name: "not YAML, and the error does not quote it", data: "auth_token: [secret", wantErr: "it is not a valid YAML agent configuration"},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := AuthTokenFromConfig([]byte(tc.data))
			switch {
			case len(tc.wantErr) != 0 && (err == nil || err.Error() != tc.wantErr):
				t.Fatalf("expected error %q, got %v", tc.wantErr, err)
			case len(tc.wantErr) == 0 && err != nil:
				t.Fatalf("unexpected error: %v", err)
			}
			if got != tc.want {
				t.Errorf("expected %q, got %q", tc.want, got)
			}
		})
	}
}

func TestMakeAuthTokenConfigRoundTrips(t *testing.T) {
	t.Parallel()
	for _, token := range []string{"plain", "with: colon", "'quoted' \"both\"", "#hash", ""} {
		data, err := MakeAuthTokenConfig(token)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AuthTokenFromConfig(data)
		if err != nil {
			t.Fatal(err)
		}
		if got != token {
			t.Errorf("token %q read back as %q", token, got)
		}
	}
}

func TestGenerateAuthTokenIsLongAndAlphanumeric(t *testing.T) {
	t.Parallel()
	a, err := GenerateAuthToken()
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenerateAuthToken()
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 128 || strings.Trim(a, AuthTokenAlphabet) != "" {
		t.Errorf("token %q is not 128 alphanumeric characters", a)
	}
	if a == b {
		t.Errorf("two tokens are equal")
	}
}
