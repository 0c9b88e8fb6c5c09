// Package nodesim simulates the ScyllaDB nodes of a local control plane: for every ScyllaDB Pod
// (scylla-operator.scylladb.com/pod-type=scylladb-node) that kwok runs on one of its nodes, it runs the real sidecar,
// built from the working tree, as a local process, with the fake ScyllaDB (e2e/cmd/fake-scylladb) as its ScyllaDB,
// and reflects the sidecar's /readyz into the Pod's Ready condition. It plays the part of the kubelet for the scylla
// container and nothing else; kwok (hack/kwok/stages.yaml) marks these Pods Running but leaves the container with a
// readiness probe unready.
//
// # What a Pod's container becomes
//
// The scylla container's command and args, with $(VAR) references expanded from the container's environment
// (literal values, downward API fields, ConfigMap and Secret keys, envFrom), are run with the built scylla-operator
// binary in place of the image's, and with these flags appended (the last occurrence of a flag wins):
//
//	--kubeconfig                   a kubeconfig with a token of the Pod's ServiceAccount, bound to the Pod
//	                               (Identity ServiceAccount, the default), or the admin kubeconfig (Identity Admin)
//	--probes-address               127.0.0.1:<free port> instead of the Pod's :8080
//	--scylladb-api-address         127.0.0.1:<free port>
//	--scylladb-entrypoint          the built fake-scylladb
//	--scylladb-config-dir, --scylladb-base-config-path, --scylladb-custom-config-path, --scylladb-data-dir
//	                               the container paths mapped onto the host (see below)
//
// The process gets the container's environment and the fake's: FAKE_SCYLLADB_REGISTRY_URL (the simulator's ring
// registry), FAKE_SCYLLADB_RESOLVER_URL (the simulator's cluster DNS, for the Pod's namespace),
// FAKE_SCYLLADB_RECORD_PATH (the Pod's record file) and FAKE_SCYLLADB_ALIAS_ADDRESSES (the Pod IPs, the member
// Service's ClusterIP and LoadBalancer ingress IPs: where kube-proxy and the Pod network would make the node
// reachable), plus whatever Options.FakeEnv adds. Nothing of the simulator's own environment is passed on except
// PATH.
//
// # Ring registry and cluster DNS
//
// The simulator serves, on one loopback listener (RegistryURL), the ring registry at / and a resolver standing in
// for cluster DNS at /fake/dns/<namespace> (ResolverURL): GET /fake/dns/<namespace>?name=<name> answers
// {"addresses": [...]} for a name as a Pod in that namespace resolves it, or 404. The fake ScyllaDB resolves its
// seeds that aren't IP addresses through it right before joining, and leaves out those that don't resolve; with
// none left it exits 1 and is restarted with back-off, so it joins once the name resolves. Names are resolved at
// request time from Services and EndpointSlices read through the simulator's client, with cluster domain
// cluster.local and the search path <namespace>.svc.cluster.local, svc.cluster.local, cluster.local: <svc>,
// <svc>.<ns>, <svc>.<ns>.svc and <svc>.<ns>.svc.cluster.local (the last also with a trailing dot, which makes a
// name absolute: "<svc>.<ns>.svc." doesn't resolve, as with a real resolver). A headless Service resolves to the
// addresses of the ready endpoints of its IPv4 and IPv6 EndpointSlices (label kubernetes.io/service-name; an
// endpoint whose ready condition is unset counts as ready), any other Service to its cluster IPs, an ExternalName
// Service to its externalName if that is an IP address, or else to what that name resolves to as an absolute
// name (<svc>.<ns>.svc.cluster.local). Pod records and names outside the cluster don't resolve.
//
// By default each simulator has a registry of its own. Simulators given one Options.Registry (several control
// planes standing for the Kubernetes clusters of one multi-datacenter ScyllaDB cluster) let their nodes join one
// ring; each still resolves names in its own cluster only. The registry knows nodes by address, so those control
// planes need Pod, Service and LoadBalancer ranges that don't overlap.
//
// # Files
//
// Options.Dir holds pods/<namespace>/<name>-<uid>/ per Pod (rootfs/ for the container's own files, recreated at each
// container start with the image's /etc/scylla/scylla.yaml; volumes/ for emptyDir, ConfigMap and Secret volumes;
// container.log with the sidecar's and the fake's output; records.json, the fake's record of every start) and
// claims/<uid>/ per PersistentVolumeClaim, so a node's data (its host ID, the decommission marker) follows its claim:
// a Pod recreated with the same claim is the same node, a new claim makes a fresh node. Container paths on a volume
// map into that volume's directory, other paths into rootfs.
//
// # Lifecycle
//
// The container starts once the Pod is Running with an IP on a kwok node and its member Service exists (so that
// its addresses can be known to the fake). When the sidecar exits, it is restarted with a doubling back-off and the
// restart is counted in the container status. When the Pod is deleted (or replaced by one with another UID), the
// sidecar gets SIGTERM and the process group is killed after the grace period. Readiness is probed every
// Options.ProbeInterval.
//
// Not simulated: liveness and startup probes, service link environment variables, resourceFieldRef, volume kinds
// other than PersistentVolumeClaim, emptyDir, ConfigMap and Secret.
package nodesim
