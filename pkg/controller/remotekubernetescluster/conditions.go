package remotekubernetescluster

// Condition types of a RemoteKubernetesCluster's status. The top-level Available, Progressing and Degraded aggregate
// them (controllerhelpers.SetAggregatedConditions).
const (
	// kubeconfigDegradedCondition is True while the Secret spec.kubeconfigSecretRef names is missing, lacks the
	// kubeconfig key, holds no usable kubeconfig, or can't be read.
	kubeconfigDegradedCondition = "KubeconfigDegraded"
	// clientHealthcheckAvailableCondition is True while the last health check of the remote API server succeeded.
	clientHealthcheckAvailableCondition = "ClientHealthcheckAvailable"
	// clientHealthcheckDegradedCondition is True while the last health check of the remote API server failed.
	clientHealthcheckDegradedCondition = "ClientHealthcheckDegraded"
	// finalizerProgressingCondition is True while the RemoteKubernetesCluster is being deleted and ScyllaDBClusters
	// still use it, which keeps naming.RemoteKubernetesClusterFinalizer on it.
	finalizerProgressingCondition = "FinalizerProgressing"
)

// Condition reasons.
const (
	// secretNotFoundReason: the kubeconfig Secret does not exist.
	secretNotFoundReason = "SecretNotFound"
	// kubeconfigKeyMissingReason: the kubeconfig Secret has no naming.KubeconfigSecretKey key.
	kubeconfigKeyMissingReason = "KubeconfigKeyMissing"
	// invalidKubeconfigReason: the kubeconfig can't be parsed, is not self-contained, or no client can be built
	// from it.
	invalidKubeconfigReason = "InvalidKubeconfig"
	// secretErrorReason: reading the kubeconfig Secret failed; the sync is retried.
	secretErrorReason = "SecretError"
	// noUsableKubeconfigReason: there is no client to check, for a reason KubeconfigDegraded gives.
	noUsableKubeconfigReason = "NoUsableKubeconfig"
	// probeFailedReason: the remote API server did not answer the health check.
	probeFailedReason = "ProbeFailed"
	// inUseReason: ScyllaDBClusters still use the RemoteKubernetesCluster being deleted.
	inUseReason = "InUse"
	// waitingForRemoteCachesReason: the RemoteKubernetesCluster being deleted waits for the caches of its remote
	// cluster, which answers, to tell which ScyllaDBClusters still have namespaces there.
	waitingForRemoteCachesReason = "WaitingForRemoteCaches"
)

// Event reasons. Events never carry the kubeconfig or anything of it but its Secret's name.
const (
	clientBuiltReason = "RemoteClientBuilt"
)
