package framework

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// InstallManifestDirs are the directories, relative to the repository root, of the install manifests whose RBAC the
// suites grant the programs: the operator's and the manager-controller's.
var InstallManifestDirs = []string{"deploy/operator", "deploy/manager"}

// RemoteClusterRoleManifest is the manifest, relative to the repository root, of the ClusterRole a remote cluster
// grants the operator of the meta cluster that reaches it through a RemoteKubernetesCluster.
const RemoteClusterRoleManifest = "deploy/operator/40-remote-clusterrole.yaml"

// Subcommands of ./cmd/scylla-operator whose Deployments name the ServiceAccounts the suites run them as.
const (
	OperatorSubcommand          = "operator"
	ManagerControllerSubcommand = "manager-controller"
)

// serviceAccountTokenLifetime is how long the programs' tokens are valid: longer than any suite, since nothing
// refreshes them.
const serviceAccountTokenLifetime = 12 * time.Hour

// credentialIDKey is the user extra key under which the API server records the ID of a ServiceAccount token
// ("JTI=<jti claim>"), in the audit log among other places.
const credentialIDKey = "authentication.kubernetes.io/credential-id"

// rbacKinds are the kinds applied from the install manifests, in apply order. Namespaces come first (only those the
// other objects live in), ClusterRoles and Roles before the bindings that grant them.
var rbacKinds = []string{"Namespace", "ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding"}

// ServiceAccount names a ServiceAccount.
type ServiceAccount struct {
	Namespace, Name string
}

// Username is the user the API server authenticates the ServiceAccount's tokens as.
func (sa ServiceAccount) Username() string {
	return serviceaccount.MakeUsername(sa.Namespace, sa.Name)
}

// String returns namespace/name.
func (sa ServiceAccount) String() string {
	return sa.Namespace + "/" + sa.Name
}

// DeployedRBAC is what the install manifests grant the project's programs, read from the working tree.
type DeployedRBAC struct {
	// Objects are the Namespaces, ServiceAccounts, ClusterRoles, Roles and their bindings to apply, in order.
	Objects []*unstructured.Unstructured
	// ServiceAccounts maps a subcommand of ./cmd/scylla-operator (OperatorSubcommand, ManagerControllerSubcommand)
	// to the ServiceAccount its Deployment runs it as.
	ServiceAccounts map[string]ServiceAccount
	// RemoteClusterRole is the name of the ClusterRole of RemoteClusterRoleManifest.
	RemoteClusterRole string
}

// ServiceAccountFor returns the ServiceAccount the Deployment of subcommand runs it as.
func (r *DeployedRBAC) ServiceAccountFor(subcommand string) (ServiceAccount, error) {
	sa, ok := r.ServiceAccounts[subcommand]
	if !ok {
		return ServiceAccount{}, fmt.Errorf("no Deployment of the install manifests (%s) runs subcommand %q", strings.Join(InstallManifestDirs, ", "), subcommand)
	}
	return sa, nil
}

// RemoteServiceAccount is the ServiceAccount a remote cluster's kubeconfig authenticates as: it lives beside the
// operator's and is named after the remote ClusterRole, to which ApplyRemoteRBAC binds it.
func (r *DeployedRBAC) RemoteServiceAccount() (ServiceAccount, error) {
	operator, err := r.ServiceAccountFor(OperatorSubcommand)
	if err != nil {
		return ServiceAccount{}, err
	}
	return ServiceAccount{Namespace: operator.Namespace, Name: r.RemoteClusterRole}, nil
}

