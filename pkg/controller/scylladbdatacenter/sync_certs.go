package scylladbdatacenter

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/metrics"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
)

// certificateControllerName names the conditions of the certificate sub-sync.
const certificateControllerName = "CertificateController"

// SetCertificateOptions turns on automatic TLS (docs/tls.md): every datacenter gets its CAs, serving and client
// certificates, and its ScyllaDB nodes serve CQL (and Alternator) over TLS with them. Until it is called, the
// controller manages no certificates. It must be called before Run.
func (c *Controller) SetCertificateOptions(o CertificateOptions) error {
	if err := o.Validate(); err != nil {
		return fmt.Errorf("invalid certificate options: %w", err)
	}
	c.certOptions = &o
	c.certDecisions = newCertificateDecisions()
	return nil
}

// certificateOwned are the certificate Secrets and ConfigMaps a datacenter controls, by name.
type certificateOwned struct {
	secrets    map[string]*corev1.Secret
	configMaps map[string]*corev1.ConfigMap
}

// takeCertificateObjects moves the certificate Secrets and ConfigMaps (naming.CertificateNames) out of owned, so that
// only syncCertificates applies and prunes them. With automatic TLS off, they stay in owned and are pruned with the
// other objects nobody wants.
func (c *Controller) takeCertificateObjects(sdc *scyllav1alpha1.ScyllaDBDatacenter, owned *ownedObjects) *certificateOwned {
	taken := &certificateOwned{secrets: map[string]*corev1.Secret{}, configMaps: map[string]*corev1.ConfigMap{}}
	if c.certOptions == nil {
		return taken
	}
	for _, name := range naming.CertificateNames(sdc.Name) {
		if s, ok := owned.secrets[name]; ok {
			taken.secrets[name] = s
			delete(owned.secrets, name)
		}
		if cm, ok := owned.configMaps[name]; ok {
			taken.configMaps[name] = cm
			delete(owned.configMaps, name)
		}
	}
	return taken
}

// tlsEnabled tells whether the datacenter's nodes serve TLS with the operator's certificates.
func (c *Controller) tlsEnabled() bool {
	return c.certOptions != nil
}

