package scylladbdatacenter

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/certs"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
)

// CertificateOptions are how the operator issues the certificates of every datacenter (docs/tls.md).
type CertificateOptions struct {
	// KeyAlgorithm of every generated key; empty means ECDSA P-256.
	KeyAlgorithm certs.KeyAlgorithm
	// CAValidity is how long a generated CA is valid.
	CAValidity time.Duration
	// CertificateValidity is how long a serving or client certificate is valid.
	CertificateValidity time.Duration
	// RefreshFraction of a CA's or certificate's validity passes before it is renewed.
	RefreshFraction float64
	// TrustPropagationDelay is how long a changed Secret or ConfigMap takes to reach every pod's mounted files: the
	// kubelet's sync period plus its cache's TTL. A new CA signs nothing until it has been trusted that long.
	TrustPropagationDelay time.Duration
}

// DefaultCertificateOptions are the operator's defaults: ECDSA P-256, CAs valid for 10 years, certificates for 30
// days, both renewed when 80% of their validity has passed.
func DefaultCertificateOptions() CertificateOptions {
	return CertificateOptions{
		KeyAlgorithm:          certs.ECDSAP256,
		CAValidity:            10 * 365 * 24 * time.Hour,
		CertificateValidity:   30 * 24 * time.Hour,
		RefreshFraction:       0.8,
		TrustPropagationDelay: 3 * time.Minute,
	}
}

// Validate rejects options under which a served certificate could be untrusted or expired at some point.
func (o CertificateOptions) Validate() error {
	p := o.policy("validation", certs.CertificateRequest{CommonName: "validation", Usage: certs.ServingUsage})
	return p.Validate()
}

// policy returns the rotation policy of one CA and the certificate it issues.
func (o CertificateOptions) policy(caCommonNamePrefix string, req certs.CertificateRequest) *certs.Policy {
	req.Validity = o.CertificateValidity
	req.KeyAlgorithm = o.KeyAlgorithm
	return &certs.Policy{
		CACommonNamePrefix:    caCommonNamePrefix,
		CAValidity:            o.CAValidity,
		CAKeyAlgorithm:        o.KeyAlgorithm,
		Certificate:           req,
		RefreshFraction:       o.RefreshFraction,
		TrustPropagationDelay: o.TrustPropagationDelay,
	}
}

// certificateSet is one CA, the CAs its peers trust and the certificate it issues, as the operator stores them: the
// CA's key pair in a kubernetes.io/tls Secret and the trust bundle in a ConfigMap, both named caName, and the
// certificate in the kubernetes.io/tls Secret certName.
type certificateSet struct {
	caName   string
	certName string
	policy   *certs.Policy
}

// certificateObjects are the Secrets and ConfigMaps of certificate sets.
type certificateObjects struct {
	secrets    []*corev1.Secret
	configMaps []*corev1.ConfigMap
}

func (o *certificateObjects) add(other certificateObjects) {
	o.secrets = append(o.secrets, other.secrets...)
	o.configMaps = append(o.configMaps, other.configMaps...)
}

