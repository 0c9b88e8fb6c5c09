package nodesim

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
)

// errNotYetAvailable marks a problem that may go away (an object that isn't there yet); the simulator retries.
var errNotYetAvailable = errors.New("not yet available")

// objectGetter reads the ConfigMaps and Secrets a container's environment and volumes refer to.
type objectGetter interface {
	ConfigMap(namespace, name string) (*corev1.ConfigMap, error)
	Secret(namespace, name string) (*corev1.Secret, error)
}

// envVar is one resolved environment variable.
type envVar struct {
	Name, Value string
}

// containerEnv resolves a container's environment as the kubelet does: envFrom sources first, then env in order,
// where a literal value may refer to variables defined before it and a later definition wins. It supports
// literal values, the downward API fields the kubelet offers as environment variables, ConfigMap and Secret keys.
// Service link variables are not added. Missing objects that aren't optional wrap errNotYetAvailable.
func containerEnv(pod *corev1.Pod, c *corev1.Container, objects objectGetter) ([]envVar, error) {
	values := map[string]string{}
	var order []string
	set := func(name, value string) {
		if _, ok := values[name]; !ok {
			order = append(order, name)
		}
		values[name] = value
	}

	for _, from := range c.EnvFrom {
		data, err := envFromData(pod.Namespace, from, objects)
		if err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			name := from.Prefix + k
			// The kubelet skips keys that are not valid variable names.
			if len(validation.IsEnvVarName(name)) == 0 {
				set(name, data[k])
			}
		}
	}

	lookup := func(name string) (string, bool) {
		v, ok := values[name]
		return v, ok
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, lookup))
			continue
		}
		v, ok, err := envValueFrom(pod, e, objects)
		if err != nil {
			return nil, fmt.Errorf("env %q: %w", e.Name, err)
		}
		if ok {
			set(e.Name, v)
		}
	}

	out := make([]envVar, 0, len(order))
	for _, name := range order {
		out = append(out, envVar{Name: name, Value: values[name]})
	}
	return out, nil
}

func envFromData(namespace string, from corev1.EnvFromSource, objects objectGetter) (map[string]string, error) {
	switch {
	case from.ConfigMapRef != nil:
		cm, err := objects.ConfigMap(namespace, from.ConfigMapRef.Name)
		if err != nil {
			return nil, missingOrError(err, isOptional(from.ConfigMapRef.Optional), "ConfigMap", namespace, from.ConfigMapRef.Name)
		}
		if cm == nil {
			return nil, nil
		}
		return cm.Data, nil
	case from.SecretRef != nil:
		s, err := objects.Secret(namespace, from.SecretRef.Name)
		if err != nil {
			return nil, missingOrError(err, isOptional(from.SecretRef.Optional), "Secret", namespace, from.SecretRef.Name)
		}
		if s == nil {
			return nil, nil
		}
		data := map[string]string{}
		for k, v := range s.Data {
			data[k] = string(v)
		}
		return data, nil
	}
	return nil, errors.New("envFrom needs configMapRef or secretRef")
}

func isOptional(b *bool) bool { return b != nil && *b }

// missingOrError returns nil for an optional object that doesn't exist, an errNotYetAvailable error for a required
// one, and other errors as they are.
func missingOrError(err error, optional bool, kind, namespace, name string) error {
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("can't get %s %q: %w", kind, namespace+"/"+name, err)
	}
	if optional {
		return nil
	}
	return fmt.Errorf("%s %q doesn't exist: %w", kind, namespace+"/"+name, errNotYetAvailable)
}

// envValueFrom resolves a valueFrom; ok is false for an optional key that doesn't exist.
func envValueFrom(pod *corev1.Pod, e corev1.EnvVar, objects objectGetter) (value string, ok bool, err error) {
	from := e.ValueFrom
	switch {
	case from.FieldRef != nil:
		v, err := podField(pod, from.FieldRef.FieldPath)
		return v, err == nil, err
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := objects.ConfigMap(pod.Namespace, ref.Name)
		if err != nil {
			return "", false, missingOrError(err, isOptional(ref.Optional), "ConfigMap", pod.Namespace, ref.Name)
		}
		if v, found := cm.Data[ref.Key]; found {
			return v, true, nil
		}
		if v, found := cm.BinaryData[ref.Key]; found {
			return string(v), true, nil
		}
		return keyMissing(isOptional(ref.Optional), "ConfigMap", pod.Namespace, ref.Name, ref.Key)
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		s, err := objects.Secret(pod.Namespace, ref.Name)
		if err != nil {
			return "", false, missingOrError(err, isOptional(ref.Optional), "Secret", pod.Namespace, ref.Name)
		}
		if v, found := s.Data[ref.Key]; found {
			return string(v), true, nil
		}
		return keyMissing(isOptional(ref.Optional), "Secret", pod.Namespace, ref.Name, ref.Key)
	case from.ResourceFieldRef != nil:
		return "", false, fmt.Errorf("resourceFieldRef %q is not supported by the node simulator", from.ResourceFieldRef.Resource)
	case from.FileKeyRef != nil:
		return "", false, errors.New("fileKeyRef is not supported by the node simulator")
	}
	return "", false, errors.New("valueFrom names no source")
}

func keyMissing(optional bool, kind, namespace, name, key string) (string, bool, error) {
	if optional {
		return "", false, nil
	}
	return "", false, fmt.Errorf("%s %q has no key %q: %w", kind, namespace+"/"+name, key, errNotYetAvailable)
}

// labelOrAnnotationField matches metadata.labels['key'] and metadata.annotations['key'].
var labelOrAnnotationField = regexp.MustCompile(`^metadata\.(labels|annotations)\['(.+)'\]$`)

// podField returns a downward API field the kubelet offers as an environment variable.
func podField(pod *corev1.Pod, path string) (string, error) {
	ips := func(podIPs []corev1.PodIP) string {
		var out []string
		for _, ip := range podIPs {
			out = append(out, ip.IP)
		}
		return strings.Join(out, ",")
	}
	hostIPs := func(hostIPs []corev1.HostIP) string {
		var out []string
		for _, ip := range hostIPs {
			out = append(out, ip.IP)
		}
		return strings.Join(out, ",")
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		return pod.Status.PodIP, nil
	case "status.podIPs":
		return ips(pod.Status.PodIPs), nil
	case "status.hostIP":
		return pod.Status.HostIP, nil
	case "status.hostIPs":
		return hostIPs(pod.Status.HostIPs), nil
	}
	if m := labelOrAnnotationField.FindStringSubmatch(path); m != nil {
		if m[1] == "labels" {
			return pod.Labels[m[2]], nil
		}
		return pod.Annotations[m[2]], nil
	}
	return "", fmt.Errorf("fieldRef %q is not a field the kubelet offers as an environment variable", path)
}