// syncCertificates keeps the datacenter's certificate sets current (makeCertificateSets, reconcileCertificateSet):
// generating keys only where a CA or certificate is missing, due for renewal or no longer covers the datacenter's
// addresses, and applying the objects, which writes nothing when nothing changed. It checks the user's Alternator
// certificate Secret, exports every certificate's expiry, and requeues the datacenter for the next renewal. services
// are the datacenter's Services as this sync applied them (a new one with its ClusterIPs), so that a first certificate
// already names them. applied reports whether every Secret and ConfigMap the pods mount is as required.
func (c *Controller) syncCertificates(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, racks []scyllav1alpha1.RackSpec, owned *ownedObjects, services map[string]*corev1.Service, existing *certificateOwned, applied *bool) ([]metav1.Condition, error) {
	now := c.now().Time
	names, err := makeServingNames(sdc, racks, services, owned.pods)
	if err != nil {
		return nil, err
	}
	sets, setsErr := makeCertificateSets(sdc, *c.certOptions, names)
	if len(sets) == 0 {
		return nil, setsErr
	}

	var required certificateObjects
	var errs []error
	var servingBundle, adminCertPEM, adminKeyPEM []byte
	recheck := now.Add(c.certOptions.CertificateValidity)
	decisions := make([]certificateSetDecision, len(sets))
	for i, set := range sets {
		decision, err := c.certDecisions.reconcile(sdc, set, existing.secrets, existing.configMaps, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		decisions[i] = decision
		if decision.changed {
			klog.FromContext(ctx).V(2).Info("Renewing certificates", "secret", set.certName, "ca", decision.caCommonName,
				"trustedCAs", decision.trustedCAs, "notAfter", decision.notAfter)
		}
		required.add(decision.objects)
		if decision.recheck.Before(recheck) {
			recheck = decision.recheck
		}
		metrics.SetCertificateExpiry(sdc.Namespace, set.certName, decision.notAfter)
		metrics.SetCertificateExpiry(sdc.Namespace, set.caName, decision.caNotAfter)
		switch set.certName {
		case naming.ServingCertsName(sdc.Name):
			servingBundle = []byte(decision.objects.configMapData(set.caName, naming.CABundleKey))
		case naming.AdminClientCertName(sdc.Name):
			adminCertPEM = decision.objects.secretData(set.certName, corev1.TLSCertKey)
			adminKeyPEM = decision.objects.secretData(set.certName, corev1.TLSPrivateKeyKey)
		}
	}
	// The admin's connection config depends on more of the spec than the sets' fingerprints cover: it is always applied.
	var adminConfig *corev1.Secret
	if servingBundle != nil && adminCertPEM != nil {
		config, err := makeAdminCQLConnectionConfig(sdc, servingBundle, adminCertPEM, adminKeyPEM)
		if err != nil {
			errs = append(errs, err)
		} else {
			adminConfig = config
			required.secrets = append(required.secrets, config)
		}
	}
	if len(errs) != 0 {
		// Pruning from a partial list would delete what could not be rebuilt.
		return nil, utilerrors.NewAggregate(append(errs, setsErr))
	}

	// A set whose objects the caches hold as Apply last found them for its remembered decision needs no Apply: it
	// would hash them and write nothing. Adoptions and ownership conflicts always go through applyAll.
	mayKeep := len(owned.adopted) == 0 && !c.conflicts.any(owned.key)
	var toApply certificateObjects
	kept := make([]bool, len(sets))
	var keptSecrets []*corev1.Secret
	var keptConfigMaps []*corev1.ConfigMap
	for i, set := range sets {
		if mayKeep && decisions[i].applied.known() {
			if inCache, versions := c.certificateSetObjectsInCache(sdc, set); versions == decisions[i].applied {
				kept[i] = true
				keptSecrets = append(keptSecrets, inCache.secrets...)
				keptConfigMaps = append(keptConfigMaps, inCache.configMaps...)
				continue
			}
		}
		toApply.add(decisions[i].objects)
	}
	if adminConfig != nil {
		toApply.secrets = append(toApply.secrets, adminConfig)
	}

	secrets, secretsProgressing, secretsErr := applyAll(ctx, c, owned, c.kubeClient.CoreV1().Secrets(sdc.Namespace), c.secretLister.Secrets(sdc.Namespace), toApply.secrets)
	configMaps, configMapsProgressing, configMapsErr := applyAll(ctx, c, owned, c.kubeClient.CoreV1().ConfigMaps(sdc.Namespace), c.configMapLister.ConfigMaps(sdc.Namespace), toApply.configMaps)
	errs = append(errs, secretsErr, configMapsErr, setsErr)
	for _, s := range keptSecrets {
		secrets.byName[s.Name] = s
	}
	for _, cm := range keptConfigMaps {
		configMaps.byName[cm.Name] = cm
	}
	for i, set := range sets {
		if kept[i] || secretsErr != nil || configMapsErr != nil {
			continue
		}
		if versions, ok := appliedAsRequired(set, secrets, configMaps); ok {
			c.certDecisions.rememberApplied(sdc, set, decisions[i].fingerprint, versions)
		}
	}
	if setsErr == nil {
		// With the Alternator set in error, its objects are kept as they are until the spec is fixed.
		errs = append(errs,
			prune(ctx, c, sdc, c.kubeClient.CoreV1().Secrets(sdc.Namespace), existing.secrets, required.secrets),
			prune(ctx, c, sdc, c.kubeClient.CoreV1().ConfigMaps(sdc.Namespace), existing.configMaps, required.configMaps))
		for name := range existing.secrets {
			if !slices.ContainsFunc(required.secrets, func(s *corev1.Secret) bool { return s.Name == name }) {
				metrics.DeleteCertificateExpiry(sdc.Namespace, name)
			}
		}
	}
	*applied = len(secrets.byName) == len(required.secrets) && len(configMaps.byName) == len(required.configMaps)

	if err := c.checkUserManagedAlternatorCertificate(ctx, sdc, now); err != nil || alternatorCertificateIsUserManaged(sdc) {
		// The user's Secret is not watched: its fix or its next change is seen at the next recheck.
		errs = append(errs, err)
		if userRecheck := now.Add(c.recheckInterval); userRecheck.Before(recheck) {
			recheck = userRecheck
		}
	}

	// Renewals are due at a time, not at a change of any object: come back then.
	c.queue.AddAfter(owned.key, max(recheck.Sub(now), time.Second))
	return append(secretsProgressing, configMapsProgressing...), utilerrors.NewAggregate(errs)
}

// certificateSetObjectsInCache returns the set's objects as the informer caches hold them, and their versions (the CA
// Secret, the certificate Secret, the CA ConfigMap); a missing object has none and a zero version.
func (c *Controller) certificateSetObjectsInCache(sdc *scyllav1alpha1.ScyllaDBDatacenter, set *certificateSet) (certificateObjects, certificateObjectVersions) {
	var objects certificateObjects
	var versions certificateObjectVersions
	for i, name := range []string{set.caName, set.certName} {
		if s, err := c.secretLister.Secrets(sdc.Namespace).Get(name); err == nil {
			objects.secrets = append(objects.secrets, s)
			versions[i] = cachedObjectVersion{uid: s.UID, resourceVersion: s.ResourceVersion}
		}
	}
	if cm, err := c.configMapLister.ConfigMaps(sdc.Namespace).Get(set.caName); err == nil {
		objects.configMaps = append(objects.configMaps, cm)
		versions[2] = cachedObjectVersion{uid: cm.UID, resourceVersion: cm.ResourceVersion}
	}
	return objects, versions
}

// appliedAsRequired returns the versions of the set's objects when applyAll left every one of them as it was.
func appliedAsRequired(set *certificateSet, secrets appliedObjects[*corev1.Secret], configMaps appliedObjects[*corev1.ConfigMap]) (certificateObjectVersions, bool) {
	var versions certificateObjectVersions
	for i, name := range []string{set.caName, set.certName} {
		s, ok := secrets.byName[name]
		if !ok || slices.Contains(secrets.written, s) {
			return versions, false
		}
		versions[i] = cachedObjectVersion{uid: s.UID, resourceVersion: s.ResourceVersion}
	}
	cm, ok := configMaps.byName[set.caName]
	if !ok || slices.Contains(configMaps.written, cm) {
		return versions, false
	}
	versions[2] = cachedObjectVersion{uid: cm.UID, resourceVersion: cm.ResourceVersion}
	return versions, true
}

// checkUserManagedAlternatorCertificate reads the user's Alternator serving certificate Secret, when Alternator is on
// with a UserManaged certificate, and returns a spec error saying what is wrong with it, if anything. The Secret is
// the user's, outside the informer caches: it is read from the API server.
func (c *Controller) checkUserManagedAlternatorCertificate(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, now time.Time) error {
	if !alternatorCertificateIsUserManaged(sdc) {
		return nil
	}
	tlsCert := alternatorCertificate(sdc)
	if tlsCert.UserManagedOptions == nil || len(tlsCert.UserManagedOptions.SecretName) == 0 {
		return newSpecError("spec.scyllaDB.alternatorOptions.servingCertificate.userManagedOptions.secretName is required for type %s", scyllav1alpha1.TLSCertificateTypeUserManaged)
	}
	name := tlsCert.UserManagedOptions.SecretName
	secret, err := c.kubeClient.CoreV1().Secrets(sdc.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return newSpecError("the Alternator serving certificate Secret %q does not exist", name)
	}
	if err != nil {
		return fmt.Errorf("can't get the Alternator serving certificate Secret %q: %w", name, err)
	}
	return validateUserManagedServingSecret(secret, now)
}

// syncUserManagedAlternatorCertificate checks the user's Alternator serving certificate Secret with automatic TLS
// off (syncCertificates does it otherwise): the pods mount it to serve HTTPS, and a missing or invalid one is
// reported rather than leaving them waiting for it unexplained. The Secret is not watched: it is read again after
// the recheck interval.
func (c *Controller) syncUserManagedAlternatorCertificate(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, key string) ([]metav1.Condition, error) {
	err := c.checkUserManagedAlternatorCertificate(ctx, sdc, c.now().Time)
	c.queue.AddAfter(key, c.recheckInterval)
	return nil, err
}

// alternatorCertificateIsUserManaged tells whether Alternator is on and serves the user's certificate.
func alternatorCertificateIsUserManaged(sdc *scyllav1alpha1.ScyllaDBDatacenter) bool {
	tlsCert := alternatorCertificate(sdc)
	return tlsCert != nil && tlsCert.Type == scyllav1alpha1.TLSCertificateTypeUserManaged
}

// certificateDecisions remembers, per certificate set, the last reconcileCertificateSet result that left the set's
// objects as they are, and what it was computed from, so that a sync of a datacenter whose certificates need nothing
// costs a hash of their data rather than parsing them and checking their signatures again. An entry holds until the
// set's next recheck time.
//
// An entry keeps only what a sync reads of the result besides the objects (when to look again, the expiry times): the
// objects are the existing ones' data, which the informer caches hold already, and are built from it again. Keeping
// the parsed certificates, keys and encoded objects instead cost about 30 KiB per datacenter
// (BenchmarkCertificateDecisionsRetainedBytes). It also keeps the UIDs and resourceVersions of the objects as Apply
// last found them for it (rememberApplied): while the caches show those, a sync does not apply them again, which
// would hash every one of them to write nothing.
type certificateDecisions struct {
	mu      sync.Mutex
	entries map[string]rememberedCertificateDecision
}

type rememberedCertificateDecision struct {
	fingerprint [sha256.Size]byte
	recheck     time.Time
	caNotAfter  time.Time
	notAfter    time.Time
	// applied are the set's objects as the caches held them when Apply last found them as this decision requires
	// them (rememberApplied); zero until then.
	applied certificateObjectVersions
}

// certificateObjectVersions identify states of a set's objects in the informer caches: its CA Secret, its certificate
// Secret and its CA ConfigMap (certificateSetObjectsInCache). The API server gives an object a new resourceVersion
// at every change, so an object whose UID and resourceVersion are the ones Apply last found as required is still as
// required, and applying the same objects again writes nothing.
type certificateObjectVersions [3]cachedObjectVersion

// cachedObjectVersion identifies a state of an object; zero when the object is missing.
type cachedObjectVersion struct {
	uid             types.UID
	resourceVersion string
}

// known tells whether every object exists with a UID and a resourceVersion.
func (v certificateObjectVersions) known() bool {
	for _, o := range v {
		if len(o.uid) == 0 || len(o.resourceVersion) == 0 {
			return false
		}
	}
	return true
}

// certificateSetDecision is what a sync uses of a set's reconcileCertificateSet result.
type certificateSetDecision struct {
	// objects hold the set as it must be.
	objects certificateObjects
	// changed tells whether objects differ from the existing ones: keys were generated.
	changed bool
	// recheck is when to look at the set again at the latest.
	recheck time.Time
	// caNotAfter and notAfter are when the set's CA and its certificate expire.
	caNotAfter time.Time
	notAfter   time.Time
	// caCommonName and trustedCAs describe a changed set for the log; they are empty for a remembered one.
	caCommonName string
	trustedCAs   int
	// fingerprint is the set's certificateSetFingerprint in this sync.
	fingerprint [sha256.Size]byte
	// applied is the remembered decision's rememberedCertificateDecision.applied; zero for a decision computed anew.
	applied certificateObjectVersions
}

func newCertificateDecisions() *certificateDecisions {
	return &certificateDecisions{entries: map[string]rememberedCertificateDecision{}}
}

// reconcile is reconcileCertificateSet, answered from memory when the existing objects' data, the datacenter's
// identity and the set's policy are the ones of a remembered result and its recheck time has not come. Only results
// whose objects hold the existing objects' data byte for byte are remembered, so that the answer from memory,
// rebuilt from that data, is the result itself.
func (d *certificateDecisions) reconcile(sdc *scyllav1alpha1.ScyllaDBDatacenter, set *certificateSet, secrets map[string]*corev1.Secret, configMaps map[string]*corev1.ConfigMap, now time.Time) (certificateSetDecision, error) {
	key := certificateDecisionKey(sdc, set)
	fingerprint := certificateSetFingerprint(sdc, set, secrets, configMaps)
	d.mu.Lock()
	entry, ok := d.entries[key]
	d.mu.Unlock()
	if ok && entry.fingerprint == fingerprint && now.Before(entry.recheck) {
		return certificateSetDecision{
			objects:     existingCertificateSetObjects(sdc, set, secrets, configMaps),
			recheck:     entry.recheck,
			caNotAfter:  entry.caNotAfter,
			notAfter:    entry.notAfter,
			fingerprint: fingerprint,
			applied:     entry.applied,
		}, nil
	}
	objects, state, changed, recheck, err := reconcileCertificateSet(sdc, set, secrets, configMaps, now)
	if err != nil {
		return certificateSetDecision{}, err
	}
	decision := certificateSetDecision{
		objects:      objects,
		changed:      changed,
		recheck:      recheck,
		caNotAfter:   state.CA.Certificate.NotAfter,
		notAfter:     state.Certificate.Certificate.NotAfter,
		caCommonName: state.CA.Certificate.Subject.CommonName,
		trustedCAs:   len(state.TrustBundle),
		fingerprint:  fingerprint,
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if changed || !objects.holdDataOf(secrets, configMaps) {
		// The objects hold the new data only once applied; the next sync remembers them.
		delete(d.entries, key)
	} else {
		d.entries[key] = rememberedCertificateDecision{fingerprint: fingerprint, recheck: recheck, caNotAfter: decision.caNotAfter, notAfter: decision.notAfter}
	}
	return decision, nil
}

// certificateDecisionKey names the set's entry in certificateDecisions.
func certificateDecisionKey(sdc *scyllav1alpha1.ScyllaDBDatacenter, set *certificateSet) string {
	return sdc.Namespace + "/" + sdc.Name + "/" + set.certName
}

// rememberApplied records that Apply found the set's objects, in the states versions identify, as the decision with
// fingerprint requires them, if that decision is the one remembered for the set.
func (d *certificateDecisions) rememberApplied(sdc *scyllav1alpha1.ScyllaDBDatacenter, set *certificateSet, fingerprint [sha256.Size]byte, versions certificateObjectVersions) {
	key := certificateDecisionKey(sdc, set)
	d.mu.Lock()
	defer d.mu.Unlock()
	if entry, ok := d.entries[key]; ok && entry.fingerprint == fingerprint {
		entry.applied = versions
		d.entries[key] = entry
	}
}

// forget drops what is remembered of the datacenter namespace/name.
func (d *certificateDecisions) forget(namespace, name string) {
	prefix := namespace + "/" + name + "/"
	d.mu.Lock()
	defer d.mu.Unlock()
	for key := range d.entries {
		if strings.HasPrefix(key, prefix) {
			delete(d.entries, key)
		}
	}
}

// certificateSetFingerprint hashes everything reconcileCertificateSet reads: the datacenter's identity (the objects'
// metadata), the set's policy and the data of its existing objects, with the bundle's publication records. Every sync of every datacenter computes it, so
// it is written into one buffer, each value prefixed with its length (no two inputs encode alike), and hashed once.
func certificateSetFingerprint(sdc *scyllav1alpha1.ScyllaDBDatacenter, set *certificateSet, secrets map[string]*corev1.Secret, configMaps map[string]*corev1.ConfigMap) [sha256.Size]byte {
	p := set.policy
	caSecret, hasCASecret := secrets[set.caName]
	certSecret, hasCertSecret := secrets[set.certName]
	bundle, hasBundle := configMaps[set.caName]
	size := 512
	for _, s := range []*corev1.Secret{caSecret, certSecret} {
		if s != nil {
			size += len(s.Data[corev1.TLSCertKey]) + len(s.Data[corev1.TLSPrivateKeyKey])
		}
	}
	if hasBundle {
		size += len(bundle.Data[naming.CABundleKey])
	}
	for _, name := range p.Certificate.DNSNames {
		size += len(name) + 1
	}
	b := make([]byte, 0, size+len(p.Certificate.IPAddresses)*20)

	appendString := func(b []byte, s string) []byte {
		return append(binary.AppendUvarint(b, uint64(len(s))), s...)
	}
	appendBytes := func(b []byte, v []byte) []byte {
		return append(binary.AppendUvarint(b, uint64(len(v))), v...)
	}
	for _, s := range []string{sdc.Namespace, sdc.Name, string(sdc.UID), set.caName, set.certName, p.CACommonNamePrefix,
		string(p.CAKeyAlgorithm), p.Certificate.CommonName, string(p.Certificate.Usage), string(p.Certificate.KeyAlgorithm)} {
		b = appendString(b, s)
	}
	for _, d := range []time.Duration{p.CAValidity, p.TrustPropagationDelay, p.Certificate.Validity} {
		b = binary.AppendVarint(b, int64(d))
	}
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(p.RefreshFraction))
	b = binary.AppendUvarint(b, uint64(len(p.Certificate.DNSNames)))
	for _, name := range p.Certificate.DNSNames {
		b = appendString(b, name)
	}
	b = binary.AppendUvarint(b, uint64(len(p.Certificate.IPAddresses)))
	for _, ip := range p.Certificate.IPAddresses {
		b = appendBytes(b, ip)
	}
	for _, s := range []struct {
		secret *corev1.Secret
		ok     bool
	}{{caSecret, hasCASecret}, {certSecret, hasCertSecret}} {
		if !s.ok {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = appendString(b, string(s.secret.Type))
		b = appendBytes(b, s.secret.Data[corev1.TLSCertKey])
		b = appendBytes(b, s.secret.Data[corev1.TLSPrivateKeyKey])
	}
	if hasBundle {
		b = append(b, 1)
		b = appendString(b, bundle.Data[naming.CABundleKey])
		b = appendString(b, bundle.Annotations[naming.CABundlePublishedAnnotation])
	} else {
		b = append(b, 0)
	}
	return sha256.Sum256(b)
}

// forgetCertificates drops the remembered decisions and the expiry metrics of a datacenter that is gone.
func (c *Controller) forgetCertificates(namespace, name string) {
	if !c.tlsEnabled() {
		return
	}
	c.certDecisions.forget(namespace, name)
	for _, secret := range naming.CertificateNames(name) {
		metrics.DeleteCertificateExpiry(namespace, secret)
	}
}
