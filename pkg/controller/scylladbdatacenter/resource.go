package scylladbdatacenter

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/merge"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/resourceapply"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	"github.com/scyllakube/scylla-operator/pkg/sysctl"
	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// scyllaDBDatacenterGVK is the kind every object built here is controlled by.
var scyllaDBDatacenterGVK = scyllav1alpha1.SchemeGroupVersion.WithKind("ScyllaDBDatacenter")

// Values the operator picks when the spec leaves them unset.
const (
	defaultMinReadySeconds               = 5
	defaultTerminationGracePeriodSeconds = 900
	defaultAlternatorHTTPPort            = 8000
)

// Ports of a ScyllaDB pod.
const (
	interNodePort        = 7000
	interNodeSSLPort     = 7001
	cqlPort              = 9042
	cqlSSLPort           = 9142
	cqlShardAwarePort    = 19042
	cqlSSLShardAwarePort = 19142
	alternatorHTTPSPort  = 8043
	prometheusPort       = 9180
	agentAPIPort         = 10001
	agentPrometheusPort  = 5090
)

// specError marks a problem with the ScyllaDBDatacenter's spec, or with the objects around it, that retrying does
// not help with until a user changes something (an object of someone else's in the way of one the datacenter needs,
// say): the sync reports it in the conditions and does not requeue.
type specError struct {
	err error
}

func (e *specError) Error() string { return e.err.Error() }
func (e *specError) Unwrap() error { return e.err }

func newSpecError(format string, args ...any) error {
	return &specError{err: fmt.Errorf(format, args...)}
}

// datacenterName is the datacenter name ScyllaDB sees.
func datacenterName(sdc *scyllav1alpha1.ScyllaDBDatacenter) string {
	if sdc.Spec.DatacenterName != nil && len(*sdc.Spec.DatacenterName) != 0 {
		return *sdc.Spec.DatacenterName
	}
	return sdc.Name
}

// clusterName is the ScyllaDB cluster name.
func clusterName(sdc *scyllav1alpha1.ScyllaDBDatacenter) string {
	if len(sdc.Spec.ClusterName) != 0 {
		return sdc.Spec.ClusterName
	}
	return sdc.Name
}

// hostNetworking reads naming.HostNetworkingAnnotation, which the ScyllaCluster translator sets.
func hostNetworking(sdc *scyllav1alpha1.ScyllaDBDatacenter) (bool, error) {
	return boolAnnotation(sdc, naming.HostNetworkingAnnotation)
}

// sysctls reads naming.SysctlsAnnotation, which the ScyllaCluster translator sets from spec.sysctls: a JSON list of
// key=value kernel parameters.
func sysctls(sdc *scyllav1alpha1.ScyllaDBDatacenter) ([]sysctl.Setting, error) {
	v, ok := sdc.Annotations[naming.SysctlsAnnotation]
	if !ok {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal([]byte(v), &list); err != nil {
		return nil, newSpecError("annotation %q must be a JSON list of key=value strings: %v", naming.SysctlsAnnotation, err)
	}
	settings, err := sysctl.ParseAll(list)
	if err != nil {
		return nil, newSpecError("annotation %q: %v", naming.SysctlsAnnotation, err)
	}
	return settings, nil
}

// makeSysctlContainer returns the init container that sets settings before ScyllaDB starts, or nil when there are
// none. Kernel parameters outside the pod's namespaces (fs.aio-max-nr) are the node's: only a privileged container
// can set them, as root.
func makeSysctlContainer(operatorImage string, settings []sysctl.Setting) *corev1.Container {
	if len(settings) == 0 {
		return nil
	}
	command := []string{naming.OperatorBinaryPathInImage, "sysctl", "--"}
	for _, s := range settings {
		command = append(command, s.String())
	}
	return &corev1.Container{
		Name:            naming.SysctlContainerName,
		Image:           operatorImage,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         command,
		SecurityContext: &corev1.SecurityContext{
			Privileged: new(true),
			RunAsUser:  new(int64(0)),
		},
	}
}

func boolAnnotation(sdc *scyllav1alpha1.ScyllaDBDatacenter, key string) (bool, error) {
	v, ok := sdc.Annotations[key]
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, newSpecError("annotation %q must be \"true\" or \"false\", got %q", key, v)
	}
	return b, nil
}

// imageVersion returns the tag of a container image reference ("docker.io/scylladb/scylla:2025.1.2" gives
// "2025.1.2"), or "" when it has none (a digest-only reference).
func imageVersion(image string) string {
	ref, _, _ := strings.Cut(image, "@")
	slash := strings.LastIndex(ref, "/")
	colon := strings.LastIndex(ref, ":")
	if colon <= slash {
		return ""
	}
	return ref[colon+1:]
}

// scyllaDBDatacenterAPIVersion is the apiVersion of scyllaDBDatacenterGVK, formatted once.
var scyllaDBDatacenterAPIVersion = scyllaDBDatacenterGVK.GroupVersion().String()

// controllerRef is metav1.NewControllerRef(sdc, scyllaDBDatacenterGVK) without formatting the apiVersion and
// allocating the reference anew: every object a sync builds carries one.
func controllerRef(sdc *scyllav1alpha1.ScyllaDBDatacenter) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         scyllaDBDatacenterAPIVersion,
		Kind:               scyllaDBDatacenterGVK.Kind,
		Name:               sdc.Name,
		UID:                sdc.UID,
		BlockOwnerDeletion: new(true),
		Controller:         new(true),
	}
}

// objectMeta returns the metadata of an object the datacenter owns: labels and the controllerRef. spec.metadata is
// the pods' metadata (api-reference.md §2.1) and goes on the pod template only (podObjectMeta): pod annotations on a
// LoadBalancer Service, say, could configure a load balancer.
func objectMeta(sdc *scyllav1alpha1.ScyllaDBDatacenter, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Namespace:       sdc.Namespace,
		Name:            name,
		Labels:          merge.Maps(labels, nil),
		OwnerReferences: []metav1.OwnerReference{controllerRef(sdc)},
	}
}

// podObjectMeta returns the metadata of the pod template: spec.metadata's labels and annotations with labels and
// annotations on top (the operator's win).
func podObjectMeta(sdc *scyllav1alpha1.ScyllaDBDatacenter, labels, annotations map[string]string) metav1.ObjectMeta {
	var userLabels, userAnnotations map[string]string
	if sdc.Spec.Metadata != nil {
		userLabels, userAnnotations = sdc.Spec.Metadata.Labels, sdc.Spec.Metadata.Annotations
	}
	return metav1.ObjectMeta{
		Labels:      merge.Maps(userLabels, labels),
		Annotations: merge.Maps(userAnnotations, annotations),
	}
}

// alternatorSettings are the Alternator settings that reach ScyllaDB, from spec.scyllaDB.alternatorOptions and the
// annotations the ScyllaCluster translator sets.
type alternatorSettings struct {
	enabled bool
	// httpPort is the plain HTTP port (alternator_port), 0 for none.
	httpPort int32
	// httpsSecret is the kubernetes.io/tls Secret with the certificate Alternator serves HTTPS with on
	// alternatorHTTPSPort (the sidecar sets alternator_https_port from its --alternator-tls-* flags), "" for no HTTPS.
	httpsSecret          string
	writeIsolation       scyllav1alpha1.AlternatorWriteIsolation
	enforceAuthorization bool
}

