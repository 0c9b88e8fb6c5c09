package operator

import (
	"context"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"
)

// permission is one verb on one resource ("scylladbdatacenters/status") of one API group.
type permission struct {
	group, resource, verb string
}

func (p permission) String() string {
	return p.verb + " " + p.resource + "." + p.group
}

// permissionOf returns the permission an API request made through a fake clientset needs.
func permissionOf(a clienttesting.Action) permission {
	resource := a.GetResource().Resource
	if len(a.GetSubresource()) != 0 {
		resource += "/" + a.GetSubresource()
	}
	return permission{group: a.GetResource().Group, resource: resource, verb: a.GetVerb()}
}

// rulesAllow reports whether rules grant p. Only the forms our manifests use are understood: no wildcards and no
// resource names.
func rulesAllow(rules []rbacv1.PolicyRule, p permission) bool {
	for _, r := range rules {
		if len(r.ResourceNames) == 0 && slices.Contains(r.APIGroups, p.group) && slices.Contains(r.Resources, p.resource) && slices.Contains(r.Verbs, p.verb) {
			return true
		}
	}
	return false
}

// permissionsOf lists every permission rules grant.
func permissionsOf(rules []rbacv1.PolicyRule) []permission {
	var ps []permission
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					ps = append(ps, permission{group: g, resource: res, verb: v})
				}
			}
		}
	}
	return ps
}

// The manager-controller's rules hold no wildcard, which rulesAllow would not understand and least privilege forbids.
func TestManagerControllerRulesHaveNoWildcards(t *testing.T) {
	t.Parallel()
	for _, p := range permissionsOf(slices.Concat(ManagerControllerClusterRoleRules(), ManagerControllerLeaderElectionRules())) {
		if strings.Contains(p.group+p.resource+p.verb, "*") {
			t.Errorf("%v is a wildcard", p)
		}
	}
}

// Every informer the manager-controller starts lists and watches what its ClusterRole allows.
func TestManagerControllerInformersNeedOnlyItsClusterRole(t *testing.T) {
	t.Parallel()
	kubeClient := kubefake.NewClientset()
	scyllaClient := scyllafake.NewClientset()
	o := NewManagerControllerOptions()
	o.kubeClient, o.scyllaClient = kubeClient, scyllaClient

	set, err := o.newControllers()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	for _, f := range set.informerFactories {
		f.Start(ctx.Done())
	}
	defer func() {
		// Shutdown waits for the informers, which stop once ctx is done.
		cancel()
		for _, f := range set.informerFactories {
			f.Shutdown()
		}
	}()
	for _, f := range set.informerFactories {
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				t.Fatalf("the cache of %v did not sync", typ)
			}
		}
	}

	got := map[string]bool{}
	for _, a := range slices.Concat(kubeClient.Actions(), scyllaClient.Actions()) {
		p := permissionOf(a)
		if !rulesAllow(ManagerControllerClusterRoleRules(), p) {
			t.Errorf("the ClusterRole does not allow %v", p)
		}
		if p.verb == "list" {
			got[p.resource] = true
		}
		if l, ok := a.(clienttesting.ListAction); ok && p.resource == "secrets" {
			if selector := l.GetListRestrictions().Labels.String(); selector != "app.kubernetes.io/managed-by=scylla-operator" {
				t.Errorf("%v with selector %q, want only the operator's Secrets", p, selector)
			}
		}
	}
	for _, want := range []string{"scylladbdatacenters", "scylladbclusters", "scylladbmanagertasks", "secrets"} {
		if !got[want] {
			t.Errorf("the manager-controller does not cache %s", want)
		}
	}
}
