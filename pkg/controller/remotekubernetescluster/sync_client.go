package remotekubernetescluster

import (
	"context"
	"fmt"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/metrics"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/remoteclient"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// invalidSecretRefReason: spec.kubeconfigSecretRef lacks a name or a namespace (which the CRD rejects).
const invalidSecretRefReason = "InvalidSecretReference"

// clientResult is what syncClient found: the conditions of the kubeconfig and the health check, when to sync
// again, and the error that should be retried with back-off.
type clientResult struct {
	conditions   []metav1.Condition
	requeueAfter time.Duration
	err          error
}

// kubeconfigProblem is why a kubeconfig Secret yields no client; it holds until the Secret or the spec changes.
type kubeconfigProblem struct {
	reason  string
	message string
}

// syncClient makes the pool's client of rkc the one its kubeconfig Secret describes, and health-checks it when the
// last check is a probe period old or the client is new:
//   - a missing Secret, key or unusable kubeconfig stops the client, whose credentials may have been revoked, and
//     is reported (KubeconfigDegraded); the Secret is read again a probe period later. A RemoteKubernetesCluster
//     being deleted keeps its client, which the ScyllaDBClusters still using it need;
//   - a failed read of the Secret keeps the client and its health check, and is retried with back-off;
//   - a kubeconfig that changed (another hash) rebuilds the client and its informers.
func (c *Controller) syncClient(ctx context.Context, rkc *scyllav1alpha1.RemoteKubernetesCluster) clientResult {
	name := rkc.Name
	period := probePeriod(rkc)
	newCondition := func(condType string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: condType, Status: status, Reason: reason, Message: message, ObservedGeneration: rkc.Generation}
	}

	result := clientResult{}
	kubeconfigCondition := newCondition(kubeconfigDegradedCondition, metav1.ConditionFalse, controllerhelpers.AsExpectedReason, "")
	kubeconfig, problem, err := c.getKubeconfig(ctx, rkc.Spec.KubeconfigSecretRef)
	if err == nil && problem == nil {
		built, buildErr := c.pool.Update(name, kubeconfig)
		switch {
		case buildErr != nil:
			problem = &kubeconfigProblem{
				reason:  invalidKubeconfigReason,
				message: fmt.Sprintf("can't build a client from key %q of Secret %q: %v", naming.KubeconfigSecretKey, secretRefString(rkc.Spec.KubeconfigSecretRef), buildErr),
			}
		case built:
			c.eventRecorder.Eventf(rkc, corev1.EventTypeNormal, clientBuiltReason, "Built the client of the remote cluster from key %q of Secret %q", naming.KubeconfigSecretKey, secretRefString(rkc.Spec.KubeconfigSecretRef))
		}
	}
	_, hasClient := c.pool.Get(name)
	switch {
	case problem != nil && rkc.DeletionTimestamp != nil && hasClient:
		// Being deleted, the RemoteKubernetesCluster keeps its client as long as ScyllaDBClusters use it (sync stops it
		// with the finalizer's removal): they need it to remove what they created in the remote cluster, and the
		// Secret often goes with the RemoteKubernetesCluster (kubectl delete -f). The client is still checked.
		kubeconfigCondition = newCondition(kubeconfigDegradedCondition, metav1.ConditionTrue, problem.reason, problem.message)
	case problem != nil:
		if c.pool.Delete(name) {
			klog.FromContext(ctx).V(2).Info("Stopped the remote client: its kubeconfig is not usable", "reason", problem.reason)
		}
		metrics.SetRemoteKubernetesClusterUnusable(name)
		result.conditions = []metav1.Condition{
			newCondition(kubeconfigDegradedCondition, metav1.ConditionTrue, problem.reason, problem.message),
			newCondition(clientHealthcheckAvailableCondition, metav1.ConditionFalse, noUsableKubeconfigReason, "there is no client to check until the kubeconfig is usable (see KubeconfigDegraded)"),
			newCondition(clientHealthcheckDegradedCondition, metav1.ConditionFalse, controllerhelpers.AsExpectedReason, ""),
		}
		result.requeueAfter = period
		return result
	case err != nil:
		// The local API server failed, not the kubeconfig: the client, if any, is kept and checked.
		kubeconfigCondition = newCondition(kubeconfigDegradedCondition, metav1.ConditionTrue, secretErrorReason, err.Error())
		result.err = err
	}

	cluster, ok := c.pool.Get(name)
	if !ok {
		result.conditions = []metav1.Condition{
			kubeconfigCondition,
			newCondition(clientHealthcheckAvailableCondition, metav1.ConditionUnknown, secretErrorReason, "the kubeconfig Secret could not be read yet (see KubeconfigDegraded)"),
			newCondition(clientHealthcheckDegradedCondition, metav1.ConditionFalse, controllerhelpers.AsExpectedReason, ""),
		}
		return result
	}

	last, probed := cluster.LastProbe()
	if !probed || c.now().Sub(last.Time) >= period {
		probeCtx, cancel := context.WithTimeout(ctx, c.probeTimeout)
		last = cluster.Probe(probeCtx)
		cancel()
		metrics.ObserveRemoteKubernetesClusterProbe(name, last.Err == nil, last.Duration)
		klog.FromContext(ctx).V(4).Info("Probed the remote API server", "duration", last.Duration, "healthy", last.Err == nil)
	}
	result.requeueAfter = last.Time.Add(period).Sub(c.now())
	if result.requeueAfter <= 0 {
		result.requeueAfter = period
	}

	available := newCondition(clientHealthcheckAvailableCondition, metav1.ConditionTrue, controllerhelpers.AsExpectedReason, "")
	degraded := newCondition(clientHealthcheckDegradedCondition, metav1.ConditionFalse, controllerhelpers.AsExpectedReason, "")
	if last.Err != nil {
		message := fmt.Sprintf("can't reach the remote API server with the kubeconfig of Secret %q: %v", secretRefString(rkc.Spec.KubeconfigSecretRef), last.Err)
		available = newCondition(clientHealthcheckAvailableCondition, metav1.ConditionFalse, probeFailedReason, message)
		degraded = newCondition(clientHealthcheckDegradedCondition, metav1.ConditionTrue, probeFailedReason, message)
	}
	result.conditions = []metav1.Condition{kubeconfigCondition, available, degraded}
	return result
}