// LoadDeployedRBAC reads the install manifests of the working tree at repoRoot: the RBAC objects of every file of
// InstallManifestDirs, the ServiceAccounts the Deployments of the operator and the manager-controller run as, and the
// Namespaces these objects live in. A ServiceAccount a Deployment names but no manifest declares, or a namespaced
// object whose Namespace no manifest declares, is an error: the manifests would not install.
func LoadDeployedRBAC(repoRoot string) (*DeployedRBAC, error) {
	r := &DeployedRBAC{ServiceAccounts: map[string]ServiceAccount{}}
	byKind := map[string][]*unstructured.Unstructured{}
	for _, dir := range InstallManifestDirs {
		files, err := ManifestFiles(filepath.Join(repoRoot, filepath.FromSlash(dir)))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("no install manifests in %s", dir)
		}
		for _, file := range files {
			objs, err := DecodeManifestFile(file)
			if err != nil {
				return nil, err
			}
			for _, obj := range objs {
				if obj.GetKind() == "Deployment" {
					if err := r.addDeployment(obj, file); err != nil {
						return nil, err
					}
					continue
				}
				if slices.Contains(rbacKinds, obj.GetKind()) {
					byKind[obj.GetKind()] = append(byKind[obj.GetKind()], obj)
				}
			}
		}
	}
	for _, sub := range []string{OperatorSubcommand, ManagerControllerSubcommand} {
		if _, err := r.ServiceAccountFor(sub); err != nil {
			return nil, err
		}
	}

	remote, err := DecodeManifestFile(filepath.Join(repoRoot, filepath.FromSlash(RemoteClusterRoleManifest)))
	if err != nil {
		return nil, err
	}
	if len(remote) != 1 || remote[0].GetKind() != "ClusterRole" {
		return nil, fmt.Errorf("%s must hold exactly one ClusterRole", RemoteClusterRoleManifest)
	}
	r.RemoteClusterRole = remote[0].GetName()

	declared := map[string]bool{}
	for _, obj := range byKind["ServiceAccount"] {
		declared[obj.GetNamespace()+"/"+obj.GetName()] = true
	}
	for sub, sa := range r.ServiceAccounts {
		if !declared[sa.String()] {
			return nil, fmt.Errorf("the %s Deployment runs as ServiceAccount %s, which no install manifest declares", sub, sa)
		}
	}
	needed := map[string]bool{}
	for _, kind := range rbacKinds[1:] {
		for _, obj := range byKind[kind] {
			if obj.GetNamespace() != "" {
				needed[obj.GetNamespace()] = true
			}
		}
	}
	for _, ns := range byKind["Namespace"] {
		if needed[ns.GetName()] {
			r.Objects = append(r.Objects, ns)
			delete(needed, ns.GetName())
		}
	}
	if len(needed) != 0 {
		return nil, fmt.Errorf("the install manifests declare no Namespace %s, where their RBAC objects live", strings.Join(sortedKeys(needed), ", "))
	}
	for _, kind := range rbacKinds[1:] {
		r.Objects = append(r.Objects, byKind[kind]...)
	}
	return r, nil
}

// addDeployment records the ServiceAccount of a Deployment whose first container runs a subcommand of
// ./cmd/scylla-operator the suites run.
func (r *DeployedRBAC) addDeployment(obj *unstructured.Unstructured, file string) error {
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		return fmt.Errorf("Deployment %q of %s has no containers", obj.GetName(), file)
	}
	container, _ := containers[0].(map[string]interface{})
	args, _, _ := unstructured.NestedStringSlice(container, "args")
	if len(args) == 0 || (args[0] != OperatorSubcommand && args[0] != ManagerControllerSubcommand) {
		return nil
	}
	if _, dup := r.ServiceAccounts[args[0]]; dup {
		return fmt.Errorf("more than one Deployment of the install manifests runs %q (another one in %s)", args[0], file)
	}
	name, _, _ := unstructured.NestedString(obj.Object, "spec", "template", "spec", "serviceAccountName")
	if name == "" || obj.GetNamespace() == "" {
		return fmt.Errorf("Deployment %q of %s needs a namespace and a serviceAccountName", obj.GetName(), file)
	}
	r.ServiceAccounts[args[0]] = ServiceAccount{Namespace: obj.GetNamespace(), Name: name}
	return nil
}