// decodeCertificateSet returns what the set's existing objects hold, as far as they are readable: a CA whose Secret is
// missing or unreadable is generated anew, and so is a missing or unreadable certificate; an unreadable trust bundle
// is replaced by the CA alone. A lost certificate Secret therefore never replaces a CA that clients trust, and with a
// lost CA Secret the CAs of the published bundle stay trusted, so that the certificate one of them signed is served
// until the new CA is trusted everywhere.
//
// The state's PublishedAt holds the CAs of the published bundle, with their publication records
// (naming.CABundlePublishedAnnotation). A CA the ConfigMap does not hold, such as a new CA whose Secret was written
// but not the bundle yet, is not published: it signs nothing while a usable certificate is left. With an unreadable
// record, no CA of the bundle counts as published, and the bundle is written again with a record of now: a new CA
// then waits longer than needed, never less.
func decodeCertificateSet(set *certificateSet, secrets map[string]*corev1.Secret, configMaps map[string]*corev1.ConfigMap) *certs.State {
	state := &certs.State{}
	if s, ok := secrets[set.caName]; ok {
		if ca, err := certs.DecodeKeyPairPEM(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]); err == nil && ca.Certificate.IsCA {
			state.CA = ca
		}
	}
	if s, ok := secrets[set.certName]; ok {
		if cert, err := certs.DecodeKeyPairPEM(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]); err == nil {
			state.Certificate = cert
		}
	}
	if state.CA != nil {
		state.TrustBundle = []*x509.Certificate{state.CA.Certificate}
	}
	state.PublishedAt = map[string]time.Time{}
	if cm, ok := configMaps[set.caName]; ok {
		records, recordsErr := decodeCABundlePublication(cm)
		if bundle, err := certs.DecodeCertificatesPEM([]byte(cm.Data[naming.CABundleKey])); err == nil {
			for _, c := range bundle {
				if c.IsCA && recordsErr == nil {
					// A CA without a record was published by an earlier version: zero, published at its NotBefore.
					state.PublishedAt[certs.CAFingerprint(c)] = records[certs.CAFingerprint(c)]
				}
				if c.IsCA && (state.CA == nil || !bytes.Equal(c.Raw, state.CA.Certificate.Raw)) {
					state.TrustBundle = append(state.TrustBundle, c)
				}
			}
		}
	}
	return state
}

// reconcileCertificateSet returns the objects that hold the set as it must be at now, whether they differ from the
// existing ones, and when to look again at the latest. Keys are generated only when certs.Reconcile decides that a
// CA or the certificate must be replaced: when nothing is due, the existing objects' data is returned unchanged.
func reconcileCertificateSet(sdc *scyllav1alpha1.ScyllaDBDatacenter, set *certificateSet, secrets map[string]*corev1.Secret, configMaps map[string]*corev1.ConfigMap, now time.Time) (certificateObjects, *certs.State, bool, time.Time, error) {
	next, changed, recheck, err := certs.Reconcile(decodeCertificateSet(set, secrets, configMaps), set.policy, now)
	if err != nil {
		return certificateObjects{}, nil, false, time.Time{}, fmt.Errorf("can't reconcile the certificates of %q: %w", set.certName, err)
	}
	objects, err := makeCertificateSetObjects(sdc, set, next, now)
	if err != nil {
		return certificateObjects{}, nil, false, time.Time{}, err
	}
	return objects, next, changed, recheck, nil
}

// makeCertificateSetObjects returns the objects that store state, whose bundle ConfigMap is written at now.
func makeCertificateSetObjects(sdc *scyllav1alpha1.ScyllaDBDatacenter, set *certificateSet, state *certs.State, now time.Time) (certificateObjects, error) {
	bundlePEM, caKeyPEM, certPEM, keyPEM, err := certs.EncodeStatePEM(state)
	if err != nil {
		return certificateObjects{}, fmt.Errorf("can't encode the certificates of %q: %w", set.certName, err)
	}
	published, err := encodeCABundlePublication(state, now)
	if err != nil {
		return certificateObjects{}, fmt.Errorf("can't record the publication of the CAs of %q: %w", set.caName, err)
	}
	return makeCertificateSetObjectsFromPEM(sdc, set, certs.EncodeCertificatesPEM(state.CA.Certificate), caKeyPEM, certPEM, keyPEM, string(bundlePEM), published), nil
}

