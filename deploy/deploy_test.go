// Package deploy holds the manifests that install the operator and the manager-controller; its tests keep them in
// step with the code.
package deploy

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/scyllakube/scylla-operator/pkg/cmd/operator"
	"github.com/scyllakube/scylla-operator/pkg/controller/scylladbdatacenter"
	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
)

// strictDecoder decodes the kinds of Kubernetes and CustomResourceDefinitions, rejecting unknown fields.
var strictDecoder = func() runtime.Decoder {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
}()

// decodeStrict decodes every document of a manifest file with the Kubernetes scheme, rejecting unknown fields.
func decodeStrict(t *testing.T, path string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	decoder := strictDecoder
	var objs []runtime.Object
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		objs = append(objs, obj)
	}
	return objs
}

func TestOperatorManifestsDecodeStrictly(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("operator/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in operator/: %v", err)
	}
	for _, f := range files {
		if objs := decodeStrict(t, f); len(objs) == 0 {
			t.Errorf("%s has no objects", f)
		}
	}
}

// The ClusterRole users install must grant exactly what the operator's builder says the sidecar needs.
func TestMemberClusterRoleMatchesTheOperator(t *testing.T) {
	t.Parallel()
	objs := decodeStrict(t, "operator/20-member-clusterrole.yaml")
	if len(objs) != 1 {
		t.Fatalf("want one object, got %d", len(objs))
	}
	got, ok := objs[0].(*rbacv1.ClusterRole)
	if !ok {
		t.Fatalf("want a ClusterRole, got %T", objs[0])
	}
	want := scylladbdatacenter.MakeMemberClusterRole()
	// Compare what matters for access: name, labels and rules.
	if diff := cmp.Diff(want.Name, got.Name); diff != "" {
		t.Errorf("name differs (-builder +manifest):\n%s", diff)
	}
	if diff := cmp.Diff(want.Labels, got.Labels); diff != "" {
		t.Errorf("labels differ (-builder +manifest):\n%s", diff)
	}
	if diff := cmp.Diff(want.Rules, got.Rules); diff != "" {
		wantYAML, _ := yaml.Marshal(want.Rules)
		t.Errorf("rules differ (-builder +manifest):\n%s\nthe manifest's rules should be:\n%s", diff, wantYAML)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// expandEnv replaces $(NAME) in a container argument the way the kubelet does, with the values the container's env
// sets literally or from the pod's metadata.namespace (podNamespace); values from elsewhere become "<NAME>".
func expandEnv(arg string, env []corev1.EnvVar, podNamespace string) string {
	for _, e := range env {
		value := e.Value
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			value = podNamespace
		case e.ValueFrom != nil:
			value = "<" + e.Name + ">"
		}
		arg = strings.ReplaceAll(arg, "$("+e.Name+")", value)
	}
	return arg
}

// programFlags returns a command with the flags of a scylla-operator subcommand and a function validating their
// values as the program does before it starts.
var programFlags = map[string]func() (*cobra.Command, func() error){
	"operator": func() (*cobra.Command, func() error) {
		o := operator.NewOperatorOptions()
		cmd := &cobra.Command{Use: "operator"}
		o.AddFlags(cmd)
		return cmd, o.Validate
	},
	"manager-controller": func() (*cobra.Command, func() error) {
		o := operator.NewManagerControllerOptions()
		cmd := &cobra.Command{Use: "manager-controller"}
		o.AddFlags(cmd)
		return cmd, o.Validate
	},
	"webhook": func() (*cobra.Command, func() error) {
		o := operator.NewWebhookOptions()
		cmd := &cobra.Command{Use: "webhook"}
		o.AddFlags(cmd)
		return cmd, o.Validate
	},
}

// The Deployments run a subcommand of scylla-operator with flags it accepts and values it validates.
func TestDeploymentArgsAreFlagsTheProgramAccepts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, subcommand string
	}{
		{file: "operator/30-deployment.yaml", subcommand: "operator"},
		{file: "manager/20-manager-controller-deployment.yaml", subcommand: "manager-controller"},
		{file: "operator/50-webhook.yaml", subcommand: "webhook"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			var deployments []*appsv1.Deployment
			for _, obj := range decodeStrict(t, tc.file) {
				if d, ok := obj.(*appsv1.Deployment); ok {
					deployments = append(deployments, d)
				}
			}
			if len(deployments) != 1 {
				t.Fatalf("want one Deployment, got %d", len(deployments))
			}
			d := deployments[0]
			c := d.Spec.Template.Spec.Containers[0]
			if len(c.Command) != 0 || len(c.Args) == 0 || c.Args[0] != tc.subcommand {
				t.Fatalf("container %s runs command %q args %q, want the image's entrypoint with subcommand %q first", c.Name, c.Command, c.Args, tc.subcommand)
			}
			root := operator.NewScyllaOperatorCommand(genericclioptions.IOStreams{})
			if found, _, err := root.Find([]string{tc.subcommand}); err != nil || found == root {
				t.Fatalf("scylla-operator has no subcommand %q: %v", tc.subcommand, err)
			}

			cmd, validate := programFlags[tc.subcommand]()
			var args []string
			for _, a := range c.Args[1:] {
				args = append(args, expandEnv(a, c.Env, d.Namespace))
			}
			if err := cmd.ParseFlags(args); err != nil {
				t.Fatalf("%s does not accept %q: %v", tc.subcommand, args, err)
			}
			if err := validate(); err != nil {
				t.Errorf("%s rejects %q: %v", tc.subcommand, args, err)
			}

			// Without --leader-election-namespace the lease is in the pod's namespace, from POD_NAMESPACE; the webhook
			// keeps its Secret there.
			if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
				return e.Name == "POD_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace"
			}) {
				t.Errorf("container %s does not set POD_NAMESPACE from metadata.namespace", c.Name)
			}
			// The probes hit the endpoints the program serves.
			if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
				t.Errorf("container %s has no readiness probe on /readyz", c.Name)
			}
			if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
				t.Errorf("container %s has no liveness probe on /healthz", c.Name)
			}
		})
	}
}