// makeAlternatorSettings returns the Alternator settings of sdc when spec.scyllaDB.alternatorOptions is set: HTTPS
// whenever a serving certificate exists for it (alternatorServingSecretName: the user's, or the operator's with
// automatic TLS on), plain HTTP when it is turned on (naming.AlternatorInsecureEnableHTTPAnnotation or
// naming.AlternatorPortAnnotation). With neither, Alternator is off and unservableAlternatorError says why.
func makeAlternatorSettings(sdc *scyllav1alpha1.ScyllaDBDatacenter, automaticTLS bool) (alternatorSettings, error) {
	options := sdc.Spec.ScyllaDB.AlternatorOptions
	if options == nil {
		return alternatorSettings{}, nil
	}
	s := alternatorSettings{
		enabled:              true,
		httpsSecret:          alternatorServingSecretName(sdc, automaticTLS),
		writeIsolation:       options.WriteIsolation,
		enforceAuthorization: true,
	}

	disableAuthorization, err := boolAnnotation(sdc, naming.AlternatorInsecureDisableAuthorizationAnnotation)
	if err != nil {
		return alternatorSettings{}, err
	}
	s.enforceAuthorization = !disableAuthorization

	enableHTTP, err := boolAnnotation(sdc, naming.AlternatorInsecureEnableHTTPAnnotation)
	if err != nil {
		return alternatorSettings{}, err
	}
	if v, ok := sdc.Annotations[naming.AlternatorPortAnnotation]; ok {
		port, err := strconv.ParseInt(v, 10, 32)
		if err != nil || port < 1 || port > 65535 {
			return alternatorSettings{}, newSpecError("annotation %q must be a port number, got %q", naming.AlternatorPortAnnotation, v)
		}
		s.httpPort = int32(port)
	} else if enableHTTP {
		s.httpPort = defaultAlternatorHTTPPort
	}
	if s.httpPort == 0 && len(s.httpsSecret) == 0 {
		return alternatorSettings{}, nil
	}
	if s.httpPort != 0 {
		// The plain port must not take one the pod serves already: Services and containers refuse duplicates.
		for _, p := range podPorts(alternatorSettings{httpsSecret: s.httpsSecret}) {
			if p.port == s.httpPort {
				return alternatorSettings{}, newSpecError("annotation %q: port %d is the pod's %q port; Alternator needs another one for plain HTTP",
					naming.AlternatorPortAnnotation, s.httpPort, p.name)
			}
		}
	}
	return s, nil
}

// unservableAlternatorError returns a spec error when spec.scyllaDB.alternatorOptions asks for Alternator and neither
// HTTPS nor plain HTTP can be served, so Alternator stays off: HTTPS needs a certificate. Retrying does not help;
// the rest of the datacenter is reconciled as usual. With automatic TLS on, the certificate sub-sync reports a
// UserManaged certificate without a Secret name and an unknown certificate type, so they are not reported twice.
func unservableAlternatorError(sdc *scyllav1alpha1.ScyllaDBDatacenter, automaticTLS bool) error {
	tlsCert := alternatorCertificate(sdc)
	if tlsCert == nil {
		return nil
	}
	if s, err := makeAlternatorSettings(sdc, automaticTLS); err != nil || s.enabled {
		// An invalid annotation is reported by every builder already.
		return nil
	}
	const field = "spec.scyllaDB.alternatorOptions"
	orHTTP := fmt.Sprintf("or set insecureEnableHTTP (ScyllaCluster spec.alternator.insecureEnableHTTP, or annotation %q: \"true\") "+
		"to serve plain HTTP. Alternator stays off until then", naming.AlternatorInsecureEnableHTTPAnnotation)
	switch {
	case tlsCert.Type == scyllav1alpha1.TLSCertificateTypeOperatorManaged:
		return newSpecError("%s: Alternator serves HTTPS only and its servingCertificate is %s, but the operator issues no "+
			"certificates: automatic TLS is off (--automatic-tls=false). Turn automatic TLS on, use a %s certificate from a "+
			"kubernetes.io/tls Secret (servingCertificate.userManagedOptions.secretName), %s", field,
			scyllav1alpha1.TLSCertificateTypeOperatorManaged, scyllav1alpha1.TLSCertificateTypeUserManaged, orHTTP)
	case automaticTLS:
		return nil
	case tlsCert.Type == scyllav1alpha1.TLSCertificateTypeUserManaged:
		return newSpecError("%s: Alternator serves HTTPS only and servingCertificate.userManagedOptions.secretName, required for "+
			"type %s, is not set. Name the kubernetes.io/tls Secret with its certificate, %s", field, scyllav1alpha1.TLSCertificateTypeUserManaged, orHTTP)
	default:
		return newSpecError("%s.servingCertificate.type %q is not one of %s, %s; Alternator serves HTTPS only: fix the type, %s", field,
			tlsCert.Type, scyllav1alpha1.TLSCertificateTypeOperatorManaged, scyllav1alpha1.TLSCertificateTypeUserManaged, orHTTP)
	}
}

// managedConfigSettings returns the scylla.yaml settings the operator manages beyond those the sidecar computes per
// node.
func managedConfigSettings(sdc *scyllav1alpha1.ScyllaDBDatacenter, automaticTLS bool) (map[string]any, error) {
	alternator, err := makeAlternatorSettings(sdc, automaticTLS)
	if err != nil {
		return nil, err
	}
	settings := map[string]any{}
	if alternator.enabled {
		settings["alternator_enforce_authorization"] = alternator.enforceAuthorization
		if len(alternator.writeIsolation) != 0 {
			settings["alternator_write_isolation"] = string(alternator.writeIsolation)
		}
		if alternator.httpPort != 0 {
			settings["alternator_port"] = alternator.httpPort
		}
	}
	return settings, nil
}

// makeManagedConfigMap returns the ConfigMap with the scylla.yaml of every rack of racks, sdc's effectiveRacks
// (naming.ScyllaDBManagedConfigKey): the rack's custom config (customConfigs holds the scylla.yaml of each ConfigMap a
// rack names in customConfigMapRef) with the settings the operator manages on top, key by key at the top level. The
// sidecar lays the keys it owns over it. A rack's pods carry a hash of its key, so that a change of either rolls them.
func makeManagedConfigMap(sdc *scyllav1alpha1.ScyllaDBDatacenter, racks []scyllav1alpha1.RackSpec, customConfigs map[string][]byte, automaticTLS bool) (*corev1.ConfigMap, error) {
	managed, err := managedConfigSettings(sdc, automaticTLS)
	if err != nil {
		return nil, err
	}

	data := make(map[string]string, len(racks))
	// A rack's scylla.yaml depends on its custom config alone (managed is the datacenter's): racks naming the same
	// ConfigMap, or none, share one rendering.
	rendered := map[string]string{}
	for i := range racks {
		rack := &racks[i]
		ref := customConfigMapRef(rack)
		out, ok := rendered[ref]
		if !ok {
			out, err = renderScyllaConfig(rack.Name, ref, customConfigs, managed)
			if err != nil {
				return nil, err
			}
			rendered[ref] = out
		}
		data[naming.ScyllaDBManagedConfigKey(rack.Name)] = out
	}

	return &corev1.ConfigMap{
		ObjectMeta: objectMeta(sdc, naming.ManagedConfigName(sdc.Name), naming.ClusterLabels(sdc.Name)),
		Data:       data,
	}, nil
}

