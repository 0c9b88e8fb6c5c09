package scyllaagent

import (
	"errors"

	"go.yaml.in/yaml/v3"
)

// S3 providers of the agent's s3 section (rclone's names, as scylla-manager-agent.yaml documents them).
const (
	// S3ProviderAWS is AWS S3, the agent's default.
	S3ProviderAWS = "AWS"
	// S3ProviderMinio is the provider the agent documents as tested for S3-compatible stores other than AWS: path
	// style requests to the configured endpoint.
	S3ProviderMinio = "Minio"
)

// S3Config is the s3 section of an agent configuration file: how the agent reaches S3 backup locations. Empty fields
// are left out, so that the agent's defaults (its own role, the instance's region) apply.
type S3Config struct {
	AccessKeyID     string `yaml:"access_key_id,omitempty"`
	SecretAccessKey string `yaml:"secret_access_key,omitempty"`
	Provider        string `yaml:"provider,omitempty"`
	Region          string `yaml:"region,omitempty"`
	Endpoint        string `yaml:"endpoint,omitempty"`
}

// ConfigSetsS3 tells whether an agent configuration file has an s3 section with any setting. An empty or null
// section sets nothing. The error never quotes the file: it may hold credentials.
func ConfigSetsS3(data []byte) (bool, error) {
	var config struct {
		S3 map[string]any `yaml:"s3"`
	}
	if err := yaml.Unmarshal(data, &config); err != nil {
		return false, errors.New("it is not a valid YAML agent configuration")
	}
	return len(config.S3) != 0, nil
}
