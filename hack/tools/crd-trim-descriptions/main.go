// Command crd-trim-descriptions removes the descriptions that controller-gen copies from Kubernetes' own types
// (affinity, volumes, resources, ...) out of CRD files, keeping the descriptions of the project's own fields.
//
// ScyllaDBCluster embeds those types at several levels (datacenter template, rack template, racks), and with their
// descriptions its CRD would exceed what etcd stores in one object. Their documentation stays available through
// `kubectl explain pod.spec`.
package main

import (
	"bytes"
	"fmt"
	"os"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// kubernetesTypedFields are the property names whose schemas come from k8s.io/api types.
var kubernetesTypedFields = map[string]bool{
	"affinity":          true,
	"nodeAffinity":      true,
	"podAffinity":       true,
	"podAntiAffinity":   true,
	"tolerations":       true,
	"volumes":           true,
	"volumeMounts":      true,
	"agentVolumeMounts": true,
	"resources":         true,
	"agentResources":    true,
	"readinessGates":    true,
	"imagePullSecrets":  true,
	"conditions":        true,
}

// children calls f on every schema nested directly in s, with the property name where there is one.
func children(s *apiextensionsv1.JSONSchemaProps, f func(name string, child *apiextensionsv1.JSONSchemaProps)) {
	for name, p := range s.Properties {
		f(name, &p)
		s.Properties[name] = p
	}
	if s.Items != nil {
		if s.Items.Schema != nil {
			f("", s.Items.Schema)
		}
		for i := range s.Items.JSONSchemas {
			f("", &s.Items.JSONSchemas[i])
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		f("", s.AdditionalProperties.Schema)
	}
}

// stripAll removes the descriptions of s and everything below it.
func stripAll(s *apiextensionsv1.JSONSchemaProps) {
	s.Description = ""
	children(s, func(_ string, c *apiextensionsv1.JSONSchemaProps) { stripAll(c) })
}

// trim keeps the descriptions of the project's own fields, including the one on a Kubernetes-typed field itself,
// and strips everything below a Kubernetes-typed field.
func trim(s *apiextensionsv1.JSONSchemaProps) {
	children(s, func(name string, c *apiextensionsv1.JSONSchemaProps) {
		if kubernetesTypedFields[name] {
			children(c, func(_ string, cc *apiextensionsv1.JSONSchemaProps) { stripAll(cc) })
			return
		}
		trim(c)
	})
}

func trimFile(path string) error {
	in, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	// controller-gen starts each file with a document separator.
	header := []byte("---\n")
	body := bytes.TrimPrefix(in, header)

	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(body, crd); err != nil {
		return fmt.Errorf("can't decode CRD %q: %w", path, err)
	}
	for i := range crd.Spec.Versions {
		if v := crd.Spec.Versions[i].Schema; v != nil {
			trim(v.OpenAPIV3Schema)
		}
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return fmt.Errorf("can't encode CRD %q: %w", path, err)
	}
	// Drop the empty status controller-gen never writes.
	out = bytes.Replace(out, []byte("status:\n  acceptedNames:\n    kind: \"\"\n    plural: \"\"\n  conditions: null\n  storedVersions: null\n"), nil, 1)
	return os.WriteFile(path, append(header, out...), 0o644)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: crd-trim-descriptions FILE...")
		os.Exit(2)
	}
	for _, p := range os.Args[1:] {
		if err := trimFile(p); err != nil {
			fmt.Fprintf(os.Stderr, "Error: %v\n", err)
			os.Exit(1)
		}
	}
}
