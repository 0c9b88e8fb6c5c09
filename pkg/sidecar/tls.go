package sidecar

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
)

// Ports ScyllaDB serves TLS on, next to the plain ones.
const (
	// CQLTLSPort is native_transport_port_ssl.
	CQLTLSPort = 9142
	// CQLTLSShardAwarePort is native_shard_aware_transport_port_ssl.
	CQLTLSShardAwarePort = 19142
	// AlternatorHTTPSPort is alternator_https_port.
	AlternatorHTTPSPort = 8043
)

// TLSFlags are the PEM files of the sidecar's TLS flags; empty means that endpoint serves no TLS.
type TLSFlags struct {
	// CQLCertificateFile and CQLKeyFile are the CQL serving certificate and its key.
	CQLCertificateFile string
	CQLKeyFile         string
	// CQLClientCAFile holds the CAs a CQL client certificate must chain to; clients must present one.
	CQLClientCAFile string
	// AlternatorCertificateFile and AlternatorKeyFile are the Alternator serving certificate and its key.
	AlternatorCertificateFile string
	AlternatorKeyFile         string
}

// TLSSettings are the TLS files ScyllaDB is configured with; a nil endpoint serves no TLS.
type TLSSettings struct {
	CQL        *CQLTLS
	Alternator *AlternatorTLS
}

// CQLTLS configures CQL over TLS (client_encryption_options) on CQLTLSPort.
type CQLTLS struct {
	CertificateFile string
	KeyFile         string
	// ClientCAFile, when set, makes client certificates required and checked against it.
	ClientCAFile string
}

// AlternatorTLS configures Alternator over HTTPS on AlternatorHTTPSPort.
type AlternatorTLS struct {
	CertificateFile string
	KeyFile         string
}

func (f *TLSFlags) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.CQLCertificateFile, "cql-tls-certificate-file", f.CQLCertificateFile, fmt.Sprintf("PEM serving certificate of CQL over TLS on port %d; with --cql-tls-key-file. ScyllaDB reads it again when it changes.", CQLTLSPort))
	fs.StringVar(&f.CQLKeyFile, "cql-tls-key-file", f.CQLKeyFile, "PEM private key of --cql-tls-certificate-file.")
	fs.StringVar(&f.CQLClientCAFile, "cql-tls-client-ca-file", f.CQLClientCAFile, "PEM CAs that CQL client certificates must chain to; clients over TLS must present one. Needs --cql-tls-certificate-file.")
	fs.StringVar(&f.AlternatorCertificateFile, "alternator-tls-certificate-file", f.AlternatorCertificateFile, fmt.Sprintf("PEM serving certificate of Alternator over HTTPS on port %d; with --alternator-tls-key-file.", AlternatorHTTPSPort))
	fs.StringVar(&f.AlternatorKeyFile, "alternator-tls-key-file", f.AlternatorKeyFile, "PEM private key of --alternator-tls-certificate-file.")
}

// settings checks the flags and returns what they configure: a certificate needs its key and the reverse, a client CA
// needs a CQL certificate, and every path is absolute (ScyllaDB runs with another working directory).
func (f *TLSFlags) settings() (TLSSettings, []error) {
	var errs []error
	pair := func(what, certFlag, cert, keyFlag, key string) bool {
		if (len(cert) == 0) != (len(key) == 0) {
			errs = append(errs, fmt.Errorf("--%s and --%s must be set together for %s", certFlag, keyFlag, what))
			return false
		}
		return len(cert) != 0
	}
	absolute := func(flag, path string) {
		if len(path) != 0 && !filepath.IsAbs(path) {
			errs = append(errs, fmt.Errorf("--%s must be an absolute path, got %q", flag, path))
		}
	}
	absolute("cql-tls-certificate-file", f.CQLCertificateFile)
	absolute("cql-tls-key-file", f.CQLKeyFile)
	absolute("cql-tls-client-ca-file", f.CQLClientCAFile)
	absolute("alternator-tls-certificate-file", f.AlternatorCertificateFile)
	absolute("alternator-tls-key-file", f.AlternatorKeyFile)

	var s TLSSettings
	if pair("CQL", "cql-tls-certificate-file", f.CQLCertificateFile, "cql-tls-key-file", f.CQLKeyFile) {
		s.CQL = &CQLTLS{CertificateFile: f.CQLCertificateFile, KeyFile: f.CQLKeyFile, ClientCAFile: f.CQLClientCAFile}
	} else if len(f.CQLClientCAFile) != 0 {
		errs = append(errs, fmt.Errorf("--cql-tls-client-ca-file needs --cql-tls-certificate-file and --cql-tls-key-file"))
	}
	if pair("Alternator", "alternator-tls-certificate-file", f.AlternatorCertificateFile, "alternator-tls-key-file", f.AlternatorKeyFile) {
		s.Alternator = &AlternatorTLS{CertificateFile: f.AlternatorCertificateFile, KeyFile: f.AlternatorKeyFile}
	}
	if len(errs) != 0 {
		return TLSSettings{}, errs
	}
	return s, nil
}

// The scylla.yaml keys TLSConfig may set, per endpoint.
var (
	cqlTLSConfigKeys        = []string{"client_encryption_options", "native_transport_port_ssl", "native_shard_aware_transport_port_ssl"}
	alternatorTLSConfigKeys = []string{"alternator_https_port", "alternator_encryption_options"}
)

// TLSConfig returns the scylla.yaml keys and values of s: CQL over TLS on its own ports next to the plain ones
// (client_encryption_options applies to the _ssl ports only when they are set), and Alternator over HTTPS.
func TLSConfig(s TLSSettings) map[string]any {
	config := map[string]any{}
	if c := s.CQL; c != nil {
		options := map[string]any{
			"enabled":     true,
			"certificate": c.CertificateFile,
			"keyfile":     c.KeyFile,
		}
		if len(c.ClientCAFile) != 0 {
			options["truststore"] = c.ClientCAFile
			options["require_client_auth"] = true
		}
		config["client_encryption_options"] = options
		config["native_transport_port_ssl"] = CQLTLSPort
		config["native_shard_aware_transport_port_ssl"] = CQLTLSShardAwarePort
	}
	if a := s.Alternator; a != nil {
		config["alternator_https_port"] = AlternatorHTTPSPort
		config["alternator_encryption_options"] = map[string]any{
			"certificate": a.CertificateFile,
			"keyfile":     a.KeyFile,
		}
	}
	return config
}

// ownedTLSKeys are the scylla.yaml keys the sidecar owns under s: every key of each endpoint it serves TLS for, so
// that a custom config can't half-configure it. The keys of an endpoint it does not serve stay the custom config's:
// with automatic TLS off and the user's Alternator certificate, a custom config's own CQL TLS is kept.
func ownedTLSKeys(s TLSSettings) []string {
	var keys []string
	if s.CQL != nil {
		keys = append(keys, cqlTLSConfigKeys...)
	}
	if s.Alternator != nil {
		keys = append(keys, alternatorTLSConfigKeys...)
	}
	return keys
}
