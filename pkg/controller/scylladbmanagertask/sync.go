package scylladbmanagertask

import (
	"context"
	"fmt"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// sync makes ScyllaDB Manager hold the task the ScyllaDBManagerTask named by key asks for, or delete it when the
// object is being deleted, and writes ScyllaDB Manager's view of the task back into the object's status and status
// annotation.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)

	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		// Keys come from the informers; a malformed one never becomes valid.
		logger.Error(err, "Can't split key", "key", key)
		return nil
	}

	task, err := c.scyllaDBManagerTasks.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		logger.V(2).Info("ScyllaDBManagerTask is gone", "scyllaDBManagerTask", klog.KRef(namespace, name))
		c.rejections.forget(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("can't get ScyllaDBManagerTask %q: %w", key, err)
	}

	if task.DeletionTimestamp != nil {
		return c.syncDeletion(ctx, key, task)
	}

	outcome, syncErr := c.syncManagerTask(ctx, key, task)
	if outcome.task != nil {
		task = outcome.task
	}
	if outcome.metadataFailed {
		// Nothing was written to ScyllaDB Manager and nothing new is known: the retry goes on from here.
		return syncErr
	}

	var errs []error
	if syncErr != nil {
		errs = append(errs, syncErr)
	}
	if outcome.managerTask != nil {
		// ScyllaDB Manager holds the task. After its creation this writes only the status annotation; a task found
		// there without having been written (adopted, or created by a sync killed before it recorded anything) also
		// gets the finalizer and the cluster record, in the same patch.
		patched, err := c.updateMetadata(ctx, task, outcome.clusterID, outcome.managerTask)
		if err != nil {
			errs = append(errs, err)
		}
		if patched != nil {
			task = patched
		}
	}
	status := calculateStatus(task, outcome, c.now())
	c.recordDegradedTransition(task, status)
	if err := c.updateStatus(ctx, task, status); err != nil {
		errs = append(errs, err)
	}

	if outcome.requeueAfter > 0 {
		c.queue.AddAfter(key, outcome.requeueAfter)
	}
	return utilerrors.NewAggregate(errs)
}

// recordDegradedTransition records a Warning event when status, about to be written, turns the task Degraded or
// changes why it is; a failure that holds is not news.
func (c *Controller) recordDegradedTransition(task *scyllav1alpha1.ScyllaDBManagerTask, status *scyllav1alpha1.ScyllaDBManagerTaskStatus) {
	current := meta.FindStatusCondition(status.Conditions, controllerhelpers.DegradedCondition)
	if current == nil || current.Status != metav1.ConditionTrue {
		return
	}
	previous := meta.FindStatusCondition(task.Status.Conditions, controllerhelpers.DegradedCondition)
	if previous != nil && previous.Status == current.Status && previous.Reason == current.Reason && previous.Message == current.Message {
		return
	}
	c.eventRecorder.Event(task, corev1.EventTypeWarning, current.Reason, current.Message)
}

// taskPatcher returns the client that patches ScyllaDBManagerTasks in namespace; what each patch returns is what the
// next sync of the task reads until the informer catches up.
func (c *Controller) taskPatcher(namespace string) kubeinterfaces.PatcherInterface[*scyllav1alpha1.ScyllaDBManagerTask] {
	return c.scyllaDBManagerTasks.Patcher(c.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(namespace))
}
