package framework

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

func TestLoadDeployedRBACReadsTheInstallManifests(t *testing.T) {
	t.Parallel()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	r, err := LoadDeployedRBAC(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ServiceAccount{
		OperatorSubcommand:          {Namespace: "scylla-operator", Name: "scylla-operator"},
		ManagerControllerSubcommand: {Namespace: "scylla-manager", Name: "scylla-manager-controller"},
	}
	if diff := cmp.Diff(want, r.ServiceAccounts); diff != "" {
		t.Errorf("ServiceAccounts differ (-want +got):\n%s", diff)
	}
	if r.RemoteClusterRole != "scylla-operator-remote" {
		t.Errorf("RemoteClusterRole is %q, want scylla-operator-remote", r.RemoteClusterRole)
	}
	// Only RBAC kinds, in apply order, and only the Namespaces they live in.
	rank := map[string]int{}
	for i, kind := range rbacKinds {
		rank[kind] = i
	}
	last := 0
	var namespaces []string
	for _, obj := range r.Objects {
		k, ok := rank[obj.GetKind()]
		if !ok {
			t.Errorf("%s %q is not an RBAC kind", obj.GetKind(), obj.GetName())
			continue
		}
		if k < last {
			t.Errorf("%s %q comes after a %s", obj.GetKind(), obj.GetName(), rbacKinds[last])
		}
		last = k
		if obj.GetKind() == "Namespace" {
			namespaces = append(namespaces, obj.GetName())
		}
	}
	if diff := cmp.Diff([]string{"scylla-operator", "scylla-manager"}, namespaces); diff != "" {
		t.Errorf("Namespaces differ (-want +got):\n%s", diff)
	}
}

// rbacFixture is a minimal set of install manifests that LoadDeployedRBAC accepts; cases break one file.
func rbacFixture() map[string]string {
	return map[string]string{
		"deploy/operator/00-namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: op\n",
		"deploy/operator/10-rbac.yaml": `apiVersion: v1
kind: ServiceAccount
metadata: {name: operator-sa, namespace: op}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: operator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: operator}
subjects: [{kind: ServiceAccount, name: operator-sa, namespace: op}]
`,
		"deploy/operator/30-deployment.yaml":          deployment("op", "operator-sa", "operator"),
		"deploy/operator/40-remote-clusterrole.yaml":  "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: remote\n",
		"deploy/manager/00-namespace.yaml":            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: mgr\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: unused\n",
		"deploy/manager/10-rbac.yaml":                 "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: mc-sa, namespace: mgr}\n",
		"deploy/manager/20-deployment.yaml":           deployment("mgr", "mc-sa", "manager-controller"),
		"deploy/manager/40-scylladb-manager.yaml":     deployment("mgr", "", "server") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: mgr}\n",
		"deploy/manager/30-scylladb-manager-sc.yaml":  "apiVersion: scylla.scylladb.com/v1\nkind: ScyllaCluster\nmetadata: {name: sc, namespace: mgr}\n",
		"deploy/operator/50-unrelated-service.yaml":   "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: elsewhere}\n",
		"deploy/operator/60-unrelated-role-docs.yaml": "# comment only\n",
	}
}

func deployment(namespace, serviceAccount, arg string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: d-` + arg + `, namespace: ` + namespace + `}
spec:
  template:
    spec:
      serviceAccountName: "` + serviceAccount + `"
      containers:
      - name: c
        args: [` + arg + `, --flag]