// renderScyllaConfig returns the scylla.yaml of rackName: the custom config ConfigMap ref names (none when ref is
// empty), from customConfigs, with managed on top.
func renderScyllaConfig(rackName, ref string, customConfigs map[string][]byte, managed map[string]any) (string, error) {
	config := map[string]any{}
	if len(ref) != 0 {
		custom, ok := customConfigs[ref]
		if !ok {
			return "", fmt.Errorf("can't make the scylla.yaml of rack %q: custom config ConfigMap %q is missing", rackName, ref)
		}
		if err := yaml.Unmarshal(custom, &config); err != nil {
			return "", newSpecError("can't make the scylla.yaml of rack %q: key %q of ConfigMap %q is not a YAML map: %w", rackName, naming.ScyllaDBCustomConfigKey, ref, err)
		}
		if config == nil {
			config = map[string]any{}
		}
	}
	maps.Copy(config, managed)
	out, err := yaml.Marshal(config)
	if err != nil {
		return "", fmt.Errorf("can't marshal the scylla.yaml of rack %q: %w", rackName, err)
	}
	return string(out), nil
}

// authTokenSources are the places the agent auth token can come from, in the order of precedence of
// manager-integration.md ("Auth tokens").
type authTokenSources struct {
	// customConfig is the token the custom agent config Secret (customConfigSecretRef) sets, if any.
	customConfig string
	// override is the token in the Secret named by naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot.
	override string
	// existing is the token already in the datacenter's auth-token Secret.
	existing string
}

// chooseAuthToken returns the first token set among sources, or a newly generated one.
func chooseAuthToken(sources authTokenSources, generate func() (string, error)) (string, error) {
	for _, token := range []string{sources.customConfig, sources.override, sources.existing} {
		if len(token) != 0 {
			return token, nil
		}
	}
	token, err := generate()
	if err != nil {
		return "", fmt.Errorf("can't generate an agent auth token: %w", err)
	}
	if len(token) == 0 {
		return "", errors.New("can't generate an agent auth token: the generator returned an empty token")
	}
	return token, nil
}

// makeAgentAuthTokenSecret returns the Secret holding the agent configuration file with the auth token and, when s3
// is not nil, the s3 section of the datacenter's backup buckets (backup.go), and the key of the file's HMAC that pods
// carry (authTokenHMAC).
func makeAgentAuthTokenSecret(sdc *scyllav1alpha1.ScyllaDBDatacenter, token string, hmacKey []byte, s3 *scyllaagent.S3Config) (*corev1.Secret, error) {
	if len(hmacKey) == 0 {
		return nil, errors.New("can't make the agent auth-token Secret: the HMAC key is empty")
	}
	data, err := scyllaagent.MakeConfig(token, s3)
	if err != nil {
		return nil, fmt.Errorf("can't make the agent auth-token Secret: %w", err)
	}
	return &corev1.Secret{
		ObjectMeta: objectMeta(sdc, naming.AgentAuthTokenSecretName(sdc.Name), naming.ClusterLabels(sdc.Name)),
		Type:       corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			naming.ScyllaDBManagerAgentAuthTokenKey:        data,
			naming.ScyllaDBManagerAgentAuthTokenHMACKeyKey: slices.Clone(hmacKey),
		},
	}, nil
}

// authTokenHMAC returns the HMAC-SHA256, in hex, of the configuration file of an auth-token Secret
// (makeAgentAuthTokenSecret) keyed with the key it holds: pods carry it so that a new token or new bucket credentials
// restart them, and it tells nothing about either to whoever can read pods but not the Secret.
func authTokenHMAC(secret *corev1.Secret) string {
	mac := hmac.New(sha256.New, secret.Data[naming.ScyllaDBManagerAgentAuthTokenHMACKeyKey])
	mac.Write(secret.Data[naming.ScyllaDBManagerAgentAuthTokenKey])
	return hex.EncodeToString(mac.Sum(nil))
}

// dataHash returns a digest of a ConfigMap's or Secret's data for a pod template annotation.
func dataHash(data any) (string, error) {
	return resourceapply.Hash(data)
}

// makeServiceAccount returns the ServiceAccount ScyllaDB pods run as.
func makeServiceAccount(sdc *scyllav1alpha1.ScyllaDBDatacenter) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		ObjectMeta: objectMeta(sdc, naming.MemberServiceAccountName(sdc.Name), naming.ClusterLabels(sdc.Name)),
	}
}

// makeRoleBinding returns the RoleBinding that grants the member ClusterRole to the datacenter's ServiceAccount in
// its namespace only.
func makeRoleBinding(sdc *scyllav1alpha1.ScyllaDBDatacenter) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: objectMeta(sdc, naming.MemberRoleBindingName(sdc.Name), naming.ClusterLabels(sdc.Name)),
		RoleRef: rbacv1.RoleRef{
			APIGroup: rbacv1.GroupName,
			Kind:     "ClusterRole",
			Name:     naming.MemberClusterRoleName,
		},
		Subjects: []rbacv1.Subject{{
			Kind:      rbacv1.ServiceAccountKind,
			Namespace: sdc.Namespace,
			Name:      naming.MemberServiceAccountName(sdc.Name),
		}},
	}
}

// MakeMemberClusterRole returns the ClusterRole every datacenter's member RoleBinding refers to: what the sidecar in a
// ScyllaDB pod needs, and nothing more (pkg/sidecar/doc.go): it gets and lists the datacenter's Pods and member
// Services to compute addresses and seeds, watches its member Service, and patches it (decommission result, host ID).
// The RoleBinding limits it to the datacenter's namespace. The deploy manifests ship it; it is a Go builder so that
// a test keeps it in step with the sidecar.
func MakeMemberClusterRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{
			Name: naming.MemberClusterRoleName,
			Labels: map[string]string{
				naming.ManagedByLabel: naming.ManagedByLabelValue,
			},
		},
		Rules: []rbacv1.PolicyRule{
			{
				APIGroups: []string{""},
				Resources: []string{"pods"},
				Verbs:     []string{"get", "list"},
			},
			{
				APIGroups: []string{""},
				Resources: []string{"services"},
				Verbs:     []string{"get", "list", "watch", "patch"},
			},
		},
	}
}

// makePodDisruptionBudget returns the PodDisruptionBudget that lets voluntary disruptions take down at most one node
// of the datacenter at a time.
func makePodDisruptionBudget(sdc *scyllav1alpha1.ScyllaDBDatacenter) *policyv1.PodDisruptionBudget {
	maxUnavailable := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: objectMeta(sdc, naming.PodDisruptionBudgetName(sdc.Name), naming.ClusterLabels(sdc.Name)),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &maxUnavailable,
			Selector:       metav1.SetAsLabelSelector(naming.NodePodLabels(sdc.Name)),
		},
	}
}

// podPort is a port of a ScyllaDB pod. Names are at most 15 characters, as container port names must be.
type podPort struct {
	name  string
	port  int32
	agent bool
}

// podPorts are the ports of the ScyllaDB container, then the agent's.
func podPorts(alternator alternatorSettings) []podPort {
	// Room for every port, so that the optional ones need no copy: every Service and container of every sync lists them.
	ports := make([]podPort, 0, 11)
	ports = append(ports, []podPort{
		{name: "inter-node", port: interNodePort},
		{name: "inter-node-ssl", port: interNodeSSLPort},
		{name: "cql", port: cqlPort},
		{name: "cql-ssl", port: cqlSSLPort},
		{name: "cql-sa", port: cqlShardAwarePort},
		{name: "cql-ssl-sa", port: cqlSSLShardAwarePort},
		{name: "prometheus", port: prometheusPort},
	}...)
	if alternator.httpPort != 0 {
		ports = append(ports, podPort{name: "alternator", port: alternator.httpPort})
	}
	if len(alternator.httpsSecret) != 0 {
		ports = append(ports, podPort{name: "alternator-tls", port: alternatorHTTPSPort})
	}
	return append(ports,
		podPort{name: "agent-api", port: agentAPIPort, agent: true},
		podPort{name: "agent-prom", port: agentPrometheusPort, agent: true},
	)
}

