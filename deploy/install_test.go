package deploy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	scyllav1 "github.com/scyllakube/api/scylla/v1"

	cmdoperator "github.com/scyllakube/scylla-operator/pkg/cmd/operator"
	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// podSpecErrors returns what makes a Deployment's pods less than restricted: every container runs as non-root with
// a read-only root filesystem, no privilege escalation, no capabilities and the runtime's default seccomp profile,
// with CPU and memory requests and a memory limit, and a readiness probe.
func podSpecErrors(d *appsv1.Deployment) []error {
	var errs []error
	pod := d.Spec.Template.Spec
	podSC := pod.SecurityContext
	if podSC == nil || !ptr.Deref(podSC.RunAsNonRoot, false) {
		errs = append(errs, fmt.Errorf("Deployment %s: the pod does not set runAsNonRoot", d.Name))
	}
	if podSC == nil || podSC.RunAsUser == nil || *podSC.RunAsUser == 0 {
		errs = append(errs, fmt.Errorf("Deployment %s: the pod sets no non-zero runAsUser, so runAsNonRoot depends on the image", d.Name))
	}
	if podSC == nil || podSC.SeccompProfile == nil || podSC.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		errs = append(errs, fmt.Errorf("Deployment %s: the pod's seccomp profile is not RuntimeDefault", d.Name))
	}
	for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
		sc := c.SecurityContext
		if sc == nil {
			errs = append(errs, fmt.Errorf("Deployment %s container %s has no security context", d.Name, c.Name))
			continue
		}
		if !ptr.Deref(sc.RunAsNonRoot, false) {
			errs = append(errs, fmt.Errorf("Deployment %s container %s does not set runAsNonRoot", d.Name, c.Name))
		}
		if !ptr.Deref(sc.ReadOnlyRootFilesystem, false) {
			errs = append(errs, fmt.Errorf("Deployment %s container %s has a writable root filesystem", d.Name, c.Name))
		}
		if ptr.Deref(sc.AllowPrivilegeEscalation, true) {
			errs = append(errs, fmt.Errorf("Deployment %s container %s allows privilege escalation", d.Name, c.Name))
		}
		if ptr.Deref(sc.Privileged, false) {
			errs = append(errs, fmt.Errorf("Deployment %s container %s is privileged", d.Name, c.Name))
		}
		if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
			errs = append(errs, fmt.Errorf("Deployment %s container %s does not drop exactly ALL capabilities and add none", d.Name, c.Name))
		}
		if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			errs = append(errs, fmt.Errorf("Deployment %s container %s: the seccomp profile is not RuntimeDefault", d.Name, c.Name))
		}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := c.Resources.Requests[name]; !ok || q.IsZero() {
				errs = append(errs, fmt.Errorf("Deployment %s container %s requests no %s", d.Name, c.Name, name))
			}
		}
		if q, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || q.Cmp(c.Resources.Requests[corev1.ResourceMemory]) < 0 {
			errs = append(errs, fmt.Errorf("Deployment %s container %s has no memory limit at least its request", d.Name, c.Name))
		}
		if c.ReadinessProbe == nil {
			errs = append(errs, fmt.Errorf("Deployment %s container %s has no readiness probe", d.Name, c.Name))
		}
	}
	return errs
}

func TestInstalledPodsAreRestricted(t *testing.T) {
	t.Parallel()
	deployments := objectsOf[*appsv1.Deployment](installedObjects(t))
	if len(deployments) == 0 {
		t.Fatal("deploy/ has no Deployments")
	}
	for _, d := range deployments {
		for _, err := range podSpecErrors(d) {
			t.Error(err)
		}
	}
}