// encodeCABundlePublication returns the naming.CABundlePublishedAnnotation of the bundle ConfigMap holding
// state.TrustBundle, written at now: the recorded publication of each CA the published bundle holds already (none
// for one it holds without a record), and now for each CA it adds, so that the record travels in the very write that
// publishes the CA. It returns "" when there is nothing to record, which keeps a bundle of an earlier version as it is.
func encodeCABundlePublication(state *certs.State, now time.Time) (string, error) {
	// Rounded up to the second the record keeps, so that it is never earlier than the write.
	written := now.Add(time.Second - 1).Truncate(time.Second)
	records := map[string]string{}
	for _, c := range state.TrustBundle {
		fingerprint := certs.CAFingerprint(c)
		switch at, ok := state.PublishedAt[fingerprint]; {
		case !ok:
			records[fingerprint] = written.UTC().Format(time.RFC3339)
		case !at.IsZero():
			records[fingerprint] = at.UTC().Format(time.RFC3339)
		}
	}
	if len(records) == 0 {
		return "", nil
	}
	value, err := json.Marshal(records)
	if err != nil {
		return "", err
	}
	return string(value), nil
}

// decodeCABundlePublication returns the publication records of cm's naming.CABundlePublishedAnnotation by CA
// fingerprint; none when it has no such annotation.
func decodeCABundlePublication(cm *corev1.ConfigMap) (map[string]time.Time, error) {
	value, ok := cm.Annotations[naming.CABundlePublishedAnnotation]
	if !ok {
		return nil, nil
	}
	var records map[string]string
	if err := json.Unmarshal([]byte(value), &records); err != nil {
		return nil, fmt.Errorf("can't decode annotation %q of ConfigMap %q: %w", naming.CABundlePublishedAnnotation, cm.Name, err)
	}
	out := make(map[string]time.Time, len(records))
	for fingerprint, s := range records {
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil, fmt.Errorf("can't decode annotation %q of ConfigMap %q: CA %s: %w", naming.CABundlePublishedAnnotation, cm.Name, fingerprint, err)
		}
		out[fingerprint] = at
	}
	return out, nil
}

// existingCertificateSetObjects returns the objects of the set that hold the data of the existing ones.
func existingCertificateSetObjects(sdc *scyllav1alpha1.ScyllaDBDatacenter, set *certificateSet, secrets map[string]*corev1.Secret, configMaps map[string]*corev1.ConfigMap) certificateObjects {
	var caData, certData map[string][]byte
	if s, ok := secrets[set.caName]; ok {
		caData = s.Data
	}
	if s, ok := secrets[set.certName]; ok {
		certData = s.Data
	}
	var bundlePEM, published string
	if cm, ok := configMaps[set.caName]; ok {
		bundlePEM = cm.Data[naming.CABundleKey]
		published = cm.Annotations[naming.CABundlePublishedAnnotation]
	}
	return makeCertificateSetObjectsFromPEM(sdc, set, caData[corev1.TLSCertKey], caData[corev1.TLSPrivateKeyKey],
		certData[corev1.TLSCertKey], certData[corev1.TLSPrivateKeyKey], bundlePEM, published)
}

// makeCertificateSetObjectsFromPEM returns the objects of the set holding the given PEM data: the CA's key pair, the
// certificate's key pair and the trust bundle, with published as its naming.CABundlePublishedAnnotation (none if "").
func makeCertificateSetObjectsFromPEM(sdc *scyllav1alpha1.ScyllaDBDatacenter, set *certificateSet, caCertPEM, caKeyPEM, certPEM, keyPEM []byte, bundlePEM, published string) certificateObjects {
	bundleMeta := objectMeta(sdc, set.caName, naming.ClusterLabels(sdc.Name))
	if len(published) != 0 {
		bundleMeta.Annotations = map[string]string{naming.CABundlePublishedAnnotation: published}
	}
	return certificateObjects{
		secrets: []*corev1.Secret{
			makeTLSSecret(sdc, set.caName, caCertPEM, caKeyPEM),
			makeTLSSecret(sdc, set.certName, certPEM, keyPEM),
		},
		configMaps: []*corev1.ConfigMap{{
			ObjectMeta: bundleMeta,
			Data:       map[string]string{naming.CABundleKey: bundlePEM},
		}},
	}
}