// Apply server-side applies the RBAC objects of the install manifests with clients.
func (r *DeployedRBAC) Apply(ctx context.Context, clients *Clients, fieldManager string) error {
	for _, obj := range r.Objects {
		if _, err := clients.Apply(ctx, obj, fieldManager, ""); err != nil {
			return fmt.Errorf("can't apply %s %q of the install manifests: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// ApplyRemote makes a control plane a remote cluster of the meta cluster's operator: it creates
// RemoteServiceAccount and binds it to the remote ClusterRole (which Apply installed).
func (r *DeployedRBAC) ApplyRemote(ctx context.Context, clients *Clients, fieldManager string) (ServiceAccount, error) {
	sa, err := r.RemoteServiceAccount()
	if err != nil {
		return ServiceAccount{}, err
	}
	objs := []*unstructured.Unstructured{
		{Object: map[string]interface{}{
			"apiVersion": "v1", "kind": "ServiceAccount",
			"metadata": map[string]interface{}{"namespace": sa.Namespace, "name": sa.Name},
		}},
		{Object: map[string]interface{}{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
			"metadata": map[string]interface{}{"name": r.RemoteClusterRole},
			"roleRef":  map[string]interface{}{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": r.RemoteClusterRole},
			"subjects": []interface{}{map[string]interface{}{"kind": "ServiceAccount", "namespace": sa.Namespace, "name": sa.Name}},
		}},
	}
	for _, obj := range objs {
		if _, err := clients.Apply(ctx, obj, fieldManager, ""); err != nil {
			return ServiceAccount{}, fmt.Errorf("can't apply the remote cluster's %s %q: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return sa, nil
}

// ServiceAccountCredential is a kubeconfig that authenticates as a ServiceAccount with a token from the TokenRequest
// API, as a Pod's projected token does.
type ServiceAccountCredential struct {
	// ServiceAccount is who the token authenticates as.
	ServiceAccount ServiceAccount
	// Kubeconfig is the kubeconfig, token included.
	Kubeconfig *clientcmdapi.Config
	// KubeconfigPath is where WriteServiceAccountKubeconfig wrote it; empty for ServiceAccountKubeconfig.
	KubeconfigPath string
	// CredentialID is the token's jti claim. The audit log records it, so it tells apart programs that run as the
	// same ServiceAccount (see Credential).
	CredentialID string
}

// RESTConfig returns a REST config for the credential with the given user agent.
func (c *ServiceAccountCredential) RESTConfig(userAgent string) (*rest.Config, error) {
	config, err := clientcmd.NewDefaultClientConfig(*c.Kubeconfig, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("can't build a REST config for ServiceAccount %s: %w", c.ServiceAccount, err)
	}
	config.UserAgent = userAgent
	return config, nil
}

// ServiceAccountKubeconfig requests a token of sa (see serviceAccountTokenLifetime) and returns a kubeconfig for cp
// that uses it.
func (cp *ControlPlane) ServiceAccountKubeconfig(ctx context.Context, sa ServiceAccount) (*ServiceAccountCredential, error) {
	kube, err := kubernetes.NewForConfig(cp.AdminConfig("e2e-suite"))
	if err != nil {
		return nil, fmt.Errorf("can't create admin client: %w", err)
	}
	expiration := int64(serviceAccountTokenLifetime / time.Second)
	tr, err := kube.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiration},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("can't request a token of ServiceAccount %s in %s: %w", sa, cp.Name, err)
	}
	id, err := tokenID(tr.Status.Token)
	if err != nil {
		return nil, fmt.Errorf("token of ServiceAccount %s: %w", sa, err)
	}
	user := sa.Namespace + "-" + sa.Name
	config := clientcmdapi.NewConfig()
	config.Clusters[cp.Name] = &clientcmdapi.Cluster{Server: cp.adminConfig.Host, CertificateAuthorityData: cp.adminConfig.CAData}
	config.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	config.Contexts[cp.Name] = &clientcmdapi.Context{Cluster: cp.Name, AuthInfo: user}
	config.CurrentContext = cp.Name
	return &ServiceAccountCredential{ServiceAccount: sa, Kubeconfig: config, CredentialID: id}, nil
}

// WriteServiceAccountKubeconfig writes a kubeconfig with a fresh token of sa (see ServiceAccountKubeconfig) to
// <cp.Dir>/<name>.kubeconfig, readable only by its owner, for one program.
func (cp *ControlPlane) WriteServiceAccountKubeconfig(ctx context.Context, sa ServiceAccount, name string) (*ServiceAccountCredential, error) {
	cred, err := cp.ServiceAccountKubeconfig(ctx, sa)
	if err != nil {
		return nil, err
	}
	cred.KubeconfigPath = filepath.Join(cp.Dir, name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cred.Kubeconfig, cred.KubeconfigPath); err != nil {
		return nil, fmt.Errorf("can't write the kubeconfig of ServiceAccount %s: %w", sa, err)
	}
	if err := os.Chmod(cred.KubeconfigPath, 0o600); err != nil {
		return nil, fmt.Errorf("can't restrict the kubeconfig of ServiceAccount %s: %w", sa, err)
	}
	return cred, nil
}

// tokenID returns the jti claim of a JWT, without verifying it (the API server just issued it).
func tokenID(token string) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("not a JWT: %d parts", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", fmt.Errorf("can't decode the JWT payload: %w", err)
	}
	var claims struct {
		JTI string `json:"jti"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", fmt.Errorf("can't parse the JWT claims: %w", err)
	}
	if claims.JTI == "" {
		return "", errors.New("the JWT has no jti claim")
	}
	return claims.JTI, nil
}

// Credential selects the requests made with the credential's token.
func Credential(c *ServiceAccountCredential) AuditFilter {
	want := "JTI=" + c.CredentialID
	return func(e *auditv1.Event) bool {
		return e.User.Username == c.ServiceAccount.Username() && slices.Contains(e.User.Extra[credentialIDKey], want)
	}
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
