// Package crdvalidation checks custom resource manifests against CustomResourceDefinitions the way kube-apiserver
// does before admission: strict decoding (unknown fields are errors), pruning, structural defaulting, OpenAPI schema
// validation, list-type invariants and CEL (x-kubernetes-validations) rules, including transition rules and
// validation ratcheting on update. It also checks that the CRDs themselves would be accepted by an API server,
// including the CEL cost limits.
//
// It is meant for tests: unit tests of the API and, later, e2e tests that compare its verdicts with a real API
// server's. It does not run admission webhooks or conversion. Unknown fields are reported as field errors
// ("<path>: Forbidden: unknown field"), while an API server with fieldValidation=Strict rejects the request with the
// message `unknown field "<path>"` before validating; the rest of the errors have the same paths and messages.
package crdvalidation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// DefaultNamespace is the namespace given to namespaced objects whose manifest has none, as kubectl does.
const DefaultNamespace = "default"

// kindValidator holds everything needed to validate one served version of one CRD.
type kindValidator struct {
	gvk             schema.GroupVersionKind
	namespaced      bool
	structural      *structuralschema.Structural
	schemaValidator apiservervalidation.SchemaValidator
	celValidator    *cel.Validator
}

// Validator validates custom resources of the kinds defined by a set of CRDs.
type Validator struct {
	scheme *runtime.Scheme
	kinds  map[schema.GroupVersionKind]*kindValidator
}

// LoadCRDs reads every *.yaml file in dir, each holding one or more CustomResourceDefinitions, decoding them
// strictly. The result is sorted by CRD name.
func LoadCRDs(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("can't list CRD files in %q: %w", dir, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("can't load CRDs: no *.yaml files in %q", dir)
	}

	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("can't read CRD file %q: %w", p, err)
		}
		docs, err := SplitDocuments(data)
		if err != nil {
			return nil, fmt.Errorf("can't split CRD file %q: %w", p, err)
		}
		for i, doc := range docs {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := decodeStrict(doc, crd); err != nil {
				return nil, fmt.Errorf("can't decode CustomResourceDefinition %d in %q: %w", i, p, err)
			}
			crds = append(crds, crd)
		}
	}
	sort.Slice(crds, func(i, j int) bool { return crds[i].Name < crds[j].Name })

	return crds, nil
}

// ValidateCRD checks a CRD the way kube-apiserver does on creation: names, versions, structural schema, defaults,
// list types and the compilation and estimated cost of its CEL rules.
func ValidateCRD(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	internal, err := toInternalCRD(crd)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return apiextensionsvalidation.ValidateCustomResourceDefinition(ctx, internal)
}

func toInternalCRD(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensionsinternal.CustomResourceDefinition, error) {
	defaulted := crd.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(defaulted)
	// The API server records the storage version on creation; validation expects it.
	for _, v := range defaulted.Spec.Versions {
		if v.Storage {
			defaulted.Status.StoredVersions = []string{v.Name}
		}
	}

	internal := &apiextensionsinternal.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(defaulted, internal, nil); err != nil {
		return nil, fmt.Errorf("can't convert CustomResourceDefinition %q to the internal version: %w", crd.Name, err)
	}
	return internal, nil
}

// NewValidator validates every CRD and prepares validators for each of their served versions. scheme must know a Go
// type for every served kind; manifests are strictly decoded into it. Kinds the scheme knows but no CRD defines
// (built-in kinds such as Namespace) are only decoded strictly.
func NewValidator(ctx context.Context, scheme *runtime.Scheme, crds []*apiextensionsv1.CustomResourceDefinition) (*Validator, error) {
	v := &Validator{
		scheme: scheme,
		kinds:  map[schema.GroupVersionKind]*kindValidator{},
	}

	var errs []error
	for _, crd := range crds {
		if fieldErrs := ValidateCRD(ctx, crd); len(fieldErrs) != 0 {
			errs = append(errs, fmt.Errorf("CustomResourceDefinition %q would be rejected: %w", crd.Name, fieldErrs.ToAggregate()))
			continue
		}
		internal, err := toInternalCRD(crd)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, version := range internal.Spec.Versions {
			if !version.Served {
				continue
			}
			gvk := schema.GroupVersionKind{Group: internal.Spec.Group, Version: version.Name, Kind: internal.Spec.Names.Kind}
			kv, err := newKindValidator(gvk, internal, &version)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !scheme.Recognizes(gvk) {
				errs = append(errs, fmt.Errorf("can't validate %s: no Go type for it in the scheme", gvk))
				continue
			}
			v.kinds[gvk] = kv
		}
	}
	if len(errs) != 0 {
		return nil, errors.Join(errs...)
	}

	return v, nil
}