// containerPorts are the ports of the agent container (agent) or of the ScyllaDB container.
func containerPorts(alternator alternatorSettings, agent bool) []corev1.ContainerPort {
	var ports []corev1.ContainerPort
	for _, p := range podPorts(alternator) {
		if p.agent == agent {
			ports = append(ports, corev1.ContainerPort{Name: p.name, ContainerPort: p.port, Protocol: corev1.ProtocolTCP})
		}
	}
	return ports
}

// servicePorts are the ports both the client and the member Services expose: all of the pod's.
func servicePorts(alternator alternatorSettings) []corev1.ServicePort {
	all := podPorts(alternator)
	ports := make([]corev1.ServicePort, 0, len(all))
	for _, p := range all {
		ports = append(ports, corev1.ServicePort{Name: p.name, Port: p.port, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(p.port)})
	}
	return ports
}

// makeClientService returns the datacenter's identity Service, which load-balances over every node.
func makeClientService(sdc *scyllav1alpha1.ScyllaDBDatacenter, automaticTLS bool) (*corev1.Service, error) {
	alternator, err := makeAlternatorSettings(sdc, automaticTLS)
	if err != nil {
		return nil, err
	}
	labels := naming.ClusterLabels(sdc.Name)
	labels[naming.ScyllaServiceTypeLabel] = naming.ScyllaServiceTypeClient
	return &corev1.Service{
		ObjectMeta: objectMeta(sdc, naming.ClientServiceName(sdc.Name), labels),
		Spec: corev1.ServiceSpec{
			Type:           corev1.ServiceTypeClusterIP,
			Selector:       naming.NodePodLabels(sdc.Name),
			Ports:          servicePorts(alternator),
			IPFamilyPolicy: sdc.Spec.IPFamilyPolicy,
			IPFamilies:     slices.Clone(sdc.Spec.IPFamilies),
		},
	}, nil
}

// exposeSettings are the effective expose options: the spec's, with the API's defaults, adjusted for host
// networking.
type exposeSettings struct {
	nodeService      scyllav1alpha1.NodeServiceTemplate
	broadcastNodes   scyllav1alpha1.BroadcastOptions
	broadcastClients scyllav1alpha1.BroadcastOptions
	listenNodes      scyllav1alpha1.ListenOptions
	listenClients    scyllav1alpha1.ListenOptions
	hostNetworking   bool
}

// makeExposeSettings applies the defaults of spec.exposeOptions: a ClusterIP node Service; both broadcast addresses
// ServiceClusterIP when broadcastOptions is omitted, PodIP for an entry omitted inside it; listening on Any. With
// host networking (naming.HostNetworkingAnnotation) nodes are reached at their Pod IP, which is the host's
// (multi-dc-early.md): the node Service defaults to Headless and the broadcast addresses to PodIP, and a
// broadcastOptions.nodes other than PodIP is an error.
func makeExposeSettings(sdc *scyllav1alpha1.ScyllaDBDatacenter) (exposeSettings, error) {
	hostNetwork, err := hostNetworking(sdc)
	if err != nil {
		return exposeSettings{}, err
	}
	s := exposeSettings{
		nodeService:      scyllav1alpha1.NodeServiceTemplate{Type: scyllav1alpha1.NodeServiceTypeClusterIP},
		broadcastNodes:   scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypeServiceClusterIP},
		broadcastClients: scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypeServiceClusterIP},
		listenNodes:      scyllav1alpha1.ListenOptions{Type: scyllav1alpha1.ListenAddressTypeAny},
		listenClients:    scyllav1alpha1.ListenOptions{Type: scyllav1alpha1.ListenAddressTypeAny},
		hostNetworking:   hostNetwork,
	}
	if hostNetwork {
		s.nodeService.Type = scyllav1alpha1.NodeServiceTypeHeadless
		s.broadcastNodes.Type = scyllav1alpha1.BroadcastAddressTypePodIP
		s.broadcastClients.Type = scyllav1alpha1.BroadcastAddressTypePodIP
	}

	options := sdc.Spec.ExposeOptions
	if options == nil {
		options = &scyllav1alpha1.ExposeOptions{}
	}
	if options.NodeService != nil {
		s.nodeService = *options.NodeService.DeepCopy()
	}
	if b := options.BroadcastOptions; b != nil {
		podIP := scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypePodIP}
		s.broadcastNodes, s.broadcastClients = podIP, podIP
		if b.Nodes != nil {
			s.broadcastNodes = *b.Nodes.DeepCopy()
		}
		if b.Clients != nil {
			s.broadcastClients = *b.Clients.DeepCopy()
		}
	}
	if l := options.ListenOptions; l != nil {
		if l.Nodes != nil {
			s.listenNodes = *l.Nodes.DeepCopy()
		}
		if l.Clients != nil {
			s.listenClients = *l.Clients.DeepCopy()
		}
	}
	for _, l := range []*scyllav1alpha1.ListenOptions{&s.listenNodes, &s.listenClients} {
		if len(l.Type) == 0 {
			l.Type = scyllav1alpha1.ListenAddressTypeAny
		}
	}

	if hostNetwork && s.broadcastNodes.Type != scyllav1alpha1.BroadcastAddressTypePodIP {
		return exposeSettings{}, newSpecError("host networking (annotation %q) needs spec.exposeOptions.broadcastOptions.nodes.type %s, got %s",
			naming.HostNetworkingAnnotation, scyllav1alpha1.BroadcastAddressTypePodIP, s.broadcastNodes.Type)
	}
	for _, b := range []struct {
		field   string
		options scyllav1alpha1.BroadcastOptions
	}{{"nodes", s.broadcastNodes}, {"clients", s.broadcastClients}} {
		if b.options.Type == scyllav1alpha1.BroadcastAddressTypeServiceClusterIP && s.nodeService.Type == scyllav1alpha1.NodeServiceTypeHeadless {
			return exposeSettings{}, newSpecError("spec.exposeOptions.broadcastOptions.%s.type %s needs a node Service with a cluster IP, but its type is %s",
				b.field, b.options.Type, s.nodeService.Type)
		}
	}
	return s, nil
}

