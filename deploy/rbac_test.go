package deploy

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	scyllav1 "github.com/scyllakube/api/scylla/v1"

	"github.com/scyllakube/scylla-operator/pkg/crdvalidation"
	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// installedObjects decodes strictly every document of deploy/operator/ and deploy/manager/ but the
// scylla.scylladb.com objects (manager_test.go validates those against the CRDs).
func installedObjects(t *testing.T) []runtime.Object {
	t.Helper()
	var objs []runtime.Object
	for _, pattern := range []string{"operator/*.yaml", "manager/*.yaml"} {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			t.Fatalf("no manifests match %s: %v", pattern, err)
		}
		for _, f := range files {
			docs, err := crdvalidation.SplitDocuments(readFile(t, f))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			for i, doc := range docs {
				var meta struct {
					APIVersion string `json:"apiVersion"`
				}
				if err := yaml.Unmarshal(doc, &meta); err != nil {
					t.Fatalf("%s document %d: %v", f, i, err)
				}
				if strings.HasPrefix(meta.APIVersion, scyllav1.GroupName+"/") {
					continue
				}
				obj, _, err := strictDecoder.Decode(doc, nil, nil)
				if err != nil {
					t.Fatalf("%s document %d: %v", f, i, err)
				}
				objs = append(objs, obj)
			}
		}
	}
	return objs
}

// objectsOf returns the objects of type T among objs.
func objectsOf[T runtime.Object](objs []runtime.Object) []T {
	var out []T
	for _, obj := range objs {
		if o, ok := obj.(T); ok {
			out = append(out, o)
		}
	}
	return out
}

// role is what the checks read of a Role or a ClusterRole.
type role struct {
	kind, namespace, name string
	rules                 []rbacv1.PolicyRule
}

func (r role) String() string {
	if len(r.namespace) == 0 {
		return fmt.Sprintf("%s %s", r.kind, r.name)
	}
	return fmt.Sprintf("%s %s/%s", r.kind, r.namespace, r.name)
}

func installedRoles(objs []runtime.Object) []role {
	var roles []role
	for _, cr := range objectsOf[*rbacv1.ClusterRole](objs) {
		roles = append(roles, role{kind: "ClusterRole", name: cr.Name, rules: cr.Rules})
	}
	for _, r := range objectsOf[*rbacv1.Role](objs) {
		roles = append(roles, role{kind: "Role", namespace: r.Namespace, name: r.Name, rules: r.Rules})
	}
	return roles
}

// wildcardErrors returns an error for every rule of r that grants a wildcard verb, API group, resource (also
// "<resource>/*"), resource name or non-resource URL.
func wildcardErrors(r role) []error {
	var errs []error
	for i, rule := range r.rules {
		for field, values := range map[string][]string{
			"verbs":           rule.Verbs,
			"apiGroups":       rule.APIGroups,
			"resources":       rule.Resources,
			"resourceNames":   rule.ResourceNames,
			"nonResourceURLs": rule.NonResourceURLs,
		} {
			for _, v := range values {
				if strings.Contains(v, "*") {
					errs = append(errs, fmt.Errorf("%s rule %d grants the wildcard %q in %s", r, i, v, field))
				}
			}
		}
	}
	return errs
}

// secretVerbs returns the verbs the rules of r grant on Secrets, sorted, "<verb>(<names>)" where resourceNames limit
// them.
func secretVerbs(r role) []string {
	var verbs []string
	for _, rule := range r.rules {
		if !slices.Contains(rule.APIGroups, "") || !slices.Contains(rule.Resources, "secrets") {
			continue
		}
		for _, v := range rule.Verbs {
			if len(rule.ResourceNames) != 0 {
				v = fmt.Sprintf("%s(%s)", v, strings.Join(rule.ResourceNames, ","))
			}
			verbs = append(verbs, v)
		}
	}
	slices.Sort(verbs)
	return verbs
}

