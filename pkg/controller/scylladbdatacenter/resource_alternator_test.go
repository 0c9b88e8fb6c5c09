package scylladbdatacenter

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/sidecar"
	"go.yaml.in/yaml/v3"
)

// alternatorOutcome is what a datacenter's Alternator settings become in every object: the scylla.yaml keys of
// Alternator (the operator's managed config and the sidecar's, from the flags it is given), the Alternator ports of
// the ScyllaDB container and of both Services, the sidecar's Alternator TLS flags, and the spec error reported when
// Alternator can't be served.
type alternatorOutcome struct {
	ConfigKeys     []string
	ContainerPorts []string
	ClientPorts    []string
	MemberPorts    []string
	SidecarFlags   []string
	Unservable     string
}

// alternatorOutcomeOf builds every object of sdc's first rack with automatic TLS on or off and collects what
// Alternator became in them.
func alternatorOutcomeOf(t *testing.T, sdc *scyllav1alpha1.ScyllaDBDatacenter, automaticTLS bool) alternatorOutcome {
	t.Helper()
	rack := &effectiveRacks(sdc)[0]
	var out alternatorOutcome

	configMap, err := makeManagedConfigMap(sdc, effectiveRacks(sdc), nil, automaticTLS)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	var managed map[string]any
	if err := yaml.Unmarshal([]byte(configMap.Data["scylla-"+rack.Name+".yaml"]), &managed); err != nil {
		t.Fatal(err)
	}
	for k := range managed {
		keys[k] = true
	}

	sts, err := makeStatefulSet(sdc, rack, statefulSetInputs{operatorImage: testOperatorImage, replicas: 1, automaticTLS: automaticTLS})
	if err != nil {
		t.Fatal(err)
	}
	container := scyllaContainer(sts)
	for _, p := range container.Ports {
		if strings.HasPrefix(p.Name, "alternator") {
			out.ContainerPorts = append(out.ContainerPorts, p.Name+"/"+itoa(p.ContainerPort))
		}
	}
	for _, a := range container.Command {
		if strings.HasPrefix(a, "--alternator-") {
			out.SidecarFlags = append(out.SidecarFlags, a)
		}
	}
	o := parseSidecarArgs(t, container.Command[2:])
	var sidecarTLS sidecar.TLSSettings
	if len(o.TLS.AlternatorCertificateFile) != 0 {
		sidecarTLS.Alternator = &sidecar.AlternatorTLS{CertificateFile: o.TLS.AlternatorCertificateFile, KeyFile: o.TLS.AlternatorKeyFile}
	}
	for k := range sidecar.TLSConfig(sidecarTLS) {
		keys[k] = true
	}
	out.ConfigKeys = slices.Sorted(maps.Keys(keys))

	client, err := makeClientService(sdc, automaticTLS)
	if err != nil {
		t.Fatal(err)
	}
	member, err := makeMemberService(sdc, rack, "basic-dc1-a-0", "", automaticTLS)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range client.Spec.Ports {
		if strings.HasPrefix(p.Name, "alternator") {
			out.ClientPorts = append(out.ClientPorts, p.Name+"/"+itoa(p.Port)+"->"+p.TargetPort.String())
		}
	}
	for _, p := range member.Spec.Ports {
		if strings.HasPrefix(p.Name, "alternator") {
			out.MemberPorts = append(out.MemberPorts, p.Name+"/"+itoa(p.Port)+"->"+p.TargetPort.String())
		}
	}

	if err := unservableAlternatorError(sdc, automaticTLS); err != nil {
		if !isSpecError(err) {
			t.Errorf("Alternator that can't be served is not a spec error: %v", err)
		}
		out.Unservable = err.Error()
	}
	return out
}

func itoa(i int32) string {
	return strconv.Itoa(int(i))
}

