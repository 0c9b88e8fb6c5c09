//go:build e2e

package smoke

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

var (
	scyllaClustersResource       = schema.GroupVersionResource{Group: "scylla.scylladb.com", Version: "v1", Resource: "scyllaclusters"}
	scyllaDBDatacentersResource  = schema.GroupVersionResource{Group: "scylla.scylladb.com", Version: "v1alpha1", Resource: "scylladbdatacenters"}
	scyllaDBManagerTasksResource = schema.GroupVersionResource{Group: "scylla.scylladb.com", Version: "v1alpha1", Resource: "scylladbmanagertasks"}
)

// request is one API request made with a program's identity, and whether its role must allow it.
type request struct {
	name    string
	allowed bool
	do      func(ctx context.Context, c *framework.Clients, ns string) error
}

// dryRun makes writes that are allowed leave nothing behind; authorization is checked before the dry run.
var dryRun = []string{metav1.DryRunAll}

// TestProgramsIdentitiesHaveExactlyTheirRoles authenticates as the ServiceAccounts the suites run the operator and
// the manager-controller as (tokens from the TokenRequest API, RBAC from the install manifests), and as the identity
// a remote cluster grants the meta cluster's operator. Each is allowed requests its role grants and refused, with
// 403, requests outside it; and the audit log records every request under the token's credential ID, which is how
// suites tell apart replicas that share a ServiceAccount.
func TestProgramsIdentitiesHaveExactlyTheirRoles(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	c := f.Cluster()
	cp := c.ControlPlane
	rbac := f.Suite().RBAC
	ctx := t.Context()

	operator, err := rbac.ServiceAccountFor(framework.OperatorSubcommand)
	if err != nil {
		t.Fatal(err)
	}
	managerController, err := rbac.ServiceAccountFor(framework.ManagerControllerSubcommand)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := f.Suite().GrantRemoteAccess(ctx, cp)
	if err != nil {
		t.Fatal(err)
	}

	tt := []struct {
		identity framework.ServiceAccount
		requests []request
	}{
		{
			identity: operator,
			requests: []request{
				{"list ScyllaClusters in every namespace", true, func(ctx context.Context, c *framework.Clients, _ string) error {
					_, err := c.Dynamic.Resource(scyllaClustersResource).List(ctx, metav1.ListOptions{})
					return err
				}},
				{"get Namespace kube-system", true, func(ctx context.Context, c *framework.Clients, _ string) error {
					_, err := c.Kube.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
					return err
				}},
				{"create a ConfigMap", true, func(ctx context.Context, c *framework.Clients, ns string) error {
					_, err := c.Kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "rbac"}}, metav1.CreateOptions{DryRun: dryRun})
					return err
				}},
				{"bind the member ClusterRole", true, func(ctx context.Context, c *framework.Clients, ns string) error {
					return createRoleBinding(ctx, c, ns, naming.MemberClusterRoleName)
				}},
				{"create its Lease in its own namespace", true, func(ctx context.Context, c *framework.Clients, _ string) error {
					return createLease(ctx, c, operator.Namespace)
				}},
				{"create a Lease in another namespace", false, func(ctx context.Context, c *framework.Clients, ns string) error {
					return createLease(ctx, c, ns)
				}},
				{"get any other Namespace", false, func(ctx context.Context, c *framework.Clients, ns string) error {
					_, err := c.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
					return err
				}},
				{"delete a Namespace", false, func(ctx context.Context, c *framework.Clients, ns string) error {
					return c.Kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{DryRun: dryRun})
				}},
				// Orphaned-node detection watches Nodes and PersistentVolumes, and never changes them.
				{"list Nodes", true, func(ctx context.Context, c *framework.Clients, _ string) error {
					_, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
					return err
				}},
				{"list PersistentVolumes", true, func(ctx context.Context, c *framework.Clients, _ string) error {
					_, err := c.Kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
					return err
				}},
				{"delete a Node", false, func(ctx context.Context, c *framework.Clients, _ string) error {
					return c.Kube.CoreV1().Nodes().Delete(ctx, "rbac", metav1.DeleteOptions{DryRun: dryRun})
				}},
				{"delete a PersistentVolume", false, func(ctx context.Context, c *framework.Clients, _ string) error {
					return c.Kube.CoreV1().PersistentVolumes().Delete(ctx, "rbac", metav1.DeleteOptions{DryRun: dryRun})
				}},
				{"create a Pod", false, func(ctx context.Context, c *framework.Clients, ns string) error {
					_, err := c.Kube.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
						ObjectMeta: metav1.ObjectMeta{Name: "rbac"},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "localhost/none"}}},
					}, metav1.CreateOptions{DryRun: dryRun})
					return err
				}},
				{"bind cluster-admin", false, func(ctx context.Context, c *framework.Clients, ns string) error {
					return createRoleBinding(ctx, c, ns, "cluster-admin")
				}},
				{"create a ClusterRole", false, func(ctx context.Context, c *framework.Clients, _ string) error {
					_, err := c.Kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-rbac"}}, metav1.CreateOptions{DryRun: dryRun})
					return err
				}},
			},
		},
		{
			identity: managerController,
			requests: []request{
				{"list ScyllaDBDatacenters in every namespace", true, func(ctx context.Context, c *framework.Clients, _ string) error {
					_, err := c.Dynamic.Resource(scyllaDBDatacentersResource).List(ctx, metav1.ListOptions{})
					return err
				}},
				{"get a Secret", true, func(ctx context.Context, c *framework.Clients, ns string) error {
					return ignoreNotFound(c.Kube.CoreV1().Secrets(ns).Get(ctx, "absent", metav1.GetOptions{}))
				}},
				{"create its Lease in its own namespace", true, func(ctx context.Context, c *framework.Clients, _ string) error {
					return createLease(ctx, c, managerController.Namespace)
				}},
				{"create a Lease in another namespace", false, func(ctx context.Context, c *framework.Clients, ns string) error {
					return createLease(ctx, c, ns)
				}},
				{"get a ScyllaDBDatacenter (it reads from its cache)", false, func(ctx context.Context, c *framework.Clients, ns string) error {
					return ignoreNotFound(c.Dynamic.Resource(scyllaDBDatacentersResource).Namespace(ns).Get(ctx, "absent", metav1.GetOptions{}))
				}},
				{"list ScyllaClusters", false, func(ctx context.Context, c *framework.Clients, _ string) error {
					_, err := c.Dynamic.Resource(scyllaClustersResource).List(ctx, metav1.ListOptions{})
					return err
				}},
				{"delete ScyllaDBManagerTasks", false, func(ctx context.Context, c *framework.Clients, ns string) error {
					return c.Dynamic.Resource(scyllaDBManagerTasksResource).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{DryRun: dryRun}, metav1.ListOptions{})
				}},
				{"create a Secret", false, func(ctx context.Context, c *framework.Clients, ns string) error {
					_, err := c.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rbac"}}, metav1.CreateOptions{DryRun: dryRun})
					return err
				}},
				{"list Pods", false, func(ctx context.Context, c *framework.Clients, _ string) error {
					_, err := c.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
					return err
				}},
			},
		},
		{
			identity: remote,
			requests: []request{
				{"create a Namespace", true, func(ctx context.Context, c *framework.Clients, _ string) error {
					_, err := c.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-rbac"}}, metav1.CreateOptions{DryRun: dryRun})
					return err
				}},
				{"patch a ScyllaDBDatacenter", true, func(ctx context.Context, c *framework.Clients, ns string) error {
					return ignoreNotFound(c.Dynamic.Resource(scyllaDBDatacentersResource).Namespace(ns).Patch(ctx, "absent", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{DryRun: dryRun}))
				}},
				{"list ScyllaClusters", false, func(ctx context.Context, c *framework.Clients, _ string) error {
					_, err := c.Dynamic.Resource(scyllaClustersResource).List(ctx, metav1.ListOptions{})
					return err
				}},
				{"list StatefulSets", false, func(ctx context.Context, c *framework.Clients, _ string) error {
					_, err := c.Kube.AppsV1().StatefulSets("").List(ctx, metav1.ListOptions{})
					return err
				}},
				{"list Nodes", false, func(ctx context.Context, c *framework.Clients, _ string) error {
					_, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
					return err
				}},
				{"create a RoleBinding", false, func(ctx context.Context, c *framework.Clients, ns string) error {
					return createRoleBinding(ctx, c, ns, naming.MemberClusterRoleName)
				}},
			},
		},
	}
	audit := cp.Audit
	mark, err := audit.Mark()
	if err != nil {
		t.Fatal(err)
	}
	type sent struct {
		credential *framework.ServiceAccountCredential
		requests   int
	}
	var all []sent
	for _, tc := range tt {
		cred, err := cp.ServiceAccountKubeconfig(ctx, tc.identity)
		if err != nil {
			t.Fatal(err)
		}
		config, err := cred.RESTConfig("e2e-rbac/" + tc.identity.Name)
		if err != nil {
			t.Fatal(err)
		}
		clients, err := framework.NewClients(config)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, sent{credential: cred, requests: len(tc.requests)})
		for _, req := range tc.requests {
			t.Run(fmt.Sprintf("%s/%s", tc.identity, req.name), func(t *testing.T) {
				err := req.do(ctx, clients, c.Namespace)
				switch {
				case req.allowed && err != nil:
					t.Errorf("%s can't %s, which its role grants: %v", tc.identity, req.name, err)
				case !req.allowed && !apierrors.IsForbidden(err):
					t.Errorf("%s may %s, which its role does not grant: want a 403, got %v", tc.identity, req.name, err)
				}
			})
		}
	}

	// Each credential's requests are in the audit log under its own ID, and no other credential's.
	f.WaitFor(waitTimeout, "the audit log to show every request by its credential", func(context.Context) (bool, error) {
		events, err := audit.EventsSince(mark)
		if err != nil {
			return false, err
		}
		for _, s := range all {
			got := framework.CountRequests(events, framework.Credential(s.credential), notDiscovery, notRetried).Total()
			if got != s.requests {
				return false, fmt.Errorf("%d requests with the token of %s in the audit log, want %d", got, s.credential.ServiceAccount, s.requests)
			}
		}
		return true, nil
	})
}

// notDiscovery leaves out the discovery requests the dynamic client's REST mapper makes.
func notDiscovery(e *auditv1.Event) bool {
	return e.ObjectRef != nil
}

// notRetried leaves out the 429s the API server answers while it starts serving a new CRD, which clients retry.
func notRetried(e *auditv1.Event) bool {
	return e.ResponseStatus == nil || e.ResponseStatus.Code != http.StatusTooManyRequests
}

func ignoreNotFound[T any](_ T, err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// createRoleBinding binds clusterRole to the namespace's default ServiceAccount (a dry run).
func createRoleBinding(ctx context.Context, c *framework.Clients, ns, clusterRole string) error {
	_, err := c.Kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-rbac"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "default"}},
	}, metav1.CreateOptions{DryRun: dryRun})
	return err
}

// createLease creates a Lease in ns (a dry run).
func createLease(ctx context.Context, c *framework.Clients, ns string) error {
	_, err := c.Kube.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "e2e-rbac"}}, metav1.CreateOptions{DryRun: dryRun})
	return err
}