`
}

func writeFixture(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for path, content := range files {
		full := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestLoadDeployedRBACAppliesOnlyRBACAndTheNamespacesItNeeds(t *testing.T) {
	t.Parallel()
	r, err := LoadDeployedRBAC(writeFixture(t, rbacFixture()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, obj := range r.Objects {
		got = append(got, obj.GetKind()+" "+obj.GetNamespace()+"/"+obj.GetName())
	}
	want := []string{"Namespace /op", "Namespace /mgr", "ServiceAccount op/operator-sa", "ServiceAccount mgr/mc-sa", "ClusterRole /remote", "ClusterRoleBinding /operator"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects differ (-want +got):\n%s", diff)
	}
	wantSAs := map[string]ServiceAccount{"operator": {"op", "operator-sa"}, "manager-controller": {"mgr", "mc-sa"}}
	if diff := cmp.Diff(wantSAs, r.ServiceAccounts); diff != "" {
		t.Errorf("ServiceAccounts differ (-want +got):\n%s", diff)
	}
	remote, err := r.RemoteServiceAccount()
	if err != nil {
		t.Fatal(err)
	}
	if want := (ServiceAccount{"op", "remote"}); remote != want {
		t.Errorf("remote ServiceAccount is %v, want %v", remote, want)
	}
	if got, want := remote.Username(), "system:serviceaccount:op:remote"; got != want {
		t.Errorf("Username() = %q, want %q", got, want)
	}
}

func TestLoadDeployedRBACRejectsManifestsThatWouldNotInstall(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name    string
		change  func(files map[string]string)
		wantErr string
	}{
		{
			name:    "a Deployment's ServiceAccount is declared nowhere",
			change:  func(f map[string]string) { f["deploy/manager/10-rbac.yaml"] = "" },
			wantErr: "the manager-controller Deployment runs as ServiceAccount mgr/mc-sa, which no install manifest declares",
		},
		{
			name:    "the operator's Deployment names no ServiceAccount",
			change:  func(f map[string]string) { f["deploy/operator/30-deployment.yaml"] = deployment("op", "", "operator") },
			wantErr: `Deployment "d-operator" of ` + "%ROOT%/deploy/operator/30-deployment.yaml needs a namespace and a serviceAccountName",
		},
		{
			name:    "no Deployment runs the manager-controller",
			change:  func(f map[string]string) { delete(f, "deploy/manager/20-deployment.yaml") },
			wantErr: `no Deployment of the install manifests (deploy/operator, deploy/manager) runs subcommand "manager-controller"`,
		},
		{
			name: "two Deployments run the operator",
			change: func(f map[string]string) {
				f["deploy/operator/31-deployment.yaml"] = deployment("op", "operator-sa", "operator")
			},
			wantErr: `more than one Deployment of the install manifests runs "operator" (another one in %ROOT%/deploy/operator/31-deployment.yaml)`,
		},
		{
			name: "a Deployment without containers",
			change: func(f map[string]string) {
				f["deploy/operator/31-empty.yaml"] = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: e}\n"
			},
			wantErr: `Deployment "e" of %ROOT%/deploy/operator/31-empty.yaml has no containers`,
		},
		{
			name:    "the Namespace of a ServiceAccount is declared nowhere",
			change:  func(f map[string]string) { delete(f, "deploy/operator/00-namespace.yaml") },
			wantErr: "the install manifests declare no Namespace op, where their RBAC objects live",
		},
		{
			name:    "the remote ClusterRole is missing",
			change:  func(f map[string]string) { delete(f, "deploy/operator/40-remote-clusterrole.yaml") },
			wantErr: "can't read manifest: open %ROOT%/deploy/operator/40-remote-clusterrole.yaml: no such file or directory",
		},
		{
			name: "the remote ClusterRole's file holds something else too",
			change: func(f map[string]string) {
				f["deploy/operator/40-remote-clusterrole.yaml"] += "---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: x, namespace: op}\n"
			},
			wantErr: "deploy/operator/40-remote-clusterrole.yaml must hold exactly one ClusterRole",
		},
		{
			name: "a directory has no manifests",
			change: func(f map[string]string) {
				for path := range f {
					if strings.HasPrefix(path, "deploy/manager/") {
						delete(f, path)
					}
				}
			},
			wantErr: "no install manifests in deploy/manager",
		},
		{
			name:    "a manifest is not YAML",
			change:  func(f map[string]string) { f["deploy/manager/10-rbac.yaml"] = "kind: [" },
			wantErr: "can't decode %ROOT%/deploy/manager/10-rbac.yaml: can't decode document 0: error converting YAML to JSON: yaml: line 1: did not find expected node content",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := rbacFixture()
			tc.change(files)
			root := writeFixture(t, files)
			_, err := LoadDeployedRBAC(root)
			want := strings.ReplaceAll(tc.wantErr, "%ROOT%", root)
			if err == nil || err.Error() != want {
				t.Errorf("got error %v, want %q", err, want)
			}
		})
	}
}

func jwt(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(claims)) + ".c2ln"
}

func TestTokenID(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name, token, want, wantErr string
	}{
		{name: "a ServiceAccount token", token: jwt(`{"jti":"6d3c","sub":"system:serviceaccount:a:b"}`), want: "6d3c"},
		{name: "not a JWT", token: "opaque", wantErr: "not a JWT: 1 parts"},
		{name: "payload not base64url", token: "a.!!.c", wantErr: "can't decode the JWT payload: illegal base64 data at input byte 0"},
		{name: "payload not JSON", token: jwt(`jti`), wantErr: "can't parse the JWT claims: invalid character 'j' looking for beginning of value"},
		{name: "no jti", token: jwt(`{"sub":"x"}`), wantErr: "the JWT has no jti claim"},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tokenID(tc.token)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != tc.want || gotErr != tc.wantErr {
				t.Errorf("tokenID() = %q, %q; want %q, %q", got, gotErr, tc.want, tc.wantErr)
			}
		})
	}
}

func TestCredentialSelectsTheRequestsOfOneToken(t *testing.T) {
	t.Parallel()
	sa := ServiceAccount{Namespace: "ns", Name: "sa"}
	cred := &ServiceAccountCredential{ServiceAccount: sa, CredentialID: "one"}
	event := func(user, credentialID string) *auditv1.Event {
		e := &auditv1.Event{User: authenticationv1.UserInfo{Username: user}}
		if credentialID != "" {
			e.User.Extra = map[string]authenticationv1.ExtraValue{credentialIDKey: {credentialID}}
		}
		return e
	}
	tt := []struct {
		name  string
		event *auditv1.Event
		want  bool
	}{
		{"its token", event("system:serviceaccount:ns:sa", "JTI=one"), true},
		{"another token of the ServiceAccount", event("system:serviceaccount:ns:sa", "JTI=two"), false},
		{"the same ID for another user", event("system:serviceaccount:ns:other", "JTI=one"), false},
		{"no credential ID", event("system:serviceaccount:ns:sa", ""), false},
	}
	for _, tc := range tt {
		if got := Credential(cred)(tc.event); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSuiteProgramsMustNotRunAsAdmin(t *testing.T) {
	t.Parallel()
	cp := &ControlPlane{KubeconfigPath: "/cp/admin.kubeconfig"}
	tt := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "operator with its own kubeconfig", args: []string{"operator", "--kubeconfig=/cp/p.kubeconfig"}},
		{name: "a program that is neither", args: []string{"sidecar", "--kubeconfig=/cp/admin.kubeconfig"}},
		{name: "no arguments"},
		{
			name:    "operator with the admin kubeconfig",
			args:    []string{"operator", "--kubeconfig=/cp/admin.kubeconfig"},
			wantErr: "program p (operator) must not run with the admin kubeconfig: use its ServiceAccount's (Suite.ProgramKubeconfig)",
		},
		{
			name:    "manager-controller with the admin kubeconfig after another",
			args:    []string{"manager-controller", "--kubeconfig=/cp/p.kubeconfig", "--kubeconfig=/cp/admin.kubeconfig"},
			wantErr: "program p (manager-controller) must not run with the admin kubeconfig: use its ServiceAccount's (Suite.ProgramKubeconfig)",
		},
		{
			name:    "manager-controller without a kubeconfig",
			args:    []string{"manager-controller", "-v=2"},
			wantErr: "program p (manager-controller) needs --kubeconfig with its ServiceAccount's credentials (Suite.ProgramKubeconfig)",
		},
	}
	for _, tc := range tt {
		err := checkProgramIdentity(cp, Program{Name: "p", Args: tc.args})
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != tc.wantErr {
			t.Errorf("%s: got error %q, want %q", tc.name, gotErr, tc.wantErr)
		}
	}
}
