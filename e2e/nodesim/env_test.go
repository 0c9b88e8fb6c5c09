package nodesim

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// fakeObjects serves ConfigMaps and Secrets from maps keyed by "namespace/name".
type fakeObjects struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

func (f fakeObjects) ConfigMap(namespace, name string) (*corev1.ConfigMap, error) {
	if cm, ok := f.configMaps[namespace+"/"+name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (f fakeObjects) Secret(namespace, name string) (*corev1.Secret, error) {
	if s, ok := f.secrets[namespace+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "basic-us-east-1-a-0", Namespace: "scylla", UID: "uid-1",
			Labels:      map[string]string{"scylla/rack": "a"},
			Annotations: map[string]string{"note": "x"},
		},
		Spec: corev1.PodSpec{NodeName: "kwok-a-0", ServiceAccountName: "basic-member"},
		Status: corev1.PodStatus{
			PodIP:   "10.244.0.5",
			PodIPs:  []corev1.PodIP{{IP: "10.244.0.5"}, {IP: "fd00::5"}},
			HostIP:  "10.0.0.1",
			HostIPs: []corev1.HostIP{{IP: "10.0.0.1"}},
		},
	}
}

func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

func TestContainerEnvResolvesLikeTheKubelet(t *testing.T) {
	t.Parallel()
	objects := fakeObjects{
		configMaps: map[string]*corev1.ConfigMap{
			"scylla/settings": {Data: map[string]string{"MODE": "fast", "1bad": "x"}, BinaryData: map[string][]byte{"BIN": []byte("b")}},
		},
		secrets: map[string]*corev1.Secret{
			"scylla/creds": {Data: map[string][]byte{"TOKEN": []byte("t0k"), "USER": []byte("u")}},
		},
	}
	tests := []struct {
		name      string
		container corev1.Container
		want      []envVar
		wantErr   string
		notYet    bool
	}{
		{
			name: "downward API fields",
			container: corev1.Container{Env: []corev1.EnvVar{
				fieldEnv("POD_NAME", "metadata.name"),
				fieldEnv("POD_NAMESPACE", "metadata.namespace"),
				fieldEnv("UID", "metadata.uid"),
				fieldEnv("NODE", "spec.nodeName"),
				fieldEnv("SA", "spec.serviceAccountName"),
				fieldEnv("IP", "status.podIP"),
				fieldEnv("IPS", "status.podIPs"),
				fieldEnv("HOST", "status.hostIP"),
				fieldEnv("HOSTS", "status.hostIPs"),
				fieldEnv("RACK", "metadata.labels['scylla/rack']"),
				fieldEnv("NOTE", "metadata.annotations['note']"),
			}},
			want: []envVar{
				{"POD_NAME", "basic-us-east-1-a-0"}, {"POD_NAMESPACE", "scylla"}, {"UID", "uid-1"}, {"NODE", "kwok-a-0"},
				{"SA", "basic-member"}, {"IP", "10.244.0.5"}, {"IPS", "10.244.0.5,fd00::5"}, {"HOST", "10.0.0.1"},
				{"HOSTS", "10.0.0.1"}, {"RACK", "a"}, {"NOTE", "x"},
			},
		},
		{
			name: "literal values refer to earlier variables and later ones win",
			container: corev1.Container{Env: []corev1.EnvVar{
				fieldEnv("POD_NAME", "metadata.name"),
				{Name: "GREETING", Value: "hi $(POD_NAME) $(LATER)"},
				{Name: "LATER", Value: "x"},
				{Name: "POD_NAME", Value: "override"},
			}},
			want: []envVar{{"POD_NAME", "override"}, {"GREETING", "hi basic-us-east-1-a-0 $(LATER)"}, {"LATER", "x"}},
		},
		{
			name: "envFrom with prefix skips invalid names, then env",
			container: corev1.Container{
				EnvFrom: []corev1.EnvFromSource{
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}},
					{Prefix: "S_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}},
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Optional: ptr.To(true)}},
				},
				Env: []corev1.EnvVar{{Name: "MODE", Value: "slow"}},
			},
			want: []envVar{{"MODE", "slow"}, {"S_TOKEN", "t0k"}, {"S_USER", "u"}},
		},
		{
			name: "ConfigMap and Secret keys",
			container: corev1.Container{Env: []corev1.EnvVar{
				{Name: "A", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "BIN"}}},
				{Name: "B", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "TOKEN"}}},
				{Name: "C", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "NOPE", Optional: ptr.To(true)}}},
			}},
			want: []envVar{{"A", "b"}, {"B", "t0k"}},
		},
		{
			name: "missing required ConfigMap waits",
			container: corev1.Container{Env: []corev1.EnvVar{
				{Name: "A", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Key: "k"}}},
			}},
			wantErr: `env "A": ConfigMap "scylla/absent" doesn't exist`,
			notYet:  true,
		},
		{
			name: "missing required key waits",
			container: corev1.Container{Env: []corev1.EnvVar{
				{Name: "A", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "NOPE"}}},
			}},
			wantErr: `env "A": Secret "scylla/creds" has no key "NOPE"`,
			notYet:  true,
		},
		{
			name:      "unknown field",
			container: corev1.Container{Env: []corev1.EnvVar{fieldEnv("X", "metadata.labels")}},
			wantErr:   `env "X": fieldRef "metadata.labels" is not a field the kubelet offers as an environment variable`,
		},
		{
			name: "resource fields are refused",
			container: corev1.Container{Env: []corev1.EnvVar{
				{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
			}},
			wantErr: `env "CPU": resourceFieldRef "limits.cpu" is not supported by the node simulator`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := containerEnv(testPod(), &tc.container, objects)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("want error starting with %q, got %v", tc.wantErr, err)
				}
				if errors.Is(err, errNotYetAvailable) != tc.notYet {
					t.Errorf("error %q: want retryable=%v", err, tc.notYet)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(envVar{})); diff != "" {
				t.Errorf("environment differs (-want +got):\n%s", diff)
			}
		})
	}
}