// holdDataOf tells whether every one of the objects exists in secrets or configMaps with the same data (and, for a
// ConfigMap, the same publication records).
func (o *certificateObjects) holdDataOf(secrets map[string]*corev1.Secret, configMaps map[string]*corev1.ConfigMap) bool {
	for _, s := range o.secrets {
		existing, ok := secrets[s.Name]
		if !ok || !maps.EqualFunc(s.Data, existing.Data, bytes.Equal) {
			return false
		}
	}
	for _, cm := range o.configMaps {
		existing, ok := configMaps[cm.Name]
		if !ok || !maps.Equal(cm.Data, existing.Data) ||
			cm.Annotations[naming.CABundlePublishedAnnotation] != existing.Annotations[naming.CABundlePublishedAnnotation] {
			return false
		}
	}
	return true
}

// secretData returns the value of key in the Secret name of the objects, nil if there is none.
func (o *certificateObjects) secretData(name, key string) []byte {
	if i := slices.IndexFunc(o.secrets, func(s *corev1.Secret) bool { return s.Name == name }); i >= 0 {
		return o.secrets[i].Data[key]
	}
	return nil
}

// configMapData returns the value of key in the ConfigMap name of the objects, "" if there is none.
func (o *certificateObjects) configMapData(name, key string) string {
	if i := slices.IndexFunc(o.configMaps, func(cm *corev1.ConfigMap) bool { return cm.Name == name }); i >= 0 {
		return o.configMaps[i].Data[key]
	}
	return ""
}

func makeTLSSecret(sdc *scyllav1alpha1.ScyllaDBDatacenter, name string, certPEM, keyPEM []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: objectMeta(sdc, name, naming.ClusterLabels(sdc.Name)),
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	}
}

// servingNames are the DNS names and IP addresses a client may reach a datacenter's nodes at.
type servingNames struct {
	dnsNames    []string
	ipAddresses []net.IP
}

