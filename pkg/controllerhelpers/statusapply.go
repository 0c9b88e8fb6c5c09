package controllerhelpers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// statusSubresource is the subresource managedFields entries of status writes name.
const statusSubresource = "status"

// ApplyConfigurationFrom returns the apply configuration AC (a generated XApplyConfiguration) holding what obj, a value
// of the API type X, holds. The conversion goes through JSON, which both types share field for field, so nothing obj
// sets is lost: a count of 0 or an empty message stays in the configuration, where the API type's field is a pointer
// or has no omitempty, and is sent.
func ApplyConfigurationFrom[AC any](obj any) (*AC, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("can't encode %T: %w", obj, err)
	}
	ac := new(AC)
	if err := json.Unmarshal(data, ac); err != nil {
		return nil, fmt.Errorf("can't decode %T into %T: %w", obj, ac, err)
	}
	return ac, nil
}

// UpgradeStatusManagedFields returns the JSON patch that merges the status fields owned by the Update entries of
// earlier operator versions (naming.LegacyOperatorStatusUpdateManagers) into the operator's status apply entry
// (naming.OperatorFieldManager), and the managedFields obj has once it is applied. Without it, status fields the
// operator stops sending would outlive it, still owned by those entries. The patch is nil when obj has no such entry.
//
// The patch replaces metadata.managedFields, which only a write to the main resource may do (the API server ignores
// managedFields sent to a subresource), and carries obj's resourceVersion, so it fails with a Conflict rather than
// drop what a write after obj was read recorded.
func UpgradeStatusManagedFields(obj runtime.Object) ([]byte, []metav1.ManagedFieldsEntry, error) {
	accessor, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil, fmt.Errorf("can't read the managedFields of %T", obj)
	}
	legacy := sets.New(naming.LegacyOperatorStatusUpdateManagers()...)
	// The common case, checked without csaupgrade, which decodes and encodes the apply entry's fields every time.
	if !slices.ContainsFunc(accessor.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool {
		return e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == statusSubresource && legacy.Has(e.Manager)
	}) {
		return nil, nil, nil
	}
	subresource := csaupgrade.Subresource(statusSubresource)
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(obj, legacy, naming.OperatorFieldManager, subresource)
	if err != nil || patch == nil {
		return nil, nil, err
	}
	upgraded := obj.DeepCopyObject()
	if err := csaupgrade.UpgradeManagedFields(upgraded, legacy, naming.OperatorFieldManager, subresource); err != nil {
		return nil, nil, err
	}
	return patch, upgraded.(metav1.Object).GetManagedFields(), nil
}

// AppliedStatusConditionTypes returns the types of the status conditions manager owns through its status apply entry
// in managedFields: those it sent in its last apply (conditions being a list keyed by type). An entry that can't be
// decoded owns none.
func AppliedStatusConditionTypes(managedFields []metav1.ManagedFieldsEntry, manager string) sets.Set[string] {
	types := sets.New[string]()
	for _, entry := range managedFields {
		if entry.Manager != manager || entry.Operation != metav1.ManagedFieldsOperationApply ||
			entry.Subresource != statusSubresource || entry.FieldsV1 == nil {
			continue
		}
		fields := &fieldpath.Set{}
		if err := fields.FromJSON(bytes.NewReader(entry.FieldsV1.Raw)); err != nil {
			continue
		}
		fields.Iterate(func(p fieldpath.Path) {
			if len(p) < 3 || !isField(p[0], "status") || !isField(p[1], "conditions") || p[2].Key == nil {
				return
			}
			for _, key := range *p[2].Key {
				if key.Name == "type" && key.Value.IsString() {
					types.Insert(key.Value.AsString())
				}
			}
		})
	}
	return types
}

func isField(pe fieldpath.PathElement, name string) bool {
	return pe.FieldName != nil && *pe.FieldName == name
}

// ConditionApplyConfigurations returns the apply configurations of conditions, every field set, for a server-side
// apply of a status's conditions (a list keyed by type).
func ConditionApplyConfigurations(conditions []metav1.Condition) []*metav1apply.ConditionApplyConfiguration {
	out := make([]*metav1apply.ConditionApplyConfiguration, 0, len(conditions))
	for _, c := range conditions {
		out = append(out, metav1apply.Condition().
			WithType(c.Type).
			WithStatus(c.Status).
			WithObservedGeneration(c.ObservedGeneration).
			WithLastTransitionTime(c.LastTransitionTime).
			WithReason(c.Reason).
			WithMessage(c.Message))
	}
	return out
}
