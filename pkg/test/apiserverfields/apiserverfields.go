// Package apiserverfields records writes to custom resources the way kube-apiserver's field manager does, for unit
// tests that need server-side apply semantics: list and map types from the CRD's schema (a condition list keyed by
// type merges, an atomic list is replaced), one managedFields entry per manager, operation and subresource, status
// writes that can't change metadata or spec, and managedFields a main-resource write replaces outright. The fake
// clientsets can't do this: they ignore subresources and, with the generated apply configurations, know no list
// types.
//
// It does not validate, default, prune or convert; crdvalidation does the first three.
package apiserverfields

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"

	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"
	scyllascheme "github.com/scyllakube/client/scylla/clientset/versioned/scheme"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"
)

// objectMetaSchema is the part of ObjectMeta's OpenAPI schema that decides how writes merge metadata. The API server
// takes it from its built-in definitions; a CRD's schema only says "type: object".
const objectMetaSchema = `{
  "type": "object",
  "properties": {
    "name": {"type": "string"},
    "generateName": {"type": "string"},
    "namespace": {"type": "string"},
    "uid": {"type": "string"},
    "resourceVersion": {"type": "string"},
    "generation": {"type": "integer", "format": "int64"},
    "creationTimestamp": {"type": "string", "format": "date-time"},
    "deletionTimestamp": {"type": "string", "format": "date-time"},
    "deletionGracePeriodSeconds": {"type": "integer", "format": "int64"},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
    "ownerReferences": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "apiVersion": {"type": "string"},
          "kind": {"type": "string"},
          "name": {"type": "string"},
          "uid": {"type": "string"},
          "controller": {"type": "boolean"},
          "blockOwnerDeletion": {"type": "boolean"}
        }
      },
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["uid"]
    },
    "managedFields": {"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
  }
}`

// crd is the part of a CustomResourceDefinition manifest the type converter needs.
type crd struct {
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Schema struct {
				OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// CRDDir returns the directory of the operator's CRD manifests in the source tree this package was built from.
func CRDDir() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "deploy", "crds")
}

// NewTypeConverter returns a type converter for every version of the kinds the CRD manifests at paths define, with
// the list and map types their schemas declare (x-kubernetes-list-type, -list-map-keys, -map-type). With no paths,
// it reads every manifest in CRDDir.
func NewTypeConverter(paths ...string) (managedfields.TypeConverter, error) {
	if len(paths) == 0 {
		return crdDirTypeConverter()
	}
	return newTypeConverter(paths)
}

// crdDirTypeConverter is the type converter of every manifest in CRDDir, built once: parsing them takes a while and
// tests build many fake clientsets. A type converter is only read.
var crdDirTypeConverter = sync.OnceValues(func() (managedfields.TypeConverter, error) {
	paths, err := filepath.Glob(filepath.Join(CRDDir(), "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no CRD manifests in %q", CRDDir())
	}
	return newTypeConverter(paths)
})

func newTypeConverter(paths []string) (managedfields.TypeConverter, error) {
	models := map[string]*spec.Schema{}
	for _, path := range paths {
		if err := addModels(models, path); err != nil {
			return nil, err
		}
	}
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil, fmt.Errorf("can't build the type converter of %q: %w", paths, err)
	}
	return tc, nil
}

// addModels adds to models the OpenAPI schema of every version of the kind the CRD manifest at path defines.
func addModels(models map[string]*spec.Schema, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("can't read CRD %q: %w", path, err)
	}
	var c crd
	if err := yaml.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("can't decode CRD %q: %w", path, err)
	}
	for _, v := range c.Spec.Versions {
		s := &spec.Schema{}
		if err := json.Unmarshal(v.Schema.OpenAPIV3Schema, s); err != nil {
			return fmt.Errorf("can't decode the schema of %s %s in %q: %w", c.Spec.Names.Kind, v.Name, path, err)
		}
		meta := spec.Schema{}
		if err := json.Unmarshal([]byte(objectMetaSchema), &meta); err != nil {
			return fmt.Errorf("can't decode the ObjectMeta schema: %w", err)
		}
		if s.Properties == nil {
			s.Properties = map[string]spec.Schema{}
		}
		s.Properties["metadata"] = meta
		s.AddExtension("x-kubernetes-group-version-kind", []any{
			map[string]any{"group": c.Spec.Group, "version": v.Name, "kind": c.Spec.Names.Kind},
		})
		models[c.Spec.Group+"."+v.Name+"."+c.Spec.Names.Kind] = s
	}
	return nil
}