// NewValidatorFromDir is LoadCRDs followed by NewValidator.
func NewValidatorFromDir(ctx context.Context, scheme *runtime.Scheme, dir string) (*Validator, error) {
	crds, err := LoadCRDs(dir)
	if err != nil {
		return nil, err
	}
	return NewValidator(ctx, scheme, crds)
}

func newKindValidator(gvk schema.GroupVersionKind, crd *apiextensionsinternal.CustomResourceDefinition, version *apiextensionsinternal.CustomResourceDefinitionVersion) (*kindValidator, error) {
	validation := version.Schema
	if validation == nil {
		validation = crd.Spec.Validation
	}
	if validation == nil || validation.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("can't validate %s: the CRD has no schema for it", gvk)
	}

	s, err := structuralschema.NewStructural(validation.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("can't build the structural schema of %s: %w", gvk, err)
	}
	// Like the API server, keep defaults only where pruning would keep them.
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, fmt.Errorf("can't prune the defaults of %s: %w", gvk, err)
	}

	schemaValidator, _, err := apiservervalidation.NewSchemaValidator(validation.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("can't build the schema validator of %s: %w", gvk, err)
	}

	return &kindValidator{
		gvk:             gvk,
		namespaced:      crd.Spec.Scope == apiextensionsinternal.NamespaceScoped,
		structural:      s,
		schemaValidator: schemaValidator,
		celValidator:    cel.NewValidator(s, true, celconfig.PerCallLimit),
	}, nil
}

// Kinds lists the group-version-kinds this Validator knows, sorted.
func (v *Validator) Kinds() []schema.GroupVersionKind {
	var gvks []schema.GroupVersionKind
	for gvk := range v.kinds {
		gvks = append(gvks, gvk)
	}
	sort.Slice(gvks, func(i, j int) bool { return gvks[i].String() < gvks[j].String() })
	return gvks
}

// decoded is a manifest after decoding, pruning and defaulting.
type decoded struct {
	// kind is nil for built-in kinds, which are only decoded.
	kind *kindValidator
	obj  *unstructured.Unstructured
}

// decode does what the API server does from the request body up to admission: it parses the manifest, reports
// unknown fields (from the schema and from the Go type), drops non-nullable nulls and applies the schema defaults.
func (v *Validator) decode(manifest []byte) (*decoded, field.ErrorList) {
	data, err := yaml.YAMLToJSONStrict(manifest)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(nil, nil, fmt.Sprintf("can't parse the manifest as YAML: %v", err))}
	}
	var content map[string]interface{}
	if err := utiljson.Unmarshal(data, &content); err != nil {
		return nil, field.ErrorList{field.Invalid(nil, nil, fmt.Sprintf("can't parse the manifest as a JSON object: %v", err))}
	}
	obj := &unstructured.Unstructured{Object: content}

	gvk := obj.GroupVersionKind()
	kv, ok := v.kinds[gvk]
	if !ok {
		if v.scheme.Recognizes(gvk) {
			// A built-in kind such as Namespace: no CRD schema, only strict decoding.
			unknown := map[string]struct{}{}
			errs := v.goTypeErrors(gvk, data, unknown)
			return &decoded{obj: obj}, append(errs, unknownFieldErrors(unknown)...)
		}
		var known []string
		for _, k := range v.Kinds() {
			known = append(known, k.GroupVersion().String()+", Kind="+k.Kind)
		}
		return nil, field.ErrorList{field.NotSupported(field.NewPath("kind"), gvk.GroupVersion().String()+", Kind="+gvk.Kind, known)}
	}

	var errs field.ErrorList
	unknown := map[string]struct{}{}

	// metadata is decoded separately by the API server; unknown fields in it are reported too.
	_, _, metaUnknown, err := schemaobjectmeta.GetObjectMetaWithOptions(obj.Object, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), nil, err.Error()))
	}
	for _, p := range metaUnknown {
		unknown[p] = struct{}{}
	}
	pruned := obj.DeepCopy()
	for _, p := range structuralpruning.PruneWithOptions(pruned.Object, kv.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		unknown[p] = struct{}{}
	}

	// The Go type must accept the same manifest strictly; its unknown fields also reveal CRD/Go mismatches.
	goErrs := v.goTypeErrors(gvk, data, unknown)

	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(pruned.Object, kv.structural)
	structuraldefaulting.Default(pruned.Object, kv.structural)
	if kv.namespaced && pruned.GetNamespace() == "" {
		pruned.SetNamespace(DefaultNamespace)
	}

	// The operator decodes the stored, defaulted object; it must fit the Go type as well. When the manifest itself
	// doesn't fit, the defaulted object won't either, so that is reported once.
	if len(goErrs) == 0 {
		defaultedData, err := pruned.MarshalJSON()
		if err != nil {
			goErrs = field.ErrorList{field.InternalError(nil, fmt.Errorf("can't encode the defaulted object: %w", err))}
		} else {
			goErrs = v.goTypeErrors(gvk, defaultedData, unknown)
		}
	}
	errs = append(errs, goErrs...)
	errs = append(errs, unknownFieldErrors(unknown)...)

	return &decoded{kind: kv, obj: pruned}, errs
}

