package naming

// KubeconfigSecretKey is the key, in the Secret a RemoteKubernetesCluster references (spec.kubeconfigSecretRef), of
// the kubeconfig that reaches the remote cluster (api-reference.md 2.4).
const KubeconfigSecretKey = "kubeconfig"