// makeServingNames returns every name a client may use to reach the datacenter's CQL endpoints, given its expose
// options: the client Service's DNS names and cluster IPs; each member Service's DNS names; per node, the address it
// broadcasts to clients (expose-options.md) as far as it is known: the member Service's cluster IPs, its load
// balancer ingress IPs and host names, or the pod's IPs; each of spec.dnsDomains and any name directly below it, and
// with CQL ingress every name directly below "cql.<domain>" (the Node Ingresses' hosts). racks are the
// datacenter's effectiveRacks, services and pods its ownedObjects; the member Services the spec asks for are covered
// before they exist. The result is sorted, so that it compares equal when nothing changed.
func makeServingNames(sdc *scyllav1alpha1.ScyllaDBDatacenter, racks []scyllav1alpha1.RackSpec, services map[string]*corev1.Service, pods map[string]*corev1.Pod) (servingNames, error) {
	expose, err := makeExposeSettings(sdc)
	if err != nil {
		return servingNames{}, err
	}
	// Sized for three names per Service and per DNS domain. A member Service is named twice, from the spec and as
	// it exists: withServiceDNS adds its names once.
	dns := make(map[string]bool, 3*(len(services)+1)+3*len(sdc.Spec.DNSDomains))
	ips := make(map[string]net.IP, len(services))
	addIP := func(s string) {
		if ip := net.ParseIP(s); ip != nil {
			ips[ip.String()] = ip
		}
	}
	withServiceDNS := make(map[string]bool, len(services)+1)
	addServiceDNS := func(name string) {
		if withServiceDNS[name] {
			return
		}
		withServiceDNS[name] = true
		dns[name] = true
		dns[name+"."+sdc.Namespace] = true
		dns[name+"."+sdc.Namespace+".svc"] = true
	}

	addServiceDNS(naming.ClientServiceName(sdc.Name))
	// The member Services of the spec's nodes are named before they exist: their names need no renewal later.
	dc := datacenterName(sdc)
	for _, rack := range racks {
		if rack.Nodes == nil {
			continue
		}
		stsName := naming.StatefulSetName(sdc.Name, dc, rack.Name)
		for ordinal := range *rack.Nodes {
			addServiceDNS(naming.MemberServiceName(stsName, ordinal))
		}
	}
	if svc, ok := services[naming.ClientServiceName(sdc.Name)]; ok {
		for _, ip := range svc.Spec.ClusterIPs {
			addIP(ip)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(services)) {
		svc := services[name]
		if svc.Labels[naming.ScyllaServiceTypeLabel] != naming.ScyllaServiceTypeMember {
			continue
		}
		addServiceDNS(name)
		switch expose.broadcastClients.Type {
		case scyllav1alpha1.BroadcastAddressTypeServiceClusterIP:
			for _, ip := range svc.Spec.ClusterIPs {
				addIP(ip)
			}
		case scyllav1alpha1.BroadcastAddressTypeServiceLoadBalancerIngressIP, scyllav1alpha1.BroadcastAddressTypeServiceLoadBalancerIngress:
			for _, ingress := range svc.Status.LoadBalancer.Ingress {
				addIP(ingress.IP)
				if len(ingress.Hostname) != 0 {
					dns[ingress.Hostname] = true
				}
			}
		case scyllav1alpha1.BroadcastAddressTypePodIP:
			if pod, ok := pods[name]; ok {
				for _, ip := range pod.Status.PodIPs {
					addIP(ip.IP)
				}
				if len(pod.Status.PodIPs) == 0 {
					addIP(pod.Status.PodIP)
				}
			}
		default:
			return servingNames{}, newSpecError("spec.exposeOptions.broadcastOptions.clients.type %q is not one of %s, %s, %s", expose.broadcastClients.Type,
				scyllav1alpha1.BroadcastAddressTypePodIP, scyllav1alpha1.BroadcastAddressTypeServiceClusterIP, scyllav1alpha1.BroadcastAddressTypeServiceLoadBalancerIngressIP)
		}
	}
	cqlIngress := cqlIngressOptions(sdc) != nil
	for _, domain := range sdc.Spec.DNSDomains {
		domain = strings.TrimSuffix(domain, ".")
		dns[domain] = true
		dns["*."+domain] = true
		if cqlIngress {
			// A wildcard covers one label: the Node Ingresses' hosts, "<hostID>.cql.<domain>", need their own.
			dns[naming.NodeCQLHostWildcard(domain)] = true
		}
	}

	names := servingNames{dnsNames: slices.Sorted(maps.Keys(dns))}
	for _, key := range slices.Sorted(maps.Keys(ips)) {
		names.ipAddresses = append(names.ipAddresses, ips[key])
	}
	return names, nil
}

// alternatorCertificate returns the serving certificate settings of Alternator: nil when Alternator is off.
func alternatorCertificate(sdc *scyllav1alpha1.ScyllaDBDatacenter) *scyllav1alpha1.TLSCertificate {
	options := sdc.Spec.ScyllaDB.AlternatorOptions
	if options == nil {
		return nil
	}
	if options.ServingCertificate == nil {
		return &scyllav1alpha1.TLSCertificate{Type: scyllav1alpha1.TLSCertificateTypeOperatorManaged}
	}
	return options.ServingCertificate
}

// alternatorServingNames returns the names of the Alternator serving certificate: the CQL ones and the extra ones
// of operatorManagedOptions.
func alternatorServingNames(names servingNames, tlsCert *scyllav1alpha1.TLSCertificate) (servingNames, error) {
	out := servingNames{dnsNames: slices.Clone(names.dnsNames), ipAddresses: slices.Clone(names.ipAddresses)}
	extra := tlsCert.OperatorManagedOptions
	if extra == nil {
		return out, nil
	}
	const field = "spec.scyllaDB.alternatorOptions.servingCertificate.operatorManagedOptions"
	for i, name := range extra.AdditionalDNSNames {
		if len(name) == 0 {
			return servingNames{}, newSpecError("%s.additionalDNSNames[%d] must not be empty", field, i)
		}
		if !slices.Contains(out.dnsNames, name) {
			out.dnsNames = append(out.dnsNames, name)
		}
	}
	for i, s := range extra.AdditionalIPAddresses {
		ip := net.ParseIP(s)
		if ip == nil {
			return servingNames{}, newSpecError("%s.additionalIPAddresses[%d]: %q is not an IP address", field, i, s)
		}
		if !slices.ContainsFunc(out.ipAddresses, ip.Equal) {
			out.ipAddresses = append(out.ipAddresses, ip)
		}
	}
	slices.Sort(out.dnsNames)
	slices.SortFunc(out.ipAddresses, func(a, b net.IP) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}

// makeCertificateSets returns the certificate sets of a datacenter: the CQL serving set, the client set with the
// admin certificate and, when Alternator is on with an operator-managed certificate, the Alternator serving set. A
// spec error of the Alternator certificate comes with the CQL sets, which don't depend on it.
func makeCertificateSets(sdc *scyllav1alpha1.ScyllaDBDatacenter, options CertificateOptions, names servingNames) ([]*certificateSet, error) {
	servingRequest := certs.CertificateRequest{
		CommonName:  naming.ClientServiceName(sdc.Name) + "." + sdc.Namespace + ".svc",
		DNSNames:    names.dnsNames,
		IPAddresses: names.ipAddresses,
		Usage:       certs.ServingUsage,
	}
	sets := []*certificateSet{
		{
			caName:   naming.ServingCAName(sdc.Name),
			certName: naming.ServingCertsName(sdc.Name),
			policy:   options.policy(naming.ServingCACommonNamePrefix, servingRequest),
		},
		{
			caName:   naming.ClientCAName(sdc.Name),
			certName: naming.AdminClientCertName(sdc.Name),
			policy: options.policy(naming.ClientCACommonNamePrefix, certs.CertificateRequest{
				CommonName: naming.AdminClientCommonName,
				Usage:      certs.ClientUsage,
			}),
		},
	}
	if tlsCert := alternatorCertificate(sdc); tlsCert != nil && tlsCert.Type != scyllav1alpha1.TLSCertificateTypeUserManaged {
		if tlsCert.Type != scyllav1alpha1.TLSCertificateTypeOperatorManaged {
			return sets, newSpecError("spec.scyllaDB.alternatorOptions.servingCertificate.type %q is not one of %s, %s",
				tlsCert.Type, scyllav1alpha1.TLSCertificateTypeOperatorManaged, scyllav1alpha1.TLSCertificateTypeUserManaged)
		}
		alternatorNames, err := alternatorServingNames(names, tlsCert)
		if err != nil {
			return sets, err
		}
		req := servingRequest
		req.DNSNames, req.IPAddresses = alternatorNames.dnsNames, alternatorNames.ipAddresses
		sets = append(sets, &certificateSet{
			caName:   naming.AlternatorServingCAName(sdc.Name),
			certName: naming.AlternatorServingCertsName(sdc.Name),
			policy:   options.policy(naming.AlternatorServingCACommonNamePrefix, req),
		})
	}
	return sets, nil
}

// makeAdminCQLConnectionConfig returns the Secret with the admin's CQL connection configuration: a cqlshrc that
// connects to the client Service's TLS port with the admin certificate and checks the server against the serving
// trust bundle, next to the three PEM files it names (certPEM and keyPEM are the admin's key pair). Mounted at
// naming.CQLConnectionConfigDir, `cqlsh --cqlshrc <dir>/cqlshrc` works as is; drivers take the same three files.
func makeAdminCQLConnectionConfig(sdc *scyllav1alpha1.ScyllaDBDatacenter, servingTrustBundle, certPEM, keyPEM []byte) (*corev1.Secret, error) {
	switch {
	case len(servingTrustBundle) == 0:
		return nil, errors.New("can't make the admin CQL connection config: the serving trust bundle is empty")
	case len(certPEM) == 0 || len(keyPEM) == 0:
		return nil, errors.New("can't make the admin CQL connection config: the admin certificate or key is empty")
	}
	dir := naming.CQLConnectionConfigDir
	cqlshrc := fmt.Sprintf(`; CQL over TLS as %s to ScyllaDBDatacenter %s/%s. Mount this Secret at %s.
[connection]
hostname = %s.%s.svc
port = %d
ssl = true

[ssl]
certfile = %s/%s
validate = true
usercert = %s/%s
userkey = %s/%s
`, naming.AdminClientCommonName, sdc.Namespace, sdc.Name, dir,
		naming.ClientServiceName(sdc.Name), sdc.Namespace, cqlSSLPort,
		dir, naming.CQLConnectionConfigCAKey, dir, naming.CQLConnectionConfigCertKey, dir, naming.CQLConnectionConfigKeyKey)
	return &corev1.Secret{
		ObjectMeta: objectMeta(sdc, naming.AdminCQLConnectionConfigsName(sdc.Name), naming.ClusterLabels(sdc.Name)),
		Type:       corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			naming.CQLConnectionConfigKey:     []byte(cqlshrc),
			naming.CQLConnectionConfigCAKey:   servingTrustBundle,
			naming.CQLConnectionConfigCertKey: certPEM,
			naming.CQLConnectionConfigKeyKey:  keyPEM,
		},
	}, nil
}

// validateUserManagedServingSecret checks the user's Alternator serving certificate Secret: of type
// kubernetes.io/tls, with a certificate and the private key that belongs to it, valid at now. Errors name what is
// wrong, never the data.
func validateUserManagedServingSecret(secret *corev1.Secret, now time.Time) error {
	if secret.Type != corev1.SecretTypeTLS {
		return newSpecError("the Alternator serving certificate Secret %q is of type %q, want %q", secret.Name, secret.Type, corev1.SecretTypeTLS)
	}
	kp, err := certs.DecodeKeyPairPEM(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return newSpecError("the Alternator serving certificate Secret %q is invalid: %w", secret.Name, err)
	}
	if !now.Before(kp.Certificate.NotAfter) {
		return newSpecError("the certificate of the Alternator serving certificate Secret %q expired at %s", secret.Name, kp.Certificate.NotAfter.UTC().Format(time.RFC3339))
	}
	// ScyllaDB serves it, but clients refuse it until then (or their clock is behind the issuer's).
	if now.Before(kp.Certificate.NotBefore) {
		return newSpecError("the certificate of the Alternator serving certificate Secret %q is not valid before %s", secret.Name, kp.Certificate.NotBefore.UTC().Format(time.RFC3339))
	}
	return nil
}

// Flags of the sidecar's TLS files (pkg/sidecar TLSFlags).
const (
	sidecarFlagCQLTLSCertificateFile        = "--cql-tls-certificate-file"
	sidecarFlagCQLTLSKeyFile                = "--cql-tls-key-file"
	sidecarFlagCQLTLSClientCAFile           = "--cql-tls-client-ca-file"
	sidecarFlagAlternatorTLSCertificateFile = "--alternator-tls-certificate-file"
	sidecarFlagAlternatorTLSKeyFile         = "--alternator-tls-key-file"
)

// alternatorServingSecretName returns the Secret with the certificate Alternator serves over HTTPS, "" for none: the
// user's for a UserManaged certificate, the operator's for an OperatorManaged one when automatic TLS is on.
func alternatorServingSecretName(sdc *scyllav1alpha1.ScyllaDBDatacenter, automaticTLS bool) string {
	tlsCert := alternatorCertificate(sdc)
	switch {
	case tlsCert == nil:
		return ""
	case tlsCert.Type == scyllav1alpha1.TLSCertificateTypeUserManaged && tlsCert.UserManagedOptions != nil:
		return tlsCert.UserManagedOptions.SecretName
	case tlsCert.Type == scyllav1alpha1.TLSCertificateTypeOperatorManaged && automaticTLS:
		return naming.AlternatorServingCertsName(sdc.Name)
	default:
		return ""
	}
}

// addTLSToPod returns a rack's pod volumes, ScyllaDB mounts and sidecar arguments with what serving TLS takes: with
// automatic TLS on, the CQL serving certificate and the client CA bundle; with Alternator serving HTTPS, its serving
// certificate (alternator.httpsSecret). The files are mounted from the Secrets and ConfigMaps
// themselves, without subPath, so that the kubelet updates them in place when a certificate is renewed and ScyllaDB
// reads them again: no restart. A user volume or mount in the way is a spec error.
func addTLSToPod(sdc *scyllav1alpha1.ScyllaDBDatacenter, rack *scyllav1alpha1.RackSpec, automaticTLS bool, alternator alternatorSettings, volumes []corev1.Volume, mounts []corev1.VolumeMount, args []string) ([]corev1.Volume, []corev1.VolumeMount, []string, error) {
	type tlsVolume struct {
		volume corev1.Volume
		mount  corev1.VolumeMount
	}
	secretVolume := func(name, secret, dir string) tlsVolume {
		return tlsVolume{
			volume: corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}},
			mount:  corev1.VolumeMount{Name: name, MountPath: dir, ReadOnly: true},
		}
	}
	var add []tlsVolume
	if automaticTLS {
		add = append(add,
			secretVolume(naming.ScyllaDBServingCertsVolumeName, naming.ServingCertsName(sdc.Name), naming.ScyllaDBServingCertsDir),
			tlsVolume{
				volume: corev1.Volume{Name: naming.ScyllaDBClientCAVolumeName, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: naming.ClientCAName(sdc.Name)},
				}}},
				mount: corev1.VolumeMount{Name: naming.ScyllaDBClientCAVolumeName, MountPath: naming.ScyllaDBClientCADir, ReadOnly: true},
			})
		args = append(args,
			sidecarFlag(sidecarFlagCQLTLSCertificateFile, naming.ScyllaDBServingCertsDir+"/"+corev1.TLSCertKey),
			sidecarFlag(sidecarFlagCQLTLSKeyFile, naming.ScyllaDBServingCertsDir+"/"+corev1.TLSPrivateKeyKey),
			sidecarFlag(sidecarFlagCQLTLSClientCAFile, naming.ScyllaDBClientCADir+"/"+naming.CABundleKey))
	}
	if len(alternator.httpsSecret) != 0 {
		add = append(add, secretVolume(naming.AlternatorServingCertsVolumeName, alternator.httpsSecret, naming.AlternatorServingCertsDir))
		args = append(args,
			sidecarFlag(sidecarFlagAlternatorTLSCertificateFile, naming.AlternatorServingCertsDir+"/"+corev1.TLSCertKey),
			sidecarFlag(sidecarFlagAlternatorTLSKeyFile, naming.AlternatorServingCertsDir+"/"+corev1.TLSPrivateKeyKey))
	}
	for _, v := range add {
		if slices.ContainsFunc(volumes, func(o corev1.Volume) bool { return o.Name == v.volume.Name }) {
			return nil, nil, nil, newSpecError("rack %q: volume name %q is reserved by the operator", rack.Name, v.volume.Name)
		}
		if slices.ContainsFunc(mounts, func(o corev1.VolumeMount) bool { return o.MountPath == v.mount.MountPath }) {
			return nil, nil, nil, newSpecError("rack %q: scyllaDB volume mount path %q is reserved by the operator", rack.Name, v.mount.MountPath)
		}
		volumes = append(volumes, v.volume)
		mounts = append(mounts, v.mount)
	}
	return volumes, mounts, args, nil
}