// clusterRoleSecretAccess is every ClusterRole allowed to reach Secrets in every namespace, with why and exactly the
// verbs it may have. A ClusterRole not listed here must not mention Secrets; a namespaced need goes into a Role.
var clusterRoleSecretAccess = map[string]struct {
	why   string
	verbs []string
}{
	"scylla-operator": {
		why: "The operator creates and updates the agent auth-token and configuration Secrets of every datacenter in " +
			"the datacenter's namespace, copies the Secrets users reference, and reads the kubeconfig Secrets of " +
			"RemoteKubernetesClusters and the credentials Secrets of backup buckets, which live in users' namespaces.",
		verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"},
	},
	"scylla-operator-remote": {
		why: "Bound in a remote cluster to the identity a RemoteKubernetesCluster uses: the operator copies a " +
			"datacenter's agent auth token and referenced Secrets into the remote datacenter's namespace.",
		verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"},
	},
	naming.ManagerControllerProgramName: {
		why: "The manager-controller caches the agent auth-token Secrets of every datacenter to register it with " +
			"ScyllaDB Manager, and reads the credentials Secrets backup buckets name.",
		verbs: []string{"get", "list", "watch"},
	},
}

// secretAccessErrors returns an error for each Secrets grant of a ClusterRole that clusterRoleSecretAccess does not
// justify, and for each justification no ClusterRole uses any more.
func secretAccessErrors(roles []role) []error {
	var errs []error
	seen := map[string]bool{}
	for _, r := range roles {
		if r.kind != "ClusterRole" {
			continue
		}
		got := secretVerbs(r)
		justified, ok := clusterRoleSecretAccess[r.name]
		switch {
		case len(got) == 0:
			continue
		case !ok:
			errs = append(errs, fmt.Errorf("%s grants %q on Secrets in every namespace without a justification; grant it in a Role of the namespace that needs it, or justify it in clusterRoleSecretAccess", r, got))
		case !slices.Equal(got, justified.verbs):
			errs = append(errs, fmt.Errorf("%s grants %q on Secrets, but clusterRoleSecretAccess justifies %q", r, got, justified.verbs))
		}
		seen[r.name] = true
	}
	for name := range clusterRoleSecretAccess {
		if !seen[name] {
			errs = append(errs, fmt.Errorf("clusterRoleSecretAccess justifies ClusterRole %s, which grants nothing on Secrets (or is gone): remove it", name))
		}
	}
	return errs
}

func TestInstalledRolesGrantNoWildcards(t *testing.T) {
	t.Parallel()
	roles := installedRoles(installedObjects(t))
	if len(roles) == 0 {
		t.Fatal("deploy/ has no Roles or ClusterRoles")
	}
	for _, r := range roles {
		for _, err := range wildcardErrors(r) {
			t.Error(err)
		}
	}
}

func TestInstalledClusterRolesReachSecretsOnlyWithAJustification(t *testing.T) {
	t.Parallel()
	for _, err := range secretAccessErrors(installedRoles(installedObjects(t))) {
		t.Error(err)
	}
}