func TestPodSpecChecksRefuse(t *testing.T) {
	t.Parallel()
	restricted := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To[int64](65532),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name: "c",
				SecurityContext: &corev1.SecurityContext{
					RunAsNonRoot:             ptr.To(true),
					ReadOnlyRootFilesystem:   ptr.To(true),
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
				},
				ReadinessProbe: &corev1.Probe{},
			}},
		}}},
	}
	for _, tc := range []struct {
		name   string
		change func(pod *corev1.PodSpec)
		want   []string
	}{
		{name: "restricted", change: func(*corev1.PodSpec) {}},
		{
			name: "root pod",
			change: func(pod *corev1.PodSpec) {
				pod.SecurityContext = &corev1.PodSecurityContext{}
			},
			want: []string{
				"Deployment d: the pod does not set runAsNonRoot",
				"Deployment d: the pod sets no non-zero runAsUser, so runAsNonRoot depends on the image",
				"Deployment d: the pod's seccomp profile is not RuntimeDefault",
			},
		},
		{
			name: "loose container",
			change: func(pod *corev1.PodSpec) {
				c := &pod.Containers[0]
				c.SecurityContext = &corev1.SecurityContext{
					Privileged:   ptr.To(true),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_ADMIN"}},
				}
				c.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}, Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")}}
				c.ReadinessProbe = nil
			},
			want: []string{
				"Deployment d container c does not set runAsNonRoot",
				"Deployment d container c has a writable root filesystem",
				"Deployment d container c allows privilege escalation",
				"Deployment d container c is privileged",
				"Deployment d container c does not drop exactly ALL capabilities and add none",
				"Deployment d container c: the seccomp profile is not RuntimeDefault",
				"Deployment d container c requests no cpu",
				"Deployment d container c has no memory limit at least its request",
				"Deployment d container c has no readiness probe",
			},
		},
		{
			name: "init container without a security context",
			change: func(pod *corev1.PodSpec) {
				pod.InitContainers = []corev1.Container{{Name: "init"}}
			},
			want: []string{"Deployment d container init has no security context"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := restricted.DeepCopy()
			tc.change(&d.Spec.Template.Spec)
			var got []string
			for _, err := range podSpecErrors(d) {
				got = append(got, err.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors differ (-want +got):\n%s", diff)
			}
		})
	}
}

// installedObject returns the object of type T named namespace/name among objs.
func installedObject[T interface {
	runtime.Object
	GetNamespace() string
	GetName() string
}](t *testing.T, objs []runtime.Object, namespace, name string) T {
	t.Helper()
	for _, o := range objectsOf[T](objs) {
		if o.GetNamespace() == namespace && o.GetName() == name {
			return o
		}
	}
	var zero T
	t.Fatalf("deploy/ has no %T %s/%s", zero, namespace, name)
	return zero
}

