// Package sidecar is the program that runs as the ScyllaDB container's entrypoint ("scylla-operator sidecar").
//
// At start it reads its Pod and member Service, derives the node's addresses (expose-options.md) and seeds
// (external-seeds.md), writes ScyllaDB's configuration and runs ScyllaDB as its child, forwarding signals and exiting
// with ScyllaDB's status. While ScyllaDB runs it serves the probes, records the node's host ID on the member Service
// and decommissions the node when the member Service asks for it. A node that replaces another is started with the
// replaced node's host ID, which the member Service names.
//
// # Flag contract
//
// The operator passes everything as flags. Every flag can instead be set through the environment variable
// SCYLLA_OPERATOR_<NAME>, the flag name upper-cased with dashes as underscores (--pod-name: SCYLLA_OPERATOR_POD_NAME);
// a flag given on the command line wins. Validate rejects every bad value with an error naming the flag.
//
// Identity, from the downward API:
//
//	--pod-namespace          SCYLLA_OPERATOR_POD_NAMESPACE          metadata.namespace; required
//	--pod-name               SCYLLA_OPERATOR_POD_NAME               metadata.name; required
//	--member-service-name    SCYLLA_OPERATOR_MEMBER_SERVICE_NAME    the node's member Service, named like the Pod: must equal --pod-name; required
//
// Cluster:
//
//	--cluster-name           SCYLLA_OPERATOR_CLUSTER_NAME           cluster_name, equal in every datacenter; required
//	--datacenter             SCYLLA_OPERATOR_DATACENTER             dc in cassandra-rackdc.properties; required
//	--rack                   SCYLLA_OPERATOR_RACK                   rack in cassandra-rackdc.properties; required
//	--external-seeds         SCYLLA_OPERATOR_EXTERNAL_SEEDS         spec.externalSeeds: IPs or DNS names, comma-separated
//	                                                                or repeated; order kept; each must pass ValidateSeed,
//	                                                                which the operator uses to refuse bad ones early
//
// Addresses (exposeOptions; defaults are the API's):
//
//	--broadcast-nodes-type                    broadcast_address: PodIP | ServiceClusterIP (default) |
//	                                          ServiceLoadBalancerIngressIP (alias ServiceLoadBalancerIngress)
//	--broadcast-nodes-pod-ip-source           with PodIP: Status (default, status.podIPs) | Interface
//	--broadcast-nodes-pod-ip-interface-name   with source Interface: the interface (required then, refused otherwise)
//	--broadcast-clients-type                  broadcast_rpc_address: as --broadcast-nodes-type
//	--broadcast-clients-pod-ip-source         as above
//	--broadcast-clients-pod-ip-interface-name as above
//	--listen-nodes-type                       listen_address: Any (default, 0.0.0.0 or ::) | PodIP
//	--listen-nodes-pod-ip-source              as above
//	--listen-nodes-pod-ip-interface-name      as above
//	--listen-clients-type                     rpc_address: Any (default) | PodIP
//	--listen-clients-pod-ip-source            as above
//	--listen-clients-pod-ip-interface-name    as above
//	--ip-family                               IPv4 (default) | IPv6: the family of every address
//	--host-networking                         the Pod uses the host network; --broadcast-nodes-type must be PodIP
//
// (environment variables: SCYLLA_OPERATOR_BROADCAST_NODES_TYPE, SCYLLA_OPERATOR_BROADCAST_NODES_POD_IP_SOURCE, and
// so on for each flag.) The Pod-IP source and interface flags are refused for a type other than PodIP.
// ServiceLoadBalancerIngressIP takes the first status.loadBalancer.ingress[].ip of the family and never a hostname:
// a load balancer with no ingress yet, or with hostnames only (AWS ELB/NLB), is waited for up to --startup-timeout,
// logging why; then the sidecar exits with an error naming the field, and the kubelet restarts it with back-off.
//
// ScyllaDB:
//
//	--cpu-count                    SCYLLA_OPERATOR_CPU_COUNT                    --smp; 0 (default) leaves it to ScyllaDB
//	--developer-mode               SCYLLA_OPERATOR_DEVELOPER_MODE               --developer-mode=1 (default false: 0)
//	--scylladb-extra-args          SCYLLA_OPERATOR_SCYLLADB_EXTRA_ARGS          spec.scyllaArgs, split like a shell would
//	--scylladb-entrypoint          SCYLLA_OPERATOR_SCYLLADB_ENTRYPOINT          default /docker-entrypoint.py (the image's)
//	--scylladb-config-dir          SCYLLA_OPERATOR_SCYLLADB_CONFIG_DIR          where scylla.yaml and
//	                                                                            cassandra-rackdc.properties are written;
//	                                                                            ScyllaDB gets SCYLLA_CONF=<dir>;
//	                                                                            default /etc/scylla
//	--scylladb-base-config-path    SCYLLA_OPERATOR_SCYLLADB_BASE_CONFIG_PATH    the image's scylla.yaml, read first;
//	                                                                            default /etc/scylla/scylla.yaml; empty: none
//	--scylladb-custom-config-path  SCYLLA_OPERATOR_SCYLLADB_CUSTOM_CONFIG_PATH  the user's scylla.yaml (spec scyllaConfig
//	                                                                            ConfigMap); empty (default): none; a set
//	                                                                            path must exist
//	--scylladb-data-dir            SCYLLA_OPERATOR_SCYLLADB_DATA_DIR            workdir, on the persistent volume; holds
//	                                                                            the decommission marker; default
//	                                                                            /var/lib/scylla
//	--scylladb-api-address         SCYLLA_OPERATOR_SCYLLADB_API_ADDRESS         host:port of the REST API, set as
//	                                                                            api_address/api_port; default
//	                                                                            localhost:10000
//
// Sidecar:
//
//	--probes-address    SCYLLA_OPERATOR_PROBES_ADDRESS    host:port of /healthz and /readyz (port 1-65535); default :8080
//	--profiling         SCYLLA_OPERATOR_PROFILING         also serve net/http/pprof's profiles under /debug/pprof/
//	                                                      on --probes-address; default false: that address is on
//	                                                      the Pod IP, and the profiles expose the sidecar's memory
//	                                                      and command line; the operator never sets it
//	--startup-timeout   SCYLLA_OPERATOR_STARTUP_TIMEOUT   bound on each wait at start: for a Pod IP, a LoadBalancer
//	                                                      ingress IP, another node's address, the member Service's
//	                                                      first list, the broadcast address record; default 10m
//	--kubeconfig, --qps, --burst                          Kubernetes client; no kubeconfig: in-cluster
//
// TLS (each certificate with its key; absolute paths; none set: no TLS; the scylla.yaml keys of each endpoint served
// over TLS are then the sidecar's, those of the other endpoint stay the user's):
//
//	--cql-tls-certificate-file, --cql-tls-key-file               CQL over TLS on 9142 (shard-aware 19142), next
//	                                                             to the plain ports: client_encryption_options
//	--cql-tls-client-ca-file                                     CAs client certificates must chain to; clients
//	                                                             over TLS must present one (require_client_auth)
//	--alternator-tls-certificate-file, --alternator-tls-key-file Alternator over HTTPS on 8043:
//	                                                             alternator_https_port, alternator_encryption_options
//
// # What the operator must provide
//
// The member Service carries scylla/cluster and scylla/datacenter labels; the datacenter's member Services carry the
// same two plus scylla-operator.scylladb.com/scylla-service-type=member, and its Pods the same two, Pod name =
// Service name. The sidecar's ServiceAccount may get and list Pods and Services in its namespace, watch Services, and
// patch Services. Host networking needs a headless member Service and --broadcast-nodes-type=PodIP
// (multi-dc-early.md). Probes: startup and liveness on /healthz (the REST API answers), readiness on /readyz. The
// sidecar writes the annotations internal.scylla-operator.scylladb.com/host-id, .../broadcast-address and
// .../broadcast-address-pod-uid (pkg/naming) on its member Service; the operator must keep them when it applies
// the Service and never set them itself. Every node of a datacenter gets the same address flags.
//
// # ScyllaDB's configuration
//
// scylla.yaml is the base config, then the custom config's top-level keys over it, then the keys the sidecar owns:
// cluster_name, endpoint_snitch (GossipingPropertyFileSnitch), listen_address, rpc_address, broadcast_address,
// broadcast_rpc_address, seed_provider, api_address, api_port, workdir, enable_ipv6_dns_lookup; listen_interface,
// rpc_interface and their *_prefer_ipv6 are owned too, so they are never set, and so are the replace options
// replace_node_first_boot, replace_address_first_boot and replace_address (a node is replaced through its member
// Service, below; in the datacenter's shared config they would apply to every new node's first boot). A custom or
// base config key the sidecar owns is left out; a custom one is logged. With --ip-family=IPv6, alternator_address
// (where Alternator serves HTTP and HTTPS) is :: unless the custom config sets it: ScyllaDB's default, 0.0.0.0,
// listens on IPv4 only, which an IPv6 Pod can't be reached on. ScyllaDB is run as
//
//	<entrypoint> --listen-address=L --rpc-address=R --broadcast-address=B --broadcast-rpc-address=BR --seeds=S1,S2
//	  --api-address=H --api-port=P --developer-mode=0|1 [--smp=N] [--replace-node-first-boot=HOSTID] <extra args>
//
// where extra arguments naming an owned option (any of the above, the owned keys in dashed form, --seed-provider-
// parameters, --options-file; --smp when --cpu-count is set; the TLS keys of each endpoint served over TLS, though
// the plain --native-transport-port and --native-shard-aware-transport-port stay the user's), as --name=value or
// --name value, with dashes or underscores, abbreviated to any prefix of the name (the image entrypoint's argparse
// and ScyllaDB's option parser accept unambiguous abbreviations), or as the short -c (--smp) or -W (--workdir) with
// the value attached or next, are dropped and logged. The log of ScyllaDB's arguments shows REDACTED for the value of any option whose name
// contains pass (password, passwd), secret, token, credential or key.
//
// # Seeds
//
// The datacenter's member Services are ordered: those whose Pod is Ready first, then by creation time, then by name;
// other nodes' Services carrying scylla/decommissioned are left out. A node whose Service carries
// scylla/node-maintenance counts as not Ready here, whatever its Pod says: it reports ready even with ScyllaDB
// stopped, and the operator may add a node meanwhile, which must not seed from it. The first is the first node: it seeds from
// --external-seeds alone when given, else from its own broadcast_address. Every other node seeds from the external
// seeds plus one local seed: the earliest Ready node with an address, or, while no node is Ready, the first node.
// A node's address is the broadcast_address its sidecar recorded on its Service (below) if its current Pod recorded
// it, else its Service's ClusterIP, or for a headless Service its Pod's IP. (expose-options.md seeds from the
// ClusterIP first; the recorded address is preferred because it is the only right one when the address comes from
// an interface, and it equals the ClusterIP when that is what nodes broadcast.) A later node never seeds from
// an unready node other than the first, and when the node it must seed from has no address yet it waits (up to
// --startup-timeout) instead of picking another: two unready nodes seeding from each other would form a second ring.
// Every node computes the same order, so one node at most seeds from itself while bootstrapping.
//
// A node that has joined the ring doesn't wait for another node's address: it needs no seed to rejoin its ring
// (external-seeds.md), and after a full outage the first node's Pod may never get an IP (its Kubernetes node is gone,
// it is Pending, its volume can't attach), which with Pod IP addresses (broadcast type PodIP, or a headless member
// Service) would keep every other node down. The sidecar writes the marker file scylla-operator-joined, holding the
// node's host ID, in --scylladb-data-dir (and flushes it) the first time /readyz finds the node with its host ID Up
// and Normal in the ring and ScyllaDB's operation mode NORMAL (not in maintenance, when nothing is asked; never
// merely because ScyllaDB started: a node whose bootstrap failed half-way must not seed from itself, or it could
// found a second ring; and not from the ring alone, which lists a new node Up and Normal while it still waits for
// ring information, its mode JOINING). A marker that can't be
// written is logged and written at the next readiness check; readiness never fails because of it. At start, when
// the usual choice would wait and the marker is there, the node seeds from the external seeds plus its own
// broadcast_address instead, and logs what it would have waited for. When the usual choice succeeds, it is kept. A
// marker that can't be read, or doesn't hold a host ID (a write cut short), is logged and read as not joined. A fresh
// volume has no marker; a node started with the replacing-node-hostid label (below) ignores and removes it.
//
// Before starting ScyllaDB, the sidecar records its broadcast_address in the member Service annotation
// internal.scylla-operator.scylladb.com/broadcast-address and its Pod's UID in .../broadcast-address-pod-uid (the
// record of an earlier Pod of the node is ignored: a new Pod may have a new address), waiting up to
// --startup-timeout for the write, and keeps both in step while it runs. It watches the member Service for that and
// from then on (a decommissioned node too, before it waits to be stopped); when the first list doesn't succeed
// within --startup-timeout (RBAC refuses the list or watch, the API server is out of reach), the sidecar exits with
// an error naming the Service and the last error the list or watch got, and the kubelet restarts it with back-off.
//
// The addresses are computed once, at start. While ScyllaDB runs, every change of the member Service is checked:
// when the Service gives a broadcast address (ServiceClusterIP or ServiceLoadBalancerIngressIP) other than the one
// ScyllaDB runs with, because the Service was recreated or the load balancer got a new IP, /readyz fails with a
// message naming the setting and both addresses, the sidecar stops ScyllaDB (SIGTERM) and exits with an error (code
// 1), and the kubelet restarts the container, which computes the addresses anew. A Service that can't give the
// address at the moment (a load balancer without ingress) is no change. While the member Service has the
// scylla/node-maintenance label the restart waits for the label to go.
//
// # Probes, host ID and decommission
//
// /readyz passes when the REST API reports the node with the local host ID Up and Normal and native transport is on;
// /healthz passes when the REST API answers. Both pass while the member Service has the scylla/node-maintenance
// label. The host ID is recorded in the member Service annotation internal.scylla-operator.scylladb.com/host-id.
// When the member Service has scylla/decommissioned="false", the node is decommissioned through the REST API:
// first the marker file scylla-operator-decommissioning is written (and flushed) in --scylladb-data-dir, then
// decommission is called; a failed call is made again after 5s, doubling with each failure in a row up to 5m. Once
// ScyllaDB reports DECOMMISSIONED, the marker scylla-operator-decommissioned is written and the label is set to
// "true". A sidecar that finds scylla-operator-decommissioned at start doesn't start ScyllaDB (it would refuse): it
// sets the label if needed and waits to be stopped, /readyz failing and /healthz passing.
//
// If the container restarts after the decommission call and before that marker, ScyllaDB is started as usual to
// learn the outcome. A decommission that didn't finish leaves a node ScyllaDB starts normally, and the sidecar
// decommissions it again. A finished one makes ScyllaDB refuse to start, writing "...was decommissioned and will not
// rejoin the ring..." (DecommissionRefusal). The rule: when ScyllaDB's output says so while
// scylla-operator-decommissioning is on the volume and the member Service still has scylla/decommissioned="false",
// the decommission is complete: the sidecar stops ScyllaDB, writes scylla-operator-decommissioned, sets the label
// to "true" and waits to be stopped as above. Without that marker, or without the label, the refusal is only
// ScyllaDB failing to start (the sidecar exits with its code; a human must look).
//
// # Node replacement
//
// The operator replaces a node whose data is gone by labelling its member Service
// internal.scylla-operator.scylladb.com/replacing-node-hostid=<host ID of the lost node> and deleting the node's
// volume claim and Pod. At start, before ScyllaDB, the sidecar reads that label from the member Service: a non-empty
// value is passed, lower-cased, as --replace-node-first-boot, and the joined marker (Seeds) is ignored and removed:
// the node joins the ring anew, through a live node, and is recorded as joined once it is Up and Normal under its
// new host ID. ScyllaDB honours the option on the node's first boot
// only (no identity in its data directory yet). A container restart while the label is still set passes it again:
// a node that finished the replacement ignores it and keeps its host ID, one restarted while still bootstrapping
// resumes the replacement under the same host ID; the data directory decides, not the sidecar. A value that is not
// a host ID (a UUID in its 8-4-4-4-12 form, not the nil UUID) is refused at once: the sidecar exits with an error
// naming the Service, the label and the value, without starting ScyllaDB, and the kubelet restarts it with back-off
// until the label is fixed or removed. A missing or empty label, or scylla/replace alone, starts the node as usual.
//
// The host ID annotation is written whenever ScyllaDB reports a host ID other than the recorded one, so a replacing
// node records its new host ID over the lost node's as soon as its REST API answers, while it still bootstraps; a
// value that is not a host ID (the nil UUID a starting node may report) is never recorded. /readyz follows the node's
// own host ID: a replacing node is not ready while it is Joining, whatever the ring says of the lost node at the same
// address, and is ready once Up and Normal. The operator takes the new annotation and a Ready Pod as the end of the
// replacement and removes both labels.
//
// # Exit
//
// The sidecar exits with ScyllaDB's exit code (128+signal when killed by a signal), or 1 when it stopped ScyllaDB
// to restart for a new address. It exits once the process it started (--scylladb-entrypoint) has exited, reading
// the output that process's descendants still write for at most 5s more: daemons the entrypoint started and left
// behind don't keep the sidecar, and so the container, up. Before ScyllaDB starts, SIGTERM
// or SIGINT stop the sidecar with 0; afterwards SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are forwarded.
//
// As the container's command the sidecar is PID 1 in the container (the Pod shares no process namespace), so the
// processes ScyllaDB's entrypoint starts that outlive their parent become its children. When it is PID 1, or a child
// subreaper, it reaps them: at every SIGCHLD (never forwarded), and every minute as a backstop, it waits without
// blocking for each of its zombie children (state Z and parent pid its own in /proc/<pid>/stat) except ScyllaDB's
// process, whose exit status os/exec collects for the sidecar's own exit; it doesn't look while that process is being
// started. Their zombies would otherwise pile up for the container's life. The sidecar starts no other process.
package sidecar
