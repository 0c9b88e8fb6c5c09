package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// crdResource is the resource of CustomResourceDefinitions.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// DecodeManifests splits multi-document YAML (or JSON) into objects. Empty documents are skipped; a document
// without apiVersion and kind is an error.
func DecodeManifests(data []byte) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for i := 0; ; i++ {
		var raw map[string]interface{}
		if err := decoder.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("can't decode document %d: %w", i, err)
		}
		if len(raw) == 0 {
			continue
		}
		obj := &unstructured.Unstructured{Object: raw}
		if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
			return nil, fmt.Errorf("document %d has no apiVersion or kind", i)
		}
		objs = append(objs, obj)
	}
}

// DecodeManifestFile reads and decodes one manifest file.
func DecodeManifestFile(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("can't read manifest: %w", err)
	}
	objs, err := DecodeManifests(data)
	if err != nil {
		return nil, fmt.Errorf("can't decode %s: %w", path, err)
	}
	return objs, nil
}

// resourceFor returns the resource interface for obj, placing a namespaced object without a namespace into
// defaultNamespace. The discovery cache is refreshed once when the kind is unknown (for example, right after its
// CRD was installed).
func (c *Clients) resourceFor(obj *unstructured.Unstructured, defaultNamespace string) (resourceInterface, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.Mapper.Reset()
		mapping, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("can't map kind %s: %w", gvk, err)
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return c.Dynamic.Resource(mapping.Resource), nil
	}
	namespace := obj.GetNamespace()
	if namespace == "" {
		namespace = defaultNamespace
	}
	if namespace == "" {
		return nil, fmt.Errorf("%s %q is namespaced but has no namespace", gvk.Kind, obj.GetName())
	}
	return c.Dynamic.Resource(mapping.Resource).Namespace(namespace), nil
}

// resourceInterface is the part of dynamic.ResourceInterface the framework uses.
type resourceInterface interface {
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, options metav1.PatchOptions, subresources ...string) (*unstructured.Unstructured, error)
	Create(ctx context.Context, obj *unstructured.Unstructured, options metav1.CreateOptions, subresources ...string) (*unstructured.Unstructured, error)
}

// Apply server-side applies obj as fieldManager (forcing conflicts), in defaultNamespace if obj is namespaced
// and names none. It returns the object the server stored; API errors (such as a validation rejection) are
// returned unchanged so that callers can inspect them.
func (c *Clients) Apply(ctx context.Context, obj *unstructured.Unstructured, fieldManager, defaultNamespace string) (*unstructured.Unstructured, error) {
	ri, err := c.resourceFor(obj, defaultNamespace)
	if err != nil {
		return nil, err
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("can't encode %s %q: %w", obj.GetKind(), obj.GetName(), err)
	}
	force := true
	return ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: fieldManager, Force: &force})
}

// Create creates obj, in defaultNamespace if obj is namespaced and names none. API errors are returned unchanged.
func (c *Clients) Create(ctx context.Context, obj *unstructured.Unstructured, defaultNamespace string, opts metav1.CreateOptions) (*unstructured.Unstructured, error) {
	ri, err := c.resourceFor(obj, defaultNamespace)
	if err != nil {
		return nil, err
	}
	return ri.Create(ctx, obj, opts)
}

// ApplyManifestFile applies every object of a manifest file and returns what the server stored.
func (c *Clients) ApplyManifestFile(ctx context.Context, path, fieldManager, defaultNamespace string) ([]*unstructured.Unstructured, error) {
	objs, err := DecodeManifestFile(path)
	if err != nil {
		return nil, err
	}
	applied := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		out, err := c.Apply(ctx, obj, fieldManager, defaultNamespace)
		if err != nil {
			return applied, fmt.Errorf("can't apply %s %q from %s: %w", obj.GetKind(), obj.GetName(), path, err)
		}
		applied = append(applied, out)
	}
	return applied, nil
}

// ManifestFiles returns the *.yaml files directly in dir, sorted; none if dir does not exist.
func ManifestFiles(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("can't list manifests in %s: %w", dir, err)
	}
	sort.Strings(files)
	return files, nil
}

// InstallCRDs applies every CustomResourceDefinition in the *.yaml files of dir, waits until each is
// Established and returns their names. A missing or empty dir installs nothing.
func (c *Clients) InstallCRDs(ctx context.Context, dir, fieldManager string) ([]string, error) {
	files, err := ManifestFiles(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, file := range files {
		objs, err := c.ApplyManifestFile(ctx, file, fieldManager, "")
		if err != nil {
			return names, err
		}
		for _, obj := range objs {
			if obj.GetKind() == "CustomResourceDefinition" {
				names = append(names, obj.GetName())
			}
		}
	}
	if err := c.WaitForCRDsEstablished(ctx, names); err != nil {
		return names, err
	}
	c.Mapper.Reset()
	return names, nil
}

// WaitForCRDsEstablished waits until every named CRD has the Established condition, or ctx ends.
func (c *Clients) WaitForCRDsEstablished(ctx context.Context, names []string) error {
	return Poll(ctx, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			established, err := c.crdEstablished(ctx, name)
			if !established {
				return false, err
			}
		}
		return true, nil
	})
}

func (c *Clients) crdEstablished(ctx context.Context, name string) (bool, error) {
	crd, err := c.Dynamic.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, fmt.Errorf("CustomResourceDefinition %q does not exist", name)
	}
	if err != nil {
		return false, err
	}
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conditions {
		m, ok := c.(map[string]interface{})
		if ok && m["type"] == "Established" && m["status"] == "True" {
			return true, nil
		}
	}
	return false, fmt.Errorf("CustomResourceDefinition %q is not Established yet", name)
}