// NewScyllaClientset returns a fake clientset of the operator's API holding objects, like the generated
// NewClientset, but whose tracker knows the CRDs' list and map types: the generated apply configurations carry no
// schema, so the generated fake can't apply the operator's kinds. Its writes bump resource versions
// (BumpResourceVersions). It returns the tracker too; the clientset's Tracker method returns an unused one.
func NewScyllaClientset(objects ...runtime.Object) (*scyllafake.Clientset, clienttesting.ObjectTracker, error) {
	tc, err := NewTypeConverter()
	if err != nil {
		return nil, nil, err
	}
	tracker := clienttesting.NewFieldManagedObjectTracker(scyllascheme.Scheme, scyllascheme.Codecs.UniversalDecoder(), tc)
	for _, obj := range objects {
		if err := tracker.Add(obj); err != nil {
			return nil, nil, err
		}
	}
	cs := scyllafake.NewClientset()
	cs.ReactionChain = nil
	cs.WatchReactionChain = nil
	cs.AddReactor("*", "*", clienttesting.ObjectReaction(tracker))
	BumpResourceVersions(&cs.Fake, tracker)
	cs.AddWatchReactor("*", func(action clienttesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if a, ok := action.(clienttesting.WatchActionImpl); ok {
			opts = a.ListOptions
		}
		w, err := tracker.Watch(action.GetResource(), action.GetNamespace(), opts)
		if err != nil {
			return false, nil, err
		}
		return true, w, nil
	})
	return cs, tracker, nil
}

// Server stores objects of one custom resource kind with a status subresource and records in their managedFields
// the writes replayed to it.
type Server struct {
	scheme *runtime.Scheme
	gvk    schema.GroupVersionKind
	main   *managedfields.FieldManager
	status *managedfields.FieldManager
}

// NewServer returns a Server for objects of kind gvk, one of the operator's CRDs, with the Go types of scheme.
func NewServer(scheme *runtime.Scheme, gvk schema.GroupVersionKind) (*Server, error) {
	tc, err := NewTypeConverter()
	if err != nil {
		return nil, err
	}
	version := fieldpath.APIVersion(gvk.GroupVersion().String())
	// What the API server resets: a main-resource write can't change the status, a status write nothing else.
	mainReset := map[fieldpath.APIVersion]fieldpath.Filter{
		version: fieldpath.NewExcludeSetFilter(fieldpath.NewSet(fieldpath.MakePathOrDie("status"))),
	}
	statusReset := map[fieldpath.APIVersion]fieldpath.Filter{
		version: fieldpath.NewExcludeSetFilter(fieldpath.NewSet(fieldpath.MakePathOrDie("metadata"), fieldpath.MakePathOrDie("spec"))),
	}
	s := &Server{scheme: scheme, gvk: gvk}
	if s.main, err = managedfields.NewDefaultCRDFieldManager(tc, scheme, scheme, scheme, gvk, gvk.GroupVersion(), "", mainReset); err != nil {
		return nil, err
	}
	if s.status, err = managedfields.NewDefaultCRDFieldManager(tc, scheme, scheme, scheme, gvk, gvk.GroupVersion(), "status", statusReset); err != nil {
		return nil, err
	}
	return s, nil
}

// Create returns obj as created by manager: the API server tracks its fields from the start, so that later writes
// take ownership from it rather than from "before-first-apply".
func (s *Server) Create(obj runtime.Object, manager string) (runtime.Object, error) {
	empty, err := s.scheme.New(s.gvk)
	if err != nil {
		return nil, err
	}
	empty.GetObjectKind().SetGroupVersionKind(s.gvk)
	return s.main.Update(empty, obj.DeepCopyObject(), manager)
}

// Update returns live after an update of the main resource (subresource "") or of its status by manager to obj.
func (s *Server) Update(live, obj runtime.Object, subresource, manager string) (runtime.Object, error) {
	obj = obj.DeepCopyObject()
	if err := s.keepReset(live, obj, subresource); err != nil {
		return nil, err
	}
	return s.fieldManager(subresource).Update(live, obj, manager)
}

