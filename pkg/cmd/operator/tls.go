package operator

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/scyllakube/scylla-operator/pkg/certs"
	"github.com/scyllakube/scylla-operator/pkg/controller/scylladbdatacenter"
)

// TLSOptions are the flags of automatic TLS: the certificates the operator keeps for every datacenter (docs/tls.md).
type TLSOptions struct {
	Enabled      bool
	KeyAlgorithm string
	scylladbdatacenter.CertificateOptions
}

// NewTLSOptions returns TLSOptions with their defaults: on, ECDSA P-256.
func NewTLSOptions() TLSOptions {
	o := TLSOptions{Enabled: true, CertificateOptions: scylladbdatacenter.DefaultCertificateOptions()}
	o.KeyAlgorithm = string(o.CertificateOptions.KeyAlgorithm)
	return o
}

// AddFlags registers the TLS flags.
func (o *TLSOptions) AddFlags(cmd *cobra.Command) {
	flags := cmd.Flags()
	flags.BoolVar(&o.Enabled, "automatic-tls", o.Enabled, "Issue and rotate a serving CA and certificate, a client CA and an admin client certificate for every datacenter, and serve CQL (port 9142) and Alternator (HTTPS) over TLS with them.")
	flags.StringVar(&o.KeyAlgorithm, "tls-key-algorithm", o.KeyAlgorithm, fmt.Sprintf("Algorithm of the generated keys: %s, %s or %s.", certs.ECDSAP256, certs.RSA2048, certs.RSA4096))
	flags.DurationVar(&o.CAValidity, "tls-ca-validity", o.CAValidity, "How long a generated CA is valid.")
	flags.DurationVar(&o.CertificateValidity, "tls-certificate-validity", o.CertificateValidity, "How long a serving or client certificate is valid.")
	flags.Float64Var(&o.RefreshFraction, "tls-refresh-fraction", o.RefreshFraction, "Fraction of a CA's or certificate's validity after which it is renewed; greater than 0 and less than 1.")
	flags.DurationVar(&o.TrustPropagationDelay, "tls-trust-propagation-delay", o.TrustPropagationDelay, "How long a changed certificate Secret takes to reach the files mounted in every pod (the kubelet's sync period and cache TTL); a new CA signs nothing until it has been trusted that long.")
}

// Validate rejects TLS options the operator can't keep certificates valid with. Disabled, they are not checked.
func (o *TLSOptions) Validate() error {
	if !o.Enabled {
		return nil
	}
	alg := certs.KeyAlgorithm(o.KeyAlgorithm)
	if len(alg) == 0 {
		return errors.New("--tls-key-algorithm must not be empty")
	}
	if err := certs.ValidateKeyAlgorithm(alg); err != nil {
		return fmt.Errorf("--tls-key-algorithm: %w", err)
	}
	c := o.CertificateOptions
	c.KeyAlgorithm = alg
	if err := c.Validate(); err != nil {
		return fmt.Errorf("--tls-ca-validity, --tls-certificate-validity, --tls-refresh-fraction and --tls-trust-propagation-delay: %w", err)
	}
	return nil
}

// apply turns automatic TLS on in the datacenter controller, when enabled.
func (o *TLSOptions) apply(c *scylladbdatacenter.Controller) error {
	if !o.Enabled {
		return nil
	}
	options := o.CertificateOptions
	options.KeyAlgorithm = certs.KeyAlgorithm(o.KeyAlgorithm)
	return c.SetCertificateOptions(options)
}