func TestAlternatorServesHTTPSWheneverACertificateExists(t *testing.T) {
	t.Parallel()

	userManaged := &scyllav1alpha1.TLSCertificate{
		Type:               scyllav1alpha1.TLSCertificateTypeUserManaged,
		UserManagedOptions: &scyllav1alpha1.UserManagedTLSCertificateOptions{SecretName: "mine"},
	}
	const (
		operatorCertFlag = "--alternator-tls-certificate-file=/var/run/secrets/scylla-operator.scylladb.com/scylladb/alternator-serving-certs/tls.crt"
		operatorKeyFlag  = "--alternator-tls-key-file=/var/run/secrets/scylla-operator.scylladb.com/scylladb/alternator-serving-certs/tls.key"
	)
	https := alternatorOutcome{
		ConfigKeys:     []string{"alternator_encryption_options", "alternator_enforce_authorization", "alternator_https_port"},
		ContainerPorts: []string{"alternator-tls/8043"},
		ClientPorts:    []string{"alternator-tls/8043->8043"},
		MemberPorts:    []string{"alternator-tls/8043->8043"},
		SidecarFlags:   []string{operatorCertFlag, operatorKeyFlag},
	}
	both := alternatorOutcome{
		ConfigKeys:     []string{"alternator_encryption_options", "alternator_enforce_authorization", "alternator_https_port", "alternator_port"},
		ContainerPorts: []string{"alternator/8000", "alternator-tls/8043"},
		ClientPorts:    []string{"alternator/8000->8000", "alternator-tls/8043->8043"},
		MemberPorts:    []string{"alternator/8000->8000", "alternator-tls/8043->8043"},
		SidecarFlags:   []string{operatorCertFlag, operatorKeyFlag},
	}
	httpOnly := alternatorOutcome{
		ConfigKeys:     []string{"alternator_enforce_authorization", "alternator_port"},
		ContainerPorts: []string{"alternator/8000"},
		ClientPorts:    []string{"alternator/8000->8000"},
		MemberPorts:    []string{"alternator/8000->8000"},
	}
	const off = `spec.scyllaDB.alternatorOptions: Alternator serves HTTPS only and its servingCertificate is OperatorManaged, ` +
		`but the operator issues no certificates: automatic TLS is off (--automatic-tls=false). Turn automatic TLS on, use a ` +
		`UserManaged certificate from a kubernetes.io/tls Secret (servingCertificate.userManagedOptions.secretName), or set ` +
		`insecureEnableHTTP (ScyllaCluster spec.alternator.insecureEnableHTTP, or annotation ` +
		`"internal.scylla-operator.scylladb.com/alternator-insecure-enable-http": "true") to serve plain HTTP. Alternator stays off until then`

	tests := []struct {
		name         string
		automaticTLS bool
		http         bool
		certificate  *scyllav1alpha1.TLSCertificate
		want         alternatorOutcome
		// wantSecret is the Secret the sidecar's Alternator certificate comes from, "" for none.
		wantSecret string
	}{
		{name: "automatic TLS, operator's certificate, no plain HTTP: HTTPS alone", automaticTLS: true,
			want: https, wantSecret: "basic-alternator-local-serving-certs"},
		{name: "automatic TLS, operator's certificate, plain HTTP: both", automaticTLS: true, http: true,
			want: both, wantSecret: "basic-alternator-local-serving-certs"},
		{name: "automatic TLS, user's certificate, no plain HTTP: HTTPS alone", automaticTLS: true, certificate: userManaged,
			want: https, wantSecret: "mine"},
		{name: "automatic TLS, user's certificate, plain HTTP: both", automaticTLS: true, http: true, certificate: userManaged,
			want: both, wantSecret: "mine"},
		{name: "no automatic TLS, operator's certificate, no plain HTTP: off, with an error saying what to do",
			want: alternatorOutcome{Unservable: off}},
		{name: "no automatic TLS, operator's certificate, plain HTTP: HTTP alone", http: true,
			want: httpOnly},
		{name: "no automatic TLS, user's certificate, no plain HTTP: HTTPS alone", certificate: userManaged,
			want: https, wantSecret: "mine"},
		{name: "no automatic TLS, user's certificate, plain HTTP: both", http: true, certificate: userManaged,
			want: both, wantSecret: "mine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sdc := newBasicSDC()
			sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{ServingCertificate: tt.certificate}
			if tt.http {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/alternator-insecure-enable-http": "true"}
			}
			if diff := cmp.Diff(tt.want, alternatorOutcomeOf(t, sdc, tt.automaticTLS), cmpEmptyIsNil); diff != "" {
				t.Errorf("Alternator differs (-want +got):\n%s", diff)
			}

			s, err := makeAlternatorSettings(sdc, tt.automaticTLS)
			if err != nil {
				t.Fatal(err)
			}
			if s.httpsSecret != tt.wantSecret {
				t.Errorf("HTTPS is served from Secret %q, want %q", s.httpsSecret, tt.wantSecret)
			}
			sts, err := makeStatefulSet(sdc, &effectiveRacks(sdc)[0], statefulSetInputs{operatorImage: testOperatorImage, replicas: 1, automaticTLS: tt.automaticTLS})
			if err != nil {
				t.Fatal(err)
			}
			var mounted []string
			for _, v := range sts.Spec.Template.Spec.Volumes {
				if v.Name == "scylladb-alternator-serving-certs" {
					mounted = append(mounted, v.Secret.SecretName)
				}
			}
			var want []string
			if len(tt.wantSecret) != 0 {
				want = []string{tt.wantSecret}
			}
			if diff := cmp.Diff(want, mounted); diff != "" {
				t.Errorf("the pods mount another Alternator certificate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAlternatorWithoutHTTPSOrHTTPIsReportedOnce(t *testing.T) {
	t.Parallel()

	const orHTTP = `or set insecureEnableHTTP (ScyllaCluster spec.alternator.insecureEnableHTTP, or annotation ` +
		`"internal.scylla-operator.scylladb.com/alternator-insecure-enable-http": "true") to serve plain HTTP. Alternator stays off until then`
	tests := []struct {
		name         string
		automaticTLS bool
		certificate  *scyllav1alpha1.TLSCertificate
		want         string
	}{
		{name: "a UserManaged certificate without a Secret, automatic TLS off",
			certificate: &scyllav1alpha1.TLSCertificate{Type: scyllav1alpha1.TLSCertificateTypeUserManaged},
			want: `spec.scyllaDB.alternatorOptions: Alternator serves HTTPS only and servingCertificate.userManagedOptions.secretName, ` +
				`required for type UserManaged, is not set. Name the kubernetes.io/tls Secret with its certificate, ` + orHTTP},
		{name: "an unknown certificate type, automatic TLS off",
			certificate: &scyllav1alpha1.TLSCertificate{Type: "Vault"},
			want: `spec.scyllaDB.alternatorOptions.servingCertificate.type "Vault" is not one of OperatorManaged, UserManaged; ` +
				`Alternator serves HTTPS only: fix the type, ` + orHTTP},
		// The certificate sub-sync reports these with automatic TLS on (TestAlternatorWithoutItsSecretNameIsReportedOnce,
		// TestCertificateSetsRejectBadAlternatorSettings).
		{name: "a UserManaged certificate without a Secret, automatic TLS on", automaticTLS: true,
			certificate: &scyllav1alpha1.TLSCertificate{Type: scyllav1alpha1.TLSCertificateTypeUserManaged}},
		{name: "an unknown certificate type, automatic TLS on", automaticTLS: true,
			certificate: &scyllav1alpha1.TLSCertificate{Type: "Vault"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sdc := newBasicSDC()
			sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{ServingCertificate: tt.certificate}
			s, err := makeAlternatorSettings(sdc, tt.automaticTLS)
			if err != nil {
				t.Fatal(err)
			}
			if s.enabled {
				t.Errorf("Alternator is on without a certificate or plain HTTP: %+v", s)
			}
			err = unservableAlternatorError(sdc, tt.automaticTLS)
			if len(tt.want) == 0 {
				if err != nil {
					t.Errorf("reported here as well: %v", err)
				}
				return
			}
			checkError(t, err, tt.want, true)
		})
	}
}

func TestAlternatorPlainPortMustNotTakeAPodPort(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name         string
		port         string
		automaticTLS bool
		wantErr      string
	}{
		{name: "the HTTPS port while HTTPS is served", port: "8043", automaticTLS: true,
			wantErr: `annotation "internal.scylla-operator.scylladb.com/alternator-port": port 8043 is the pod's "alternator-tls" port; Alternator needs another one for plain HTTP`},
		{name: "the CQL port", port: "9042",
			wantErr: `annotation "internal.scylla-operator.scylladb.com/alternator-port": port 9042 is the pod's "cql" port; Alternator needs another one for plain HTTP`},
		{name: "the agent's port", port: "10001", automaticTLS: true,
			wantErr: `annotation "internal.scylla-operator.scylladb.com/alternator-port": port 10001 is the pod's "agent-api" port; Alternator needs another one for plain HTTP`},
		{name: "the HTTPS port while no HTTPS is served is free", port: "8043"},
		{name: "a free port", port: "8080", automaticTLS: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sdc := newBasicSDC()
			sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{}
			sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/alternator-port": tt.port}
			s, err := makeAlternatorSettings(sdc, tt.automaticTLS)
			if checkError(t, err, tt.wantErr, true) {
				return
			}
			if got := itoa(s.httpPort); got != tt.port {
				t.Errorf("plain HTTP is on port %s, want %s", got, tt.port)
			}
		})
	}
}

// The operator names in the pods' ports the port the sidecar configures ScyllaDB to serve HTTPS on.
func TestAlternatorHTTPSPortIsTheSidecars(t *testing.T) {
	t.Parallel()
	if alternatorHTTPSPort != sidecar.AlternatorHTTPSPort {
		t.Errorf("the pods expose Alternator HTTPS on %d, the sidecar configures %d", alternatorHTTPSPort, sidecar.AlternatorHTTPSPort)
	}
}