// Apply returns live after manager applied the configuration patch (JSON or YAML) to the main resource or its status.
func (s *Server) Apply(live runtime.Object, patch []byte, subresource, manager string, force bool) (runtime.Object, error) {
	applied := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(patch, &applied.Object); err != nil {
		return nil, fmt.Errorf("can't decode apply patch: %w", err)
	}
	merged, err := s.fieldManager(subresource).Apply(live, applied, manager, force)
	if err != nil {
		return nil, err
	}
	if err := s.keepReset(live, merged, subresource); err != nil {
		return nil, err
	}
	return merged, nil
}

// Replay returns live after the write action made by a fake clientset: an update, an apply or a JSON or merge patch
// of the main resource or of its status. userAgentManager is the field manager the API server would derive from the
// client's user agent for writes that name none.
func (s *Server) Replay(live runtime.Object, action clienttesting.Action, userAgentManager string) (runtime.Object, error) {
	subresource := action.GetSubresource()
	switch a := action.(type) {
	case clienttesting.UpdateActionImpl:
		return s.Update(live, a.GetObject(), subresource, orDefault(a.UpdateOptions.FieldManager, userAgentManager))

	case clienttesting.PatchActionImpl:
		manager := orDefault(a.PatchOptions.FieldManager, userAgentManager)
		if a.PatchType == types.ApplyPatchType {
			force := a.PatchOptions.Force != nil && *a.PatchOptions.Force
			return s.Apply(live, a.Patch, subresource, manager, force)
		}
		original, err := json.Marshal(live)
		if err != nil {
			return nil, err
		}
		var patched []byte
		switch a.PatchType {
		case types.JSONPatchType:
			p, err := jsonpatch.DecodePatch(a.Patch)
			if err != nil {
				return nil, fmt.Errorf("can't decode JSON patch: %w", err)
			}
			if patched, err = p.Apply(original); err != nil {
				return nil, fmt.Errorf("can't apply JSON patch: %w", err)
			}
		case types.MergePatchType:
			if patched, err = jsonpatch.MergePatch(original, a.Patch); err != nil {
				return nil, fmt.Errorf("can't apply merge patch: %w", err)
			}
		default:
			return nil, fmt.Errorf("can't replay a %s patch", a.PatchType)
		}
		obj, err := s.scheme.New(s.gvk)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(patched, obj); err != nil {
			return nil, fmt.Errorf("can't decode the patched object: %w", err)
		}
		return s.Update(live, obj, subresource, manager)

	default:
		return nil, fmt.Errorf("can't replay action %s %s", action.GetVerb(), action.GetResource().Resource)
	}
}

func (s *Server) fieldManager(subresource string) *managedfields.FieldManager {
	if subresource == "status" {
		return s.status
	}
	return s.main
}

// keepReset puts back into obj what the write to subresource can't change: the status for the main resource;
// everything but the status (and the managedFields the field manager computed) for the status subresource.
func (s *Server) keepReset(live, obj runtime.Object, subresource string) error {
	liveContent, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return err
	}
	objContent, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	kept := liveContent
	if subresource == "status" {
		metadata, _ := kept["metadata"].(map[string]any)
		objMetadata, _ := objContent["metadata"].(map[string]any)
		if metadata != nil && objMetadata != nil {
			if managed, ok := objMetadata["managedFields"]; ok {
				metadata["managedFields"] = managed
			}
		}
		setOrDelete(kept, "status", objContent)
	} else {
		kept = objContent
		setOrDelete(kept, "status", liveContent)
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(kept, obj)
}

// setOrDelete sets dst[key] to src[key], or deletes it from dst when src has none.
func setOrDelete(dst map[string]any, key string, src map[string]any) {
	if v, ok := src[key]; ok {
		dst[key] = v
		return
	}
	delete(dst, key)
}

// ManagedFieldsEntry returns the managedFields entry of manager for operation on subresource, if obj has one.
func ManagedFieldsEntry(obj metav1.Object, manager string, operation metav1.ManagedFieldsOperationType, subresource string) (metav1.ManagedFieldsEntry, bool) {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager && e.Operation == operation && e.Subresource == subresource {
			return e, true
		}
	}
	return metav1.ManagedFieldsEntry{}, false
}

func orDefault(s, def string) string {
	if len(s) == 0 {
		return def
	}
	return s
}