// makeMemberService returns the Service of one node, named like its pod and selecting only it, shaped by
// spec.exposeOptions.nodeService and the rack's node Service metadata. decommissioned is the value of
// naming.DecommissionedLabel to carry, "" for none: the controller sets "false" to ask for a decommission and keeps
// whatever the sidecar set afterwards.
func makeMemberService(sdc *scyllav1alpha1.ScyllaDBDatacenter, rack *scyllav1alpha1.RackSpec, name, decommissioned string, automaticTLS bool) (*corev1.Service, error) {
	alternator, err := makeAlternatorSettings(sdc, automaticTLS)
	if err != nil {
		return nil, err
	}
	expose, err := makeExposeSettings(sdc)
	if err != nil {
		return nil, err
	}
	template := expose.nodeService

	labels := naming.ClusterLabels(sdc.Name)
	labels[naming.DatacenterNameLabel] = datacenterName(sdc)
	labels[naming.RackNameLabel] = rack.Name
	labels[naming.ScyllaServiceTypeLabel] = naming.ScyllaServiceTypeMember
	if len(decommissioned) != 0 {
		labels[naming.DecommissionedLabel] = decommissioned
	}

	var rackLabels, rackAnnotations map[string]string
	if m := nodeServiceMetadataOf(rack.ExposeOptions); m != nil {
		rackLabels, rackAnnotations = m.Labels, m.Annotations
	}
	meta := objectMeta(sdc, name, nil)
	// The operator's labels win over the user's at every level, the rack's over the template's. Merged into one map:
	// every sync builds every member Service.
	meta.Labels = make(map[string]string, len(template.Labels)+len(rackLabels)+len(labels))
	maps.Copy(meta.Labels, template.Labels)
	maps.Copy(meta.Labels, rackLabels)
	maps.Copy(meta.Labels, labels)
	meta.Annotations = merge.Maps(template.Annotations, rackAnnotations)

	svc := &corev1.Service{
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Selector:                 map[string]string{naming.StatefulSetPodNameLabel: name},
			Ports:                    servicePorts(alternator),
			PublishNotReadyAddresses: true,
			IPFamilyPolicy:           sdc.Spec.IPFamilyPolicy,
			IPFamilies:               slices.Clone(sdc.Spec.IPFamilies),
			InternalTrafficPolicy:    template.InternalTrafficPolicy,
		},
	}

	switch template.Type {
	case scyllav1alpha1.NodeServiceTypeHeadless:
		svc.Spec.Type = corev1.ServiceTypeClusterIP
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	case scyllav1alpha1.NodeServiceTypeClusterIP:
		svc.Spec.Type = corev1.ServiceTypeClusterIP
	case scyllav1alpha1.NodeServiceTypeLoadBalancer:
		svc.Spec.Type = corev1.ServiceTypeLoadBalancer
		if template.ExternalTrafficPolicy != nil {
			svc.Spec.ExternalTrafficPolicy = *template.ExternalTrafficPolicy
		}
		svc.Spec.AllocateLoadBalancerNodePorts = template.AllocateLoadBalancerNodePorts
		svc.Spec.LoadBalancerClass = template.LoadBalancerClass
	default:
		return nil, newSpecError("spec.exposeOptions.nodeService.type %q is not one of %s, %s, %s", template.Type,
			scyllav1alpha1.NodeServiceTypeHeadless, scyllav1alpha1.NodeServiceTypeClusterIP, scyllav1alpha1.NodeServiceTypeLoadBalancer)
	}
	if template.Type != scyllav1alpha1.NodeServiceTypeLoadBalancer &&
		(template.ExternalTrafficPolicy != nil || template.AllocateLoadBalancerNodePorts != nil || template.LoadBalancerClass != nil) {
		return nil, newSpecError("spec.exposeOptions.nodeService: externalTrafficPolicy, allocateLoadBalancerNodePorts and loadBalancerClass need type %s", scyllav1alpha1.NodeServiceTypeLoadBalancer)
	}

	return svc, nil
}

// statefulSetInputs are what a rack's StatefulSet depends on beyond the spec.
type statefulSetInputs struct {
	operatorImage     string
	replicas          int32
	rackOrdinal       int
	managedConfigHash string
	authTokenHash     string
	// automaticTLS: the pods serve TLS with the operator's certificates (addTLSToPod).
	automaticTLS bool
}

// makeStatefulSet returns the StatefulSet of one rack (merged with the rack template, see effectiveRacks).
func makeStatefulSet(sdc *scyllav1alpha1.ScyllaDBDatacenter, rack *scyllav1alpha1.RackSpec, in statefulSetInputs) (*appsv1.StatefulSet, error) {
	if len(in.operatorImage) == 0 {
		return nil, errors.New("can't make a StatefulSet: the operator image is not set")
	}
	if sdc.Spec.ScyllaDBManagerAgent == nil || sdc.Spec.ScyllaDBManagerAgent.Image == nil || len(*sdc.Spec.ScyllaDBManagerAgent.Image) == 0 {
		return nil, newSpecError("spec.scyllaDBManagerAgent.image must be set")
	}
	if len(sdc.Spec.ScyllaDB.Image) == 0 {
		return nil, newSpecError("spec.scyllaDB.image must be set")
	}
	hostNetwork, err := hostNetworking(sdc)
	if err != nil {
		return nil, err
	}
	alternator, err := makeAlternatorSettings(sdc, in.automaticTLS)
	if err != nil {
		return nil, err
	}
	kernelSettings, err := sysctls(sdc)
	if err != nil {
		return nil, err
	}

	dc := datacenterName(sdc)
	name := naming.StatefulSetName(sdc.Name, dc, rack.Name)
	selectorLabels := naming.RackLabels(sdc.Name, dc, rack.Name)

	claim, err := makeDataVolumeClaimTemplate(rack)
	if err != nil {
		return nil, err
	}
	volumes, scyllaMounts, agentMounts, err := makeVolumes(sdc, rack)
	if err != nil {
		return nil, err
	}
	sidecarArgs, err := makeSidecarArgs(sdc, rack)
	if err != nil {
		return nil, err
	}
	volumes, scyllaMounts, sidecarArgs, err = addTLSToPod(sdc, rack, in.automaticTLS, alternator, volumes, scyllaMounts, sidecarArgs)
	if err != nil {
		return nil, err
	}

	podLabels := maps.Clone(selectorLabels)
	podLabels[naming.RackOrdinalLabel] = strconv.Itoa(in.rackOrdinal)
	if version := imageVersion(sdc.Spec.ScyllaDB.Image); len(version) != 0 && len(validation.IsValidLabelValue(version)) == 0 {
		podLabels[naming.ScyllaVersionLabel] = version
	}
	podMeta := podObjectMeta(sdc, podLabels, map[string]string{
		naming.ManagedConfigHashAnnotation:                 in.managedConfigHash,
		naming.ScyllaDBManagerAgentAuthTokenHashAnnotation: in.authTokenHash,
		naming.PrometheusScrapeAnnotation:                  "true",
		naming.PrometheusPortAnnotation:                    strconv.Itoa(prometheusPort),
	})
	if sdc.Spec.ForceRedeploymentReason != nil && len(*sdc.Spec.ForceRedeploymentReason) != 0 {
		podMeta.Annotations[naming.ForceRedeploymentReasonAnnotation] = *sdc.Spec.ForceRedeploymentReason
	}

	terminationGracePeriodSeconds := int64(defaultTerminationGracePeriodSeconds)
	if v := sdc.Spec.MinTerminationGracePeriodSeconds; v != nil && int64(*v) > terminationGracePeriodSeconds {
		terminationGracePeriodSeconds = int64(*v)
	}
	minReadySeconds := int32(defaultMinReadySeconds)
	if sdc.Spec.MinReadySeconds != nil {
		minReadySeconds = *sdc.Spec.MinReadySeconds
	}

	var dnsPolicy corev1.DNSPolicy
	switch {
	case sdc.Spec.DNSPolicy != nil:
		dnsPolicy = *sdc.Spec.DNSPolicy
	case hostNetwork:
		dnsPolicy = corev1.DNSClusterFirstWithHostNet
	}

	var tolerations []corev1.Toleration
	if rack.Placement != nil {
		tolerations = slices.Clone(rack.Placement.Tolerations)
	}

	replicas := in.replicas
	sts := &appsv1.StatefulSet{
		ObjectMeta: objectMeta(sdc, name, selectorLabels),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &replicas,
			Selector:            metav1.SetAsLabelSelector(selectorLabels),
			ServiceName:         naming.ClientServiceName(sdc.Name),
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type: appsv1.RollingUpdateStatefulSetStrategyType,
			},
			MinReadySeconds:      minReadySeconds,
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{*claim},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: podMeta,
				Spec: corev1.PodSpec{
					ServiceAccountName:            naming.MemberServiceAccountName(sdc.Name),
					HostNetwork:                   hostNetwork,
					DNSPolicy:                     dnsPolicy,
					ImagePullSecrets:              slices.Clone(sdc.Spec.ImagePullSecrets),
					Affinity:                      makeAffinity(rack),
					Tolerations:                   tolerations,
					ReadinessGates:                slices.Clone(sdc.Spec.ReadinessGates),
					TerminationGracePeriodSeconds: &terminationGracePeriodSeconds,
					Volumes:                       volumes,
					InitContainers:                makeInitContainers(in.operatorImage, kernelSettings, scyllaDBResources(rack)),
					Containers: []corev1.Container{
						makeScyllaDBContainer(sdc, rack, sidecarArgs, scyllaMounts, alternator),
						makeAgentContainer(sdc, rack, agentMounts),
					},
				},
			},
		},
	}
	return sts, nil
}