// Every Deployment runs as a ServiceAccount of the manifests, every binding grants a role of the manifests to
// ServiceAccounts of the manifests, and every Deployment with several replicas has a PodDisruptionBudget keeping one.
func TestInstalledProgramsAreBoundAndBudgeted(t *testing.T) {
	t.Parallel()
	objs := installedObjects(t)
	serviceAccounts := map[string]bool{}
	for _, sa := range objectsOf[*corev1.ServiceAccount](objs) {
		serviceAccounts[sa.Namespace+"/"+sa.Name] = true
	}
	roles := map[string]bool{}
	for _, r := range installedRoles(objs) {
		roles[r.kind+"/"+r.namespace+"/"+r.name] = true
	}
	bound := map[string]bool{}
	checkBinding := func(kind, namespace, name string, ref rbacv1.RoleRef, subjects []rbacv1.Subject) {
		refNamespace := namespace
		if ref.Kind == "ClusterRole" {
			refNamespace = ""
		}
		if ref.APIGroup != rbacv1.GroupName || !roles[ref.Kind+"/"+refNamespace+"/"+ref.Name] {
			t.Errorf("%s %s/%s refers to %s %s, which deploy/ does not define", kind, namespace, name, ref.Kind, ref.Name)
		}
		if len(subjects) == 0 {
			t.Errorf("%s %s/%s has no subjects", kind, namespace, name)
		}
		for _, s := range subjects {
			if s.Kind != rbacv1.ServiceAccountKind || !serviceAccounts[s.Namespace+"/"+s.Name] {
				t.Errorf("%s %s/%s grants to %s %s/%s, not a ServiceAccount of deploy/", kind, namespace, name, s.Kind, s.Namespace, s.Name)
			}
			bound[s.Namespace+"/"+s.Name] = true
		}
	}
	for _, b := range objectsOf[*rbacv1.ClusterRoleBinding](objs) {
		checkBinding("ClusterRoleBinding", "", b.Name, b.RoleRef, b.Subjects)
	}
	for _, b := range objectsOf[*rbacv1.RoleBinding](objs) {
		checkBinding("RoleBinding", b.Namespace, b.Name, b.RoleRef, b.Subjects)
	}

	pdbs := objectsOf[*policyv1.PodDisruptionBudget](objs)
	for _, d := range objectsOf[*appsv1.Deployment](objs) {
		pod := d.Spec.Template.Spec
		sa := d.Namespace + "/" + pod.ServiceAccountName
		switch {
		case len(pod.ServiceAccountName) == 0 && !ptr.Deref(pod.AutomountServiceAccountToken, true):
			// Needs no API access at all.
		case !serviceAccounts[sa]:
			t.Errorf("Deployment %s/%s runs as ServiceAccount %s, which deploy/ does not define", d.Namespace, d.Name, sa)
		case !bound[sa]:
			t.Errorf("Deployment %s/%s runs as ServiceAccount %s, which no binding grants anything", d.Namespace, d.Name, sa)
		}

		if ptr.Deref(d.Spec.Replicas, 1) < 2 {
			continue
		}
		i := slices.IndexFunc(pdbs, func(pdb *policyv1.PodDisruptionBudget) bool {
			return pdb.Namespace == d.Namespace && pdb.Spec.Selector != nil && cmp.Equal(pdb.Spec.Selector.MatchLabels, d.Spec.Selector.MatchLabels)
		})
		if i < 0 {
			t.Errorf("Deployment %s/%s has %d replicas and no PodDisruptionBudget selecting its pods", d.Namespace, d.Name, *d.Spec.Replicas)
			continue
		}
		if diff := cmp.Diff(ptr.To(intstr.FromInt32(1)), pdbs[i].Spec.MinAvailable); diff != "" {
			t.Errorf("PodDisruptionBudget %s/%s minAvailable differs (-want +got):\n%s", pdbs[i].Namespace, pdbs[i].Name, diff)
		}
	}
}