// The checks above fail on what they are meant to catch.
func TestRoleChecksRefuse(t *testing.T) {
	t.Parallel()
	operatorRules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}}}
	remoteRules := operatorRules
	managerControllerRules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}}}
	justified := []role{
		{kind: "ClusterRole", name: "scylla-operator", rules: operatorRules},
		{kind: "ClusterRole", name: "scylla-operator-remote", rules: remoteRules},
		{kind: "ClusterRole", name: naming.ManagerControllerProgramName, rules: managerControllerRules},
	}
	for _, tc := range []struct {
		name          string
		roles         []role
		wantWildcards []string
		wantSecrets   []string
	}{
		{
			name:  "justified roles pass",
			roles: justified,
		},
		{
			name: "wildcards in every field",
			roles: append(slices.Clone(justified), role{kind: "Role", namespace: "ns", name: "r", rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"*"}, Resources: []string{"pods/*"}, Verbs: []string{"*"}, ResourceNames: []string{"*"}},
				{NonResourceURLs: []string{"/metrics*"}, Verbs: []string{"get"}},
			}}),
			wantWildcards: []string{
				`Role ns/r rule 0 grants the wildcard "*" in apiGroups`,
				`Role ns/r rule 0 grants the wildcard "*" in resourceNames`,
				`Role ns/r rule 0 grants the wildcard "*" in verbs`,
				`Role ns/r rule 0 grants the wildcard "pods/*" in resources`,
				`Role ns/r rule 1 grants the wildcard "/metrics*" in nonResourceURLs`,
			},
		},
		{
			name: "an unlisted ClusterRole reading Secrets",
			roles: append(slices.Clone(justified), role{kind: "ClusterRole", name: "reader", rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"get"}},
			}}),
			wantSecrets: []string{`ClusterRole reader grants ["get"] on Secrets in every namespace without a justification; grant it in a Role of the namespace that needs it, or justify it in clusterRoleSecretAccess`},
		},
		{
			name: "a Role reading Secrets of its namespace needs no justification",
			roles: append(slices.Clone(justified), role{kind: "Role", namespace: "ns", name: "reader", rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
			}}),
		},
		{
			name: "a justified ClusterRole granting more than justified",
			roles: []role{
				{kind: "ClusterRole", name: "scylla-operator", rules: operatorRules},
				{kind: "ClusterRole", name: "scylla-operator-remote", rules: remoteRules},
				{kind: "ClusterRole", name: naming.ManagerControllerProgramName, rules: append(slices.Clone(managerControllerRules), rbacv1.PolicyRule{
					APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"s"}, Verbs: []string{"update"},
				})},
			},
			wantSecrets: []string{`ClusterRole scylla-manager-controller grants ["get" "list" "update(s)" "watch"] on Secrets, but clusterRoleSecretAccess justifies ["get" "list" "watch"]`},
		},
		{
			name:        "a stale justification",
			roles:       justified[:2],
			wantSecrets: []string{"clusterRoleSecretAccess justifies ClusterRole scylla-manager-controller, which grants nothing on Secrets (or is gone): remove it"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var gotWildcards []string
			for _, r := range tc.roles {
				for _, err := range wildcardErrors(r) {
					gotWildcards = append(gotWildcards, err.Error())
				}
			}
			slices.Sort(gotWildcards)
			if diff := cmp.Diff(tc.wantWildcards, gotWildcards); diff != "" {
				t.Errorf("wildcard errors differ (-want +got):\n%s", diff)
			}
			var gotSecrets []string
			for _, err := range secretAccessErrors(tc.roles) {
				gotSecrets = append(gotSecrets, err.Error())
			}
			if diff := cmp.Diff(tc.wantSecrets, gotSecrets); diff != "" {
				t.Errorf("secret access errors differ (-want +got):\n%s", diff)
			}
		})
	}
}

// The sidecar's ClusterRole is granted only through RoleBindings (the operator creates one per datacenter in its
// namespace), never cluster-wide, and gives no access to Secrets.
func TestMemberClusterRoleIsNeverBoundClusterWide(t *testing.T) {
	t.Parallel()
	objs := installedObjects(t)
	for _, crb := range objectsOf[*rbacv1.ClusterRoleBinding](objs) {
		if crb.RoleRef.Name == naming.MemberClusterRoleName {
			t.Errorf("ClusterRoleBinding %s grants %s in every namespace", crb.Name, naming.MemberClusterRoleName)
		}
	}
	for _, r := range installedRoles(objs) {
		if r.name == naming.MemberClusterRoleName {
			if verbs := secretVerbs(r); len(verbs) != 0 {
				t.Errorf("%s grants %q on Secrets", r, verbs)
			}
			return
		}
	}
	t.Errorf("deploy/ has no ClusterRole %s", naming.MemberClusterRoleName)
}