// makeInitContainers returns the init containers of a ScyllaDB pod: the one that sets the kernel parameters, when there
// are any, then the one that copies the operator binary the sidecar runs from. They take the ScyllaDB container's
// resources: a pod is of the Guaranteed QoS class, which CPU pinning needs, only when every container, init
// containers included, has limits equal to its requests, and an init container's resources count for the pod only
// while it runs, before the others start.
func makeInitContainers(operatorImage string, kernelSettings []sysctl.Setting, resources corev1.ResourceRequirements) []corev1.Container {
	var containers []corev1.Container
	if c := makeSysctlContainer(operatorImage, kernelSettings); c != nil {
		c.Resources = *resources.DeepCopy()
		containers = append(containers, *c)
	}
	return append(containers, corev1.Container{
		Name:            naming.SidecarInjectionContainerName,
		Image:           operatorImage,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Resources:       *resources.DeepCopy(),
		Command:         []string{"/bin/cp", "-a", naming.OperatorBinaryPathInImage, naming.SharedBinaryDir + "/"},
		VolumeMounts: []corev1.VolumeMount{{
			Name:      naming.SharedBinaryVolumeName,
			MountPath: naming.SharedBinaryDir,
		}},
	})
}

func sharedOperatorBinary() string {
	return naming.SharedBinaryDir + "/scylla-operator"
}

// scyllaDBResources returns the resources of a rack's ScyllaDB container.
func scyllaDBResources(rack *scyllav1alpha1.RackSpec) corev1.ResourceRequirements {
	if rack.ScyllaDB != nil && rack.ScyllaDB.Resources != nil {
		return *rack.ScyllaDB.Resources.DeepCopy()
	}
	return corev1.ResourceRequirements{}
}

func makeScyllaDBContainer(sdc *scyllav1alpha1.ScyllaDBDatacenter, rack *scyllav1alpha1.RackSpec, sidecarArgs []string, mounts []corev1.VolumeMount, alternator alternatorSettings) corev1.Container {
	resources := scyllaDBResources(rack)

	return corev1.Container{
		Name:            naming.ScyllaDBContainerName,
		Image:           sdc.Spec.ScyllaDB.Image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         append([]string{sharedOperatorBinary(), "sidecar"}, sidecarArgs...),
		Env: []corev1.EnvVar{
			{Name: podNameEnvVar, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
			{Name: podNamespaceEnvVar, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}},
		},
		Ports:          containerPorts(alternator, false),
		Resources:      resources,
		VolumeMounts:   mounts,
		StartupProbe:   sidecarProbe(sidecarHealthzPath, startupProbePeriodSeconds, startupProbeFailureThreshold),
		LivenessProbe:  sidecarProbe(sidecarHealthzPath, probePeriodSeconds, livenessProbeFailureThreshold),
		ReadinessProbe: sidecarProbe(sidecarReadyzPath, probePeriodSeconds, readinessProbeFailureThreshold),
	}
}

// Probe timing. ScyllaDB can take long to start (commit log replay), so the startup probe tolerates an hour.
const (
	probePeriodSeconds             = 10
	probeTimeoutSeconds            = 10
	startupProbePeriodSeconds      = 10
	startupProbeFailureThreshold   = 360
	livenessProbeFailureThreshold  = 12
	readinessProbeFailureThreshold = 1
)

func sidecarProbe(path string, periodSeconds, failureThreshold int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: path,
			Port: intstr.FromInt32(sidecarProbePort),
		}},
		TimeoutSeconds:   probeTimeoutSeconds,
		PeriodSeconds:    periodSeconds,
		SuccessThreshold: 1,
		FailureThreshold: failureThreshold,
	}
}

func makeAgentContainer(sdc *scyllav1alpha1.ScyllaDBDatacenter, rack *scyllav1alpha1.RackSpec, mounts []corev1.VolumeMount) corev1.Container {
	// Later files override earlier ones; the auth token goes last so that it is the one computed for the datacenter.
	args := []string{"-c", naming.ScyllaDBManagerAgentDefaultConfigPath}
	if ref := agentCustomConfigSecretRef(rack); len(ref) != 0 {
		args = append(args, "-c", naming.ScyllaDBManagerAgentCustomConfigDir+"/"+naming.ScyllaDBManagerAgentConfigKey)
	}
	args = append(args, "-c", naming.ScyllaDBManagerAgentAuthTokenDir+"/"+naming.ScyllaDBManagerAgentAuthTokenKey)

	var resources corev1.ResourceRequirements
	if rack.ScyllaDBManagerAgent != nil && rack.ScyllaDBManagerAgent.Resources != nil {
		resources = *rack.ScyllaDBManagerAgent.Resources.DeepCopy()
	}

	return corev1.Container{
		Name:            naming.ScyllaDBManagerAgentContainerName,
		Image:           *sdc.Spec.ScyllaDBManagerAgent.Image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Args:            args,
		Ports:           containerPorts(alternatorSettings{}, true),
		Resources:       resources,
		VolumeMounts:    mounts,
	}
}

func customConfigMapRef(rack *scyllav1alpha1.RackSpec) string {
	if rack.ScyllaDB == nil || rack.ScyllaDB.CustomConfigMapRef == nil {
		return ""
	}
	return *rack.ScyllaDB.CustomConfigMapRef
}

func agentCustomConfigSecretRef(rack *scyllav1alpha1.RackSpec) string {
	if rack.ScyllaDBManagerAgent == nil || rack.ScyllaDBManagerAgent.CustomConfigSecretRef == nil {
		return ""
	}
	return *rack.ScyllaDBManagerAgent.CustomConfigSecretRef
}