// The webhook's Deployment, Service, webhook configurations and RBAC fit together: the ValidatingWebhookConfiguration
// covers every kind the CRDs define, the MutatingWebhookConfiguration the creates the webhook defaults, and the
// webhook keeps both caBundles with exactly the permissions that takes.
func TestWebhookIsReachableAndCoversEveryKind(t *testing.T) {
	t.Parallel()
	objs := installedObjects(t)
	operator := installedObject[*appsv1.Deployment](t, objs, "scylla-operator", naming.OperatorProgramName)
	ns := operator.Namespace

	webhook := installedObject[*appsv1.Deployment](t, objs, ns, naming.WebhookServiceName)
	if got := ptr.Deref(webhook.Spec.Replicas, 1); got != 2 {
		t.Errorf("the webhook runs %d replicas, want 2", got)
	}
	c := webhook.Spec.Template.Spec.Containers[0]
	port := strconv.Itoa(naming.WebhookSecurePort)
	wantArgs := []string{naming.WebhookProgramName, "--secure-port=" + port, "--namespace=$(POD_NAMESPACE)",
		"--mutating-webhook-configuration-name=" + naming.WebhookConfigurationName}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("webhook args differ (-want +got):\n%s", diff)
	}
	if got := expandEnv("$(POD_NAMESPACE)", c.Env, "<pod namespace>"); got != "<pod namespace>" {
		t.Errorf("the webhook's POD_NAMESPACE is %q, want the pod's namespace from the downward API", got)
	}
	for _, probe := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"readiness", c.ReadinessProbe, "/readyz"}, {"liveness", c.LivenessProbe, "/healthz"}} {
		want := &corev1.HTTPGetAction{Scheme: corev1.URISchemeHTTPS, Path: probe.path, Port: intstr.FromInt32(naming.WebhookSecurePort)}
		if probe.probe == nil || probe.probe.HTTPGet == nil {
			t.Errorf("the webhook has no %s probe", probe.name)
		} else if diff := cmp.Diff(want, probe.probe.HTTPGet); diff != "" {
			t.Errorf("the webhook's %s probe differs (-want +got):\n%s", probe.name, diff)
		}
	}

	svc := installedObject[*corev1.Service](t, objs, ns, naming.WebhookServiceName)
	if diff := cmp.Diff(webhook.Spec.Selector.MatchLabels, svc.Spec.Selector); diff != "" {
		t.Errorf("Service %s does not select the webhook's pods (-pods +selector):\n%s", svc.Name, diff)
	}
	if diff := cmp.Diff([]corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(naming.WebhookSecurePort)}}, svc.Spec.Ports); diff != "" {
		t.Errorf("Service %s ports differ (-want +got):\n%s", svc.Name, diff)
	}

	// Every kind of the CRDs, at every version served.
	var wantRules []admissionregistrationv1.RuleWithOperations
	for _, crd := range objectsOf[*apiextensionsv1.CustomResourceDefinition](objs) {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			i := slices.IndexFunc(wantRules, func(r admissionregistrationv1.RuleWithOperations) bool { return r.APIVersions[0] == v.Name })
			if i < 0 {
				wantRules = append(wantRules, admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{crd.Spec.Group}, APIVersions: []string{v.Name}},
				})
				i = len(wantRules) - 1
			}
			wantRules[i].Resources = append(wantRules[i].Resources, crd.Spec.Names.Plural)
		}
	}
	if len(wantRules) == 0 {
		t.Fatal("deploy/operator has no CustomResourceDefinitions")
	}
	vwc := installedObject[*admissionregistrationv1.ValidatingWebhookConfiguration](t, objs, "", naming.WebhookConfigurationName)
	if len(vwc.Webhooks) != 1 {
		t.Fatalf("ValidatingWebhookConfiguration %s has %d webhooks, want 1", vwc.Name, len(vwc.Webhooks))
	}
	w := vwc.Webhooks[0]
	want := admissionregistrationv1.ValidatingWebhook{
		Name: naming.WebhookValidatingName,
		ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: ns, Name: svc.Name, Path: ptr.To(naming.WebhookValidatePath), Port: ptr.To[int32](443),
		}},
		Rules:                   w.Rules,
		FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		TimeoutSeconds:          ptr.To[int32](10),
		AdmissionReviewVersions: []string{"v1"},
	}
	if diff := cmp.Diff(want, w); diff != "" {
		t.Errorf("webhook %s differs (-want +got):\n%s", w.Name, diff)
	}
	sortRules := func(rules []admissionregistrationv1.RuleWithOperations) []admissionregistrationv1.RuleWithOperations {
		rules = slices.Clone(rules)
		for i := range rules {
			rules[i].Resources = slices.Sorted(slices.Values(rules[i].Resources))
		}
		slices.SortFunc(rules, func(a, b admissionregistrationv1.RuleWithOperations) int {
			return strings.Compare(a.APIVersions[0], b.APIVersions[0])
		})
		return rules
	}
	if diff := cmp.Diff(sortRules(wantRules), sortRules(w.Rules)); diff != "" {
		t.Errorf("webhook %s does not validate exactly the kinds of the CRDs on create and update (-want +got):\n%s", w.Name, diff)
	}

	// The defaulting of enableParallelNodeOperations: on create only, of the two kinds that have the field, through
	// the same Service, failing closed like validation (an object created without it would keep serial node
	// operations for good), and called once.
	mwc := installedObject[*admissionregistrationv1.MutatingWebhookConfiguration](t, objs, "", naming.WebhookConfigurationName)
	if len(mwc.Webhooks) != 1 {
		t.Fatalf("MutatingWebhookConfiguration %s has %d webhooks, want 1", mwc.Name, len(mwc.Webhooks))
	}
	wantMutating := admissionregistrationv1.MutatingWebhook{
		Name: naming.WebhookMutatingName,
		ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: ns, Name: svc.Name, Path: ptr.To(naming.WebhookMutatePath), Port: ptr.To[int32](443),
		}},
		Rules: []admissionregistrationv1.RuleWithOperations{
			{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{scyllav1.GroupName}, APIVersions: []string{"v1"}, Resources: []string{"scyllaclusters"}},
			},
			{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{scyllav1.GroupName}, APIVersions: []string{"v1alpha1"}, Resources: []string{"scylladbdatacenters"}},
			},
		},
		FailurePolicy:           want.FailurePolicy,
		MatchPolicy:             want.MatchPolicy,
		SideEffects:             want.SideEffects,
		TimeoutSeconds:          want.TimeoutSeconds,
		AdmissionReviewVersions: want.AdmissionReviewVersions,
		ReinvocationPolicy:      ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
	}
	if diff := cmp.Diff(wantMutating, mwc.Webhooks[0]); diff != "" {
		t.Errorf("mutating webhook %s differs (-want +got):\n%s", mwc.Webhooks[0].Name, diff)
	}

	// Exactly the permissions the webhook program uses (pkg/cmd/operator tests them on fake API servers): cluster-wide
	// through its ClusterRole, its Secret through a Role of its namespace, both bound to its ServiceAccount.
	wantSubjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: webhook.Spec.Template.Spec.ServiceAccountName}}
	clusterRole := installedObject[*rbacv1.ClusterRole](t, objs, "", naming.WebhookServiceName)
	if diff := cmp.Diff(cmdoperator.WebhookClusterRoleRules(vwc.Name, mwc.Name), clusterRole.Rules); diff != "" {
		t.Errorf("ClusterRole %s rules differ (-code +manifest):\n%s", clusterRole.Name, diff)
	}
	crb := installedObject[*rbacv1.ClusterRoleBinding](t, objs, "", clusterRole.Name)
	if diff := cmp.Diff(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole.Name}, crb.RoleRef); diff != "" {
		t.Errorf("ClusterRoleBinding %s roleRef differs (-want +got):\n%s", crb.Name, diff)
	}
	if diff := cmp.Diff(wantSubjects, crb.Subjects); diff != "" {
		t.Errorf("ClusterRoleBinding %s subjects differ (-want +got):\n%s", crb.Name, diff)
	}
	webhookRole := installedObject[*rbacv1.Role](t, objs, ns, naming.WebhookServiceName)
	if diff := cmp.Diff(cmdoperator.WebhookNamespaceRules(naming.WebhookServingCertSecretName), webhookRole.Rules); diff != "" {
		t.Errorf("Role %s rules differ (-code +manifest):\n%s", webhookRole.Name, diff)
	}
	rb := installedObject[*rbacv1.RoleBinding](t, objs, ns, webhookRole.Name)
	if diff := cmp.Diff(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: webhookRole.Name}, rb.RoleRef); diff != "" {
		t.Errorf("RoleBinding %s roleRef differs (-want +got):\n%s", rb.Name, diff)
	}
	if diff := cmp.Diff(wantSubjects, rb.Subjects); diff != "" {
		t.Errorf("RoleBinding %s subjects differ (-want +got):\n%s", rb.Name, diff)
	}
}