// goTypeErrors decodes data strictly into the Go type of gvk. Unknown fields are added to unknown; other problems
// are returned as one error.
func (v *Validator) goTypeErrors(gvk schema.GroupVersionKind, data []byte, unknown map[string]struct{}) field.ErrorList {
	into, err := v.scheme.New(gvk)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("can't create a Go object for %s: %w", gvk, err))}
	}
	strictErrs, err := sigsjson.UnmarshalStrict(data, into)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, se := range strictErrs {
		if m := unknownFieldRE.FindStringSubmatch(se.Error()); m != nil {
			unknown[m[1]] = struct{}{}
			continue
		}
		errs = append(errs, se)
	}
	if len(errs) == 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(nil, nil, fmt.Sprintf("doesn't decode into the Go type of %s: %v", gvk.Kind, errors.Join(errs...)))}
}

func unknownFieldErrors(unknown map[string]struct{}) field.ErrorList {
	var errs field.ErrorList
	for _, p := range sortedKeys(unknown) {
		errs = append(errs, field.Forbidden(pathFromString(p), "unknown field"))
	}
	return errs
}

var unknownFieldRE = regexp.MustCompile(`^unknown field "(.*)"$`)

// pathFromString turns a dotted path such as spec.racks[0].name into a field.Path.
func pathFromString(p string) *field.Path {
	var fp *field.Path
	for _, part := range strings.Split(p, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if fp == nil {
			fp = field.NewPath(name)
		} else {
			fp = fp.Child(name)
		}
		for rest != "" {
			var idx string
			idx, rest, _ = strings.Cut(rest, "]")
			rest = strings.TrimPrefix(rest, "[")
			var i int
			if _, err := fmt.Sscanf(idx, "%d", &i); err == nil {
				fp = fp.Index(i)
			} else {
				fp = fp.Key(idx)
			}
		}
	}
	return fp
}

func sortedKeys(m map[string]struct{}) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func objectOf(d *decoded) *unstructured.Unstructured {
	if d == nil {
		return nil
	}
	return d.obj
}

// Default decodes a manifest and returns it with the schema defaults applied, as the API server would store it.
func (v *Validator) Default(manifest []byte) (*unstructured.Unstructured, field.ErrorList) {
	d, errs := v.decode(manifest)
	if d == nil {
		return nil, errs
	}
	return d.obj, errs
}

// ValidateCreate decodes, defaults and validates a manifest as the API server does for a create request, before
// admission webhooks. It returns the defaulted object (nil when the manifest could not be decoded) and every error.
func (v *Validator) ValidateCreate(ctx context.Context, manifest []byte) (*unstructured.Unstructured, field.ErrorList) {
	d, errs := v.decode(manifest)
	if d == nil || d.kind == nil {
		return objectOf(d), errs
	}
	// Status can't be set on create when the status subresource is enabled; all our kinds enable it.
	unstructured.RemoveNestedField(d.obj.Object, "status")

	errs = append(errs, validateMetadata(d.kind, d.obj)...)
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, d.obj.UnstructuredContent(), d.kind.schemaValidator)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, d.kind.structural, d.obj.Object)...)
	errs = append(errs, d.kind.runCEL(ctx, errs, d.obj, nil, nil)...)
	return d.obj, errs
}

