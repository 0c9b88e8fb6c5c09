package scyllaagent

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"

	"go.yaml.in/yaml/v3"
)

// authTokenConfig is the part of a ScyllaDB Manager agent configuration file that the operator generates: the auth
// token and, when a datacenter's backups go to a bucket with credentials, the s3 section.
type authTokenConfig struct {
	AuthToken string    `yaml:"auth_token"`
	S3        *S3Config `yaml:"s3,omitempty"`
}

// AuthTokenFromConfig returns the auth_token an agent configuration file sets, or "" when it sets none. The error
// never quotes the file: it may hold credentials.
func AuthTokenFromConfig(data []byte) (string, error) {
	var config authTokenConfig
	if err := yaml.Unmarshal(data, &config); err != nil {
		return "", errors.New("it is not a valid YAML agent configuration")
	}
	return config.AuthToken, nil
}

// MakeAuthTokenConfig returns an agent configuration file that sets only the auth token, which AuthTokenFromConfig
// reads back unchanged. The error never quotes the token.
func MakeAuthTokenConfig(token string) ([]byte, error) {
	return MakeConfig(token, nil)
}

// MakeConfig returns an agent configuration file that sets the auth token and, when s3 is not nil, the s3 section.
// Without s3 it is byte for byte MakeAuthTokenConfig's file. AuthTokenFromConfig reads the token back unchanged. The
// error never quotes the token or the credentials.
func MakeConfig(token string, s3 *S3Config) ([]byte, error) {
	data, err := yaml.Marshal(authTokenConfig{AuthToken: token, S3: s3})
	if err != nil {
		return nil, errors.New("can't marshal the agent auth token file")
	}
	return data, nil
}

// AuthTokenAlphabet and AuthTokenLength shape generated agent auth tokens: 128 alphanumeric characters, about 762
// bits of entropy.
const (
	AuthTokenAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	AuthTokenLength   = 128
)

// GenerateAuthToken returns a new random agent auth token.
func GenerateAuthToken() (string, error) {
	token := make([]byte, AuthTokenLength)
	alphabetSize := big.NewInt(int64(len(AuthTokenAlphabet)))
	for i := range token {
		n, err := rand.Int(rand.Reader, alphabetSize)
		if err != nil {
			return "", fmt.Errorf("can't read random bytes: %w", err)
		}
		token[i] = AuthTokenAlphabet[n.Int64()]
	}
	return string(token), nil
}
