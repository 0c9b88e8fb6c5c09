package naming

// Names of the certificate authorities, certificates and connection configs the operator keeps for every
// ScyllaDBDatacenter (api-reference.md, "Certificates"). A Secret and a ConfigMap may share a name: the CA's key is
// in the Secret, the CAs a peer must trust in the ConfigMap of the same name.

// ServingCAName returns the name of the Secret with the CA that signs the datacenter's CQL serving certificates,
// and of the ConfigMap with the CAs a client must trust.
func ServingCAName(sdcName string) string {
	return boundedName(sdcName+"-local-serving-ca", dns1123SubdomainMaxLength)
}

// ServingCertsName returns the name of the kubernetes.io/tls Secret with the CQL serving certificate every node of
// the datacenter serves.
func ServingCertsName(sdcName string) string {
	return boundedName(sdcName+"-local-serving-certs", dns1123SubdomainMaxLength)
}

// ClientCAName returns the name of the Secret with the CA that signs client certificates, and of the ConfigMap with
// the CAs ScyllaDB trusts for client authentication.
func ClientCAName(sdcName string) string {
	return boundedName(sdcName+"-local-client-ca", dns1123SubdomainMaxLength)
}

// AdminClientCertName returns the name of the kubernetes.io/tls Secret with the admin's client certificate.
func AdminClientCertName(sdcName string) string {
	return boundedName(sdcName+"-local-user-admin", dns1123SubdomainMaxLength)
}

// AdminCQLConnectionConfigsName returns the name of the Secret with the admin's ready-to-use CQL connection
// configuration (CQLConnectionConfigKey and the PEM files it names).
func AdminCQLConnectionConfigsName(sdcName string) string {
	return boundedName(sdcName+"-local-cql-connection-configs-admin", dns1123SubdomainMaxLength)
}

// AlternatorServingCAName returns the name of the Secret with the CA that signs the Alternator serving certificate,
// and of the ConfigMap with the CAs an Alternator client must trust.
func AlternatorServingCAName(sdcName string) string {
	return boundedName(sdcName+"-alternator-local-serving-ca", dns1123SubdomainMaxLength)
}

// AlternatorServingCertsName returns the name of the kubernetes.io/tls Secret with the Alternator serving
// certificate.
func AlternatorServingCertsName(sdcName string) string {
	return boundedName(sdcName+"-alternator-local-serving-certs", dns1123SubdomainMaxLength)
}

// CertificateNames returns the names of every certificate Secret and ConfigMap of a datacenter, in the order above.
func CertificateNames(sdcName string) []string {
	return []string{
		ServingCAName(sdcName), ServingCertsName(sdcName), ClientCAName(sdcName), AdminClientCertName(sdcName),
		AdminCQLConnectionConfigsName(sdcName), AlternatorServingCAName(sdcName), AlternatorServingCertsName(sdcName),
	}
}

// Keys of the certificate Secrets and ConfigMaps. Certificate Secrets are of type kubernetes.io/tls and hold
// tls.crt and tls.key (corev1.TLSCertKey, corev1.TLSPrivateKeyKey).
const (
	// CABundleKey is the key of a CA ConfigMap holding, as PEM, every CA a peer must trust: the current one first,
	// then the ones it replaced that still sign a served certificate.
	CABundleKey = "ca-bundle.crt"

	// CQLConnectionConfigKey is the key of the admin connection config Secret with a cqlshrc that connects over TLS
	// with the admin certificate, once the Secret is mounted at CQLConnectionConfigDir.
	CQLConnectionConfigKey = "cqlshrc"
	// CQLConnectionConfigCAKey, CQLConnectionConfigCertKey and CQLConnectionConfigKeyKey are the keys of the admin
	// connection config Secret with the serving CA bundle, the admin certificate and its private key.
	CQLConnectionConfigCAKey   = "ca.crt"
	CQLConnectionConfigCertKey = "tls.crt"
	CQLConnectionConfigKeyKey  = "tls.key"
	// CQLConnectionConfigDir is where the cqlshrc of the admin connection config expects the Secret to be mounted.
	CQLConnectionConfigDir = "/etc/scylla-operator.scylladb.com/cql-connection-config"
)

// Volumes of a ScyllaDB pod with its TLS material, and where they are mounted. ScyllaDB reads the files again when
// the kubelet updates them, so a renewed certificate needs no restart.
const (
	ScyllaDBServingCertsVolumeName   = "scylladb-serving-certs"
	ScyllaDBServingCertsDir          = "/var/run/secrets/scylla-operator.scylladb.com/scylladb/serving-certs"
	ScyllaDBClientCAVolumeName       = "scylladb-client-ca"
	ScyllaDBClientCADir              = "/var/run/configmaps/scylla-operator.scylladb.com/scylladb/client-ca"
	AlternatorServingCertsVolumeName = "scylladb-alternator-serving-certs"
	AlternatorServingCertsDir        = "/var/run/secrets/scylla-operator.scylladb.com/scylladb/alternator-serving-certs"
)

// Common names of the generated CAs and certificates. A CA's common name is followed by "@<unix time>" of its
// creation, so that the CAs of a trust bundle are told apart.
const (
	ServingCACommonNamePrefix           = "scylladb-serving-ca"
	ClientCACommonNamePrefix            = "scylladb-client-ca"
	AlternatorServingCACommonNamePrefix = "scylladb-alternator-serving-ca"
	// AdminClientCommonName is the user the admin client certificate authenticates as.
	AdminClientCommonName = "admin"
)