// makeVolumes returns the pod's volumes and the mounts of the ScyllaDB and agent containers: the operator's, then
// the user's. User volumes and mounts that clash with the operator's are a spec error rather than an invalid pod.
func makeVolumes(sdc *scyllav1alpha1.ScyllaDBDatacenter, rack *scyllav1alpha1.RackSpec) (volumes []corev1.Volume, scyllaMounts, agentMounts []corev1.VolumeMount, err error) {
	volumes = []corev1.Volume{
		{Name: naming.SharedBinaryVolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: naming.ScyllaDBManagedConfigVolumeName, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: naming.ManagedConfigName(sdc.Name)},
			Items:                []corev1.KeyToPath{{Key: naming.ScyllaDBManagedConfigKey(rack.Name), Path: naming.ScyllaDBManagedConfigFileName}},
		}}},
		{Name: naming.ScyllaDBManagerAgentAuthTokenVolumeName, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: naming.AgentAuthTokenSecretName(sdc.Name),
		}}},
	}
	scyllaMounts = []corev1.VolumeMount{
		{Name: naming.DataVolumeName, MountPath: naming.DataDir},
		{Name: naming.SharedBinaryVolumeName, MountPath: naming.SharedBinaryDir, ReadOnly: true},
		{Name: naming.ScyllaDBManagedConfigVolumeName, MountPath: naming.ScyllaDBManagedConfigDir, ReadOnly: true},
	}
	agentMounts = []corev1.VolumeMount{
		{Name: naming.DataVolumeName, MountPath: naming.DataDir},
		{Name: naming.ScyllaDBManagerAgentAuthTokenVolumeName, MountPath: naming.ScyllaDBManagerAgentAuthTokenDir, ReadOnly: true},
	}

	if ref := agentCustomConfigSecretRef(rack); len(ref) != 0 {
		volumes = append(volumes, corev1.Volume{Name: naming.ScyllaDBManagerAgentCustomConfigVolumeName, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: ref,
		}}})
		agentMounts = append(agentMounts, corev1.VolumeMount{Name: naming.ScyllaDBManagerAgentCustomConfigVolumeName, MountPath: naming.ScyllaDBManagerAgentCustomConfigDir, ReadOnly: true})
	}

	reservedVolumes := []string{naming.DataVolumeName}
	for _, v := range volumes {
		reservedVolumes = append(reservedVolumes, v.Name)
	}

	var userVolumes []corev1.Volume
	var userScyllaMounts, userAgentMounts []corev1.VolumeMount
	if rack.ScyllaDB != nil {
		userVolumes = append(userVolumes, rack.ScyllaDB.Volumes...)
		userScyllaMounts = rack.ScyllaDB.VolumeMounts
	}
	if rack.ScyllaDBManagerAgent != nil {
		for _, v := range rack.ScyllaDBManagerAgent.Volumes {
			// The ScyllaDB and agent templates may both list a volume they share.
			if i := slices.IndexFunc(userVolumes, func(u corev1.Volume) bool { return u.Name == v.Name }); i >= 0 {
				if !equalVolumes(&userVolumes[i], &v) {
					return nil, nil, nil, newSpecError("rack %q: volume %q is defined differently for scyllaDB and scyllaDBManagerAgent", rack.Name, v.Name)
				}
				continue
			}
			userVolumes = append(userVolumes, v)
		}
		userAgentMounts = rack.ScyllaDBManagerAgent.VolumeMounts
	}

	for _, v := range userVolumes {
		if slices.Contains(reservedVolumes, v.Name) {
			return nil, nil, nil, newSpecError("rack %q: volume name %q is reserved by the operator", rack.Name, v.Name)
		}
	}
	for _, m := range userScyllaMounts {
		if slices.ContainsFunc(scyllaMounts, func(o corev1.VolumeMount) bool { return o.MountPath == m.MountPath }) {
			return nil, nil, nil, newSpecError("rack %q: scyllaDB volume mount path %q is reserved by the operator", rack.Name, m.MountPath)
		}
	}
	for _, m := range userAgentMounts {
		if slices.ContainsFunc(agentMounts, func(o corev1.VolumeMount) bool { return o.MountPath == m.MountPath }) {
			return nil, nil, nil, newSpecError("rack %q: scyllaDBManagerAgent volume mount path %q is reserved by the operator", rack.Name, m.MountPath)
		}
	}

	for i := range userVolumes {
		volumes = append(volumes, *userVolumes[i].DeepCopy())
	}
	for i := range userScyllaMounts {
		scyllaMounts = append(scyllaMounts, *userScyllaMounts[i].DeepCopy())
	}
	for i := range userAgentMounts {
		agentMounts = append(agentMounts, *userAgentMounts[i].DeepCopy())
	}
	return volumes, scyllaMounts, agentMounts, nil
}

func equalVolumes(a, b *corev1.Volume) bool {
	ha, errA := resourceapply.Hash(a)
	hb, errB := resourceapply.Hash(b)
	return errA == nil && errB == nil && ha == hb
}

// makeDataVolumeClaimTemplate returns the claim template of the rack's data volume.
func makeDataVolumeClaimTemplate(rack *scyllav1alpha1.RackSpec) (*corev1.PersistentVolumeClaim, error) {
	if rack.ScyllaDB == nil || rack.ScyllaDB.Storage == nil {
		return nil, newSpecError("rack %q has no storage: set scyllaDB.storage on the rack or in rackTemplate", rack.Name)
	}
	storage := rack.ScyllaDB.Storage
	capacity, err := resource.ParseQuantity(storage.Capacity)
	if err != nil {
		return nil, newSpecError("rack %q: storage capacity %q is not a quantity: %w", rack.Name, storage.Capacity, err)
	}
	if capacity.Sign() <= 0 {
		return nil, newSpecError("rack %q: storage capacity %q must be positive", rack.Name, storage.Capacity)
	}

	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: naming.DataVolumeName},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: storage.StorageClassName,
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: capacity},
			},
		},
	}
	if storage.Metadata != nil {
		claim.Labels = merge.Maps(storage.Metadata.Labels, nil)
		claim.Annotations = merge.Maps(storage.Metadata.Annotations, nil)
	}
	return claim, nil
}

// makeAffinity returns the rack's placement affinity with its topologyLabelSelector added as a required node
// affinity: every label must match, on top of (ANDed into each term of) what the placement requires.
func makeAffinity(rack *scyllav1alpha1.RackSpec) *corev1.Affinity {
	affinity := &corev1.Affinity{}
	if rack.Placement != nil {
		affinity.NodeAffinity = rack.Placement.NodeAffinity.DeepCopy()
		affinity.PodAffinity = rack.Placement.PodAffinity.DeepCopy()
		affinity.PodAntiAffinity = rack.Placement.PodAntiAffinity.DeepCopy()
	}

	if len(rack.TopologyLabelSelector) != 0 {
		var requirements []corev1.NodeSelectorRequirement
		for _, key := range slices.Sorted(maps.Keys(rack.TopologyLabelSelector)) {
			requirements = append(requirements, corev1.NodeSelectorRequirement{
				Key:      key,
				Operator: corev1.NodeSelectorOpIn,
				Values:   []string{rack.TopologyLabelSelector[key]},
			})
		}
		if affinity.NodeAffinity == nil {
			affinity.NodeAffinity = &corev1.NodeAffinity{}
		}
		required := affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		if required == nil || len(required.NodeSelectorTerms) == 0 {
			required = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{}}}
		}
		for i := range required.NodeSelectorTerms {
			required.NodeSelectorTerms[i].MatchExpressions = append(required.NodeSelectorTerms[i].MatchExpressions, requirements...)
		}
		affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = required
	}

	if affinity.NodeAffinity == nil && affinity.PodAffinity == nil && affinity.PodAntiAffinity == nil {
		return nil
	}
	return affinity
}