// getKubeconfig reads the kubeconfig ref's Secret holds and checks it can be used (remoteclient.ParseKubeconfig). A
// Secret, key or kubeconfig that is missing or unusable is a kubeconfigProblem; a failed read is an error. Neither
// quotes the Secret's data. The Secret is read from the API server: it is the user's, in any namespace, and not in
// the operator's informer caches.
func (c *Controller) getKubeconfig(ctx context.Context, ref corev1.SecretReference) ([]byte, *kubeconfigProblem, error) {
	if len(ref.Name) == 0 || len(ref.Namespace) == 0 {
		return nil, &kubeconfigProblem{
			reason:  invalidSecretRefReason,
			message: "spec.kubeconfigSecretRef must set both the name and the namespace of the kubeconfig Secret",
		}, nil
	}
	secretRef := secretRefString(ref)
	secret, err := c.kubeClient.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, &kubeconfigProblem{
			reason:  secretNotFoundReason,
			message: fmt.Sprintf("Secret %q, the kubeconfig Secret spec.kubeconfigSecretRef names, does not exist", secretRef),
		}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("can't get Secret %q: %w", secretRef, err)
	}
	kubeconfig, ok := secret.Data[naming.KubeconfigSecretKey]
	if !ok {
		return nil, &kubeconfigProblem{
			reason:  kubeconfigKeyMissingReason,
			message: fmt.Sprintf("Secret %q has no key %q holding the kubeconfig of the remote cluster", secretRef, naming.KubeconfigSecretKey),
		}, nil
	}
	if _, err := remoteclient.ParseKubeconfig(kubeconfig); err != nil {
		return nil, &kubeconfigProblem{
			reason:  invalidKubeconfigReason,
			message: fmt.Sprintf("key %q of Secret %q does not hold a usable kubeconfig: %v", naming.KubeconfigSecretKey, secretRef, err),
		}, nil
	}
	return kubeconfig, nil, nil
}

// secretRefString is "<namespace>/<name>".
func secretRefString(ref corev1.SecretReference) string {
	return klog.KRef(ref.Namespace, ref.Name).String()
}
