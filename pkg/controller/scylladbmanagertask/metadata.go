package scylladbmanagertask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
)

// makeMetadataPatch returns the JSON merge patch that gives task what the controller keeps in its metadata about the
// task ScyllaDB Manager holds, or is about to hold, for it: naming.ScyllaDBManagerTaskFinalizer, the record of the
// cluster clusterID the task lives in (naming.ScyllaDBManagerTaskClusterIDAnnotation) and, unless statusAnnotation
// is nil, ScyllaDB Manager's view of the task (naming.ScyllaDBManagerTaskStatusAnnotation). It sets only what task
// lacks, and returns nil when it lacks nothing. Annotations merge key by key, leaving the others alone; the
// finalizers list is replaced whole, so a patch that adds the finalizer carries task's resourceVersion, which makes
// it fail with a Conflict on a task changed since it was read rather than drop a finalizer someone else added. The
// UID makes the patch fail rather than land on another object recreated under the same name.
func makeMetadataPatch(task *scyllav1alpha1.ScyllaDBManagerTask, clusterID string, statusAnnotation *string) ([]byte, error) {
	annotations := map[string]string{}
	if current, ok := task.Annotations[naming.ScyllaDBManagerTaskClusterIDAnnotation]; !ok || current != clusterID {
		annotations[naming.ScyllaDBManagerTaskClusterIDAnnotation] = clusterID
	}
	if statusAnnotation != nil {
		if current, ok := task.Annotations[naming.ScyllaDBManagerTaskStatusAnnotation]; !ok || current != *statusAnnotation {
			annotations[naming.ScyllaDBManagerTaskStatusAnnotation] = *statusAnnotation
		}
	}
	addFinalizer := !controllerhelpers.HasFinalizer(task, naming.ScyllaDBManagerTaskFinalizer)
	if len(annotations) == 0 && !addFinalizer {
		return nil, nil
	}

	if len(clusterID) == 0 {
		return nil, errors.New("can't record an empty ScyllaDB Manager cluster ID")
	}
	if len(task.UID) == 0 {
		return nil, errors.New("the object has no UID to patch against")
	}
	metadata := map[string]any{"uid": task.UID}
	if len(annotations) != 0 {
		metadata["annotations"] = annotations
	}
	if addFinalizer {
		if len(task.ResourceVersion) == 0 {
			return nil, errors.New("the object has no resourceVersion to patch its finalizers against")
		}
		metadata["resourceVersion"] = task.ResourceVersion
		metadata["finalizers"] = append(slices.Clone(task.Finalizers), naming.ScyllaDBManagerTaskFinalizer)
	}
	return json.Marshal(map[string]any{"metadata": metadata})
}

// updateMetadata gives task, with one patch (makeMetadataPatch), what it lacks of the finalizer, the record of cluster
// clusterID and, when item is set, the status annotation describing item, task's task as ScyllaDB Manager holds it.
// It returns the patched object, or task when it lacked nothing. A status annotation that can't be made is reported,
// and the rest still written.
func (c *Controller) updateMetadata(ctx context.Context, task *scyllav1alpha1.ScyllaDBManagerTask, clusterID string, item *managerclient.TaskListItem) (*scyllav1alpha1.ScyllaDBManagerTask, error) {
	var statusAnnotation *string
	var annotationErr error
	if item != nil {
		value, err := makeStatusAnnotation(item)
		if err != nil {
			annotationErr = fmt.Errorf("can't make status annotation of ScyllaDBManagerTask %q: %w", klog.KObj(task), err)
		} else {
			statusAnnotation = &value
		}
	}

	patch, err := makeMetadataPatch(task, clusterID, statusAnnotation)
	if err != nil {
		return nil, utilerrors.NewAggregate([]error{annotationErr, fmt.Errorf("can't make the metadata patch of ScyllaDBManagerTask %q: %w", klog.KObj(task), err)})
	}
	if patch == nil {
		return task, annotationErr
	}
	patched, err := c.taskPatcher(task.Namespace).Patch(ctx, task.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: naming.ManagerControllerFieldManager})
	if err != nil {
		return nil, utilerrors.NewAggregate([]error{annotationErr, fmt.Errorf("can't patch the metadata of ScyllaDBManagerTask %q: %w", klog.KObj(task), err)})
	}
	klog.FromContext(ctx).V(2).Info("Patched the metadata of the ScyllaDB Manager task", "scyllaDBManagerTask", klog.KObj(task), "clusterID", clusterID, "statusAnnotation", statusAnnotation != nil)
	return patched, annotationErr
}