// The sidecar's command-line contract (pkg/sidecar/doc.go): the environment it reads its identity from, its probe
// endpoint and its flags. makeSidecarArgs is the only place that maps the spec onto them.
const (
	podNameEnvVar      = "POD_NAME"
	podNamespaceEnvVar = "POD_NAMESPACE"

	sidecarProbePort   = 8080
	sidecarHealthzPath = "/healthz"
	sidecarReadyzPath  = "/readyz"

	sidecarFlagPodNamespace             = "--pod-namespace"
	sidecarFlagPodName                  = "--pod-name"
	sidecarFlagMemberServiceName        = "--member-service-name"
	sidecarFlagClusterName              = "--cluster-name"
	sidecarFlagDatacenter               = "--datacenter"
	sidecarFlagRack                     = "--rack"
	sidecarFlagExternalSeeds            = "--external-seeds"
	sidecarFlagIPFamily                 = "--ip-family"
	sidecarFlagHostNetworking           = "--host-networking"
	sidecarFlagCPUCount                 = "--cpu-count"
	sidecarFlagDeveloperMode            = "--developer-mode"
	sidecarFlagScyllaDBExtraArgs        = "--scylladb-extra-args"
	sidecarFlagScyllaDBCustomConfigPath = "--scylladb-custom-config-path"
	sidecarFlagScyllaDBDataDir          = "--scylladb-data-dir"
	sidecarFlagProbesAddress            = "--probes-address"

	// Prefixes of the address flags; each takes the suffixes below.
	sidecarFlagBroadcastNodes   = "--broadcast-nodes"
	sidecarFlagBroadcastClients = "--broadcast-clients"
	sidecarFlagListenNodes      = "--listen-nodes"
	sidecarFlagListenClients    = "--listen-clients"
	sidecarFlagSuffixType       = "-type"
	sidecarFlagSuffixSource     = "-pod-ip-source"
	sidecarFlagSuffixInterface  = "-pod-ip-interface-name"
)

func sidecarFlag(name, value string) string {
	return name + "=" + value
}

// makeSidecarArgs returns the arguments of `scylla-operator sidecar` for a node of rack: its identity (the pod's
// name, which is also its member Service's, and namespace come from the downward API), the cluster, datacenter and
// rack names, the addresses to advertise and listen on (expose-options.md), the external seeds (external-seeds.md),
// the CPU count, the configuration file, the data directory and the extra ScyllaDB arguments.
func makeSidecarArgs(sdc *scyllav1alpha1.ScyllaDBDatacenter, rack *scyllav1alpha1.RackSpec) ([]string, error) {
	expose, err := makeExposeSettings(sdc)
	if err != nil {
		return nil, err
	}

	args := []string{
		sidecarFlag(sidecarFlagPodNamespace, "$("+podNamespaceEnvVar+")"),
		sidecarFlag(sidecarFlagPodName, "$("+podNameEnvVar+")"),
		sidecarFlag(sidecarFlagMemberServiceName, "$("+podNameEnvVar+")"),
		sidecarFlag(sidecarFlagClusterName, clusterName(sdc)),
		sidecarFlag(sidecarFlagDatacenter, datacenterName(sdc)),
		sidecarFlag(sidecarFlagRack, rack.Name),
	}
	// The seeds are valid (validation.ValidateScyllaDBDatacenter, checked before anything is built).
	if len(sdc.Spec.ScyllaDB.ExternalSeeds) != 0 {
		args = append(args, sidecarFlag(sidecarFlagExternalSeeds, strings.Join(sdc.Spec.ScyllaDB.ExternalSeeds, ",")))
	}

	args = append(args, addressArgs(sidecarFlagBroadcastNodes, string(expose.broadcastNodes.Type), expose.broadcastNodes.PodIP)...)
	args = append(args, addressArgs(sidecarFlagBroadcastClients, string(expose.broadcastClients.Type), expose.broadcastClients.PodIP)...)
	args = append(args, addressArgs(sidecarFlagListenNodes, string(expose.listenNodes.Type), expose.listenNodes.PodIP)...)
	args = append(args, addressArgs(sidecarFlagListenClients, string(expose.listenClients.Type), expose.listenClients.PodIP)...)
	ipFamily := corev1.IPv4Protocol
	if len(sdc.Spec.IPFamilies) != 0 {
		ipFamily = sdc.Spec.IPFamilies[0]
	}
	args = append(args, sidecarFlag(sidecarFlagIPFamily, string(ipFamily)))
	if expose.hostNetworking {
		args = append(args, sidecarFlag(sidecarFlagHostNetworking, "true"))
	}

	if cpus := cpuCount(rack); cpus > 0 {
		args = append(args, sidecarFlag(sidecarFlagCPUCount, strconv.FormatInt(cpus, 10)))
	}
	if sdc.Spec.ScyllaDB.EnableDeveloperMode != nil && *sdc.Spec.ScyllaDB.EnableDeveloperMode {
		args = append(args, sidecarFlag(sidecarFlagDeveloperMode, "true"))
	}
	if len(sdc.Spec.ScyllaDB.AdditionalScyllaDBArguments) != 0 {
		args = append(args, sidecarFlag(sidecarFlagScyllaDBExtraArgs, shellJoin(sdc.Spec.ScyllaDB.AdditionalScyllaDBArguments)))
	}
	args = append(args,
		sidecarFlag(sidecarFlagScyllaDBCustomConfigPath, naming.ScyllaDBManagedConfigDir+"/"+naming.ScyllaDBManagedConfigFileName),
		sidecarFlag(sidecarFlagScyllaDBDataDir, naming.DataDir),
		sidecarFlag(sidecarFlagProbesAddress, fmt.Sprintf(":%d", sidecarProbePort)),
	)
	return args, nil
}

// addressArgs returns the flags of one address: its type and, when given, where its Pod IP comes from.
func addressArgs(prefix, addressType string, podIP *scyllav1alpha1.PodIPAddressOptions) []string {
	args := []string{sidecarFlag(prefix+sidecarFlagSuffixType, addressType)}
	if podIP == nil {
		return args
	}
	if len(podIP.Source) != 0 {
		args = append(args, sidecarFlag(prefix+sidecarFlagSuffixSource, string(podIP.Source)))
	}
	if podIP.InterfaceOptions != nil {
		args = append(args, sidecarFlag(prefix+sidecarFlagSuffixInterface, podIP.InterfaceOptions.InterfaceName))
	}
	return args
}

// shellJoin joins arguments into one string that a POSIX shell (and the sidecar's --scylladb-extra-args) splits back
// into the same arguments: each argument with a character outside a safe set is single-quoted.
func shellJoin(args []string) string {
	quoted := make([]string, 0, len(args))
	for _, a := range args {
		safe := len(a) != 0 && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=.,/:@+%", r))
		}) < 0
		if safe {
			quoted = append(quoted, a)
			continue
		}
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return strings.Join(quoted, " ")
}

// cpuCount is the number of CPUs ScyllaDB gets (its --smp): the container's CPU limit, or request when there is no
// limit, rounded up; 0 when neither is set.
func cpuCount(rack *scyllav1alpha1.RackSpec) int64 {
	if rack.ScyllaDB == nil || rack.ScyllaDB.Resources == nil {
		return 0
	}
	resources := rack.ScyllaDB.Resources
	if q, ok := resources.Limits[corev1.ResourceCPU]; ok {
		return q.Value()
	}
	if q, ok := resources.Requests[corev1.ResourceCPU]; ok {
		return q.Value()
	}
	return 0
}