// ValidateUpdate validates newManifest as an update of oldManifest, as the API server does before admission
// webhooks: transition rules see oldSelf, and unchanged parts that were already invalid are ratcheted. The old
// object is decoded and defaulted like a stored object; errors in it are returned with the prefix "old: ".
func (v *Validator) ValidateUpdate(ctx context.Context, oldManifest, newManifest []byte) (*unstructured.Unstructured, field.ErrorList) {
	oldDecoded, oldErrs := v.decode(oldManifest)
	if len(oldErrs) != 0 {
		var errs field.ErrorList
		for _, e := range oldErrs {
			e := *e
			e.Detail = "old: " + e.Detail
			errs = append(errs, &e)
		}
		return nil, errs
	}
	d, errs := v.decode(newManifest)
	if d == nil || d.kind == nil {
		return objectOf(d), errs
	}
	if d.kind != oldDecoded.kind {
		return nil, append(errs, field.Invalid(field.NewPath("kind"), d.obj.GetKind(), fmt.Sprintf("must be %s like the old object", oldDecoded.kind.gvk)))
	}
	oldObj := oldDecoded.obj

	// Updates of the main resource can't change status.
	if status, ok := oldObj.Object["status"]; ok {
		d.obj.Object["status"] = status
	} else {
		delete(d.obj.Object, "status")
	}

	errs = append(errs, validateMetadata(d.kind, d.obj)...)
	if oldObj.GetName() != d.obj.GetName() {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), d.obj.GetName(), "field is immutable"))
	}
	if oldObj.GetNamespace() != d.obj.GetNamespace() {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), d.obj.GetNamespace(), "field is immutable"))
	}

	correlated := common.NewCorrelatedObject(d.obj.Object, oldObj.Object, &model.Structural{Structural: d.kind.structural})
	errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, d.obj.UnstructuredContent(), oldObj.UnstructuredContent(), d.kind.schemaValidator, apiservervalidation.WithRatcheting(correlated))...)
	if oldListErrs := structurallisttype.ValidateListSetsAndMaps(nil, d.kind.structural, oldObj.Object); len(oldListErrs) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, d.kind.structural, d.obj.Object)...)
	}
	errs = append(errs, d.kind.runCEL(ctx, errs, d.obj, oldObj, correlated)...)
	return d.obj, errs
}

// runCEL evaluates the CEL rules unless the errors found so far block them, as the API server does.
func (kv *kindValidator) runCEL(ctx context.Context, errsSoFar field.ErrorList, obj, oldObj *unstructured.Unstructured, correlated *common.CorrelatedObject) field.ErrorList {
	if isBlocked(errsSoFar) {
		return field.ErrorList{field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")}
	}

	var old interface{}
	var opts []cel.Option
	if oldObj != nil {
		old = oldObj.Object
		opts = append(opts, cel.WithRatcheting(correlated))
	}
	errs, _ := kv.celValidator.Validate(ctx, nil, kv.structural, obj.Object, old, celconfig.RuntimeCELCostBudget, opts...)
	return errs
}

// isBlocked mirrors kube-apiserver's rule for skipping CEL rules after schema errors.
func isBlocked(errs field.ErrorList) bool {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

func validateMetadata(kv *kindValidator, obj *unstructured.Unstructured) field.ErrorList {
	return apimachineryvalidation.ValidateObjectMetaAccessor(obj, kv.namespaced, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
}

// decodeStrict decodes YAML into a Go object, failing on unknown and duplicate fields.
func decodeStrict(doc []byte, into interface{}) error {
	data, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strictErrs, err := sigsjson.UnmarshalStrict(data, into)
	if err != nil {
		return err
	}
	return errors.Join(strictErrs...)
}

// SplitDocuments splits a multi-document YAML stream on "---" lines, dropping documents that hold only comments
// or whitespace.
func SplitDocuments(data []byte) ([][]byte, error) {
	var docs [][]byte
	var current bytes.Buffer
	flush := func() {
		if hasContent(current.Bytes()) {
			docs = append(docs, bytes.Clone(current.Bytes()))
		}
		current.Reset()
	}
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		trimmed := bytes.TrimRight(line, " \t\r\n")
		if bytes.Equal(trimmed, []byte("---")) {
			flush()
			continue
		}
		current.Write(line)
	}
	flush()
	if len(docs) == 0 {
		return nil, errors.New("no YAML documents found")
	}
	return docs, nil
}

func hasContent(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) != 0 && trimmed[0] != '#' {
			return true
		}
	}
	return false
}
