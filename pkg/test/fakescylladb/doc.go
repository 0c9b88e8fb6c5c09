// Package fakescylladb is a fake ScyllaDB for tests and the local demo. The program e2e/cmd/fake-scylladb wraps it.
//
// # As a node
//
// Started with the arguments ScyllaDB's image entrypoint would get (for example by the sidecar, as its child), the
// fake:
//   - reads scylla.yaml and cassandra-rackdc.properties from $SCYLLA_CONF (default /etc/scylla), applies the command
//     line over scylla.yaml (--name=value or --name value, dashes or underscores), and records everything as a
//     Record: appended to the JSON array in $FAKE_SCYLLADB_RECORD_PATH and served at GET /fake/record; when the
//     node fails once it serves its API (a refused join, say), the error is added to this start's record;
//   - keeps a host ID in its workdir (scylla.yaml "workdir", default /var/lib/scylla) so a restart keeps its identity,
//     and refuses to start once decommissioned, like ScyllaDB;
//   - replaces a dead node when started with replace_node_first_boot (see "Replacing a node" below);
//   - serves the REST API subset on api_address:api_port (default localhost:10000): GET
//     /storage_service/hostid/local, /storage_service/host_id, /gossiper/endpoint/live/, /gossiper/endpoint/down/,
//     /storage_service/nodes/{joining,leaving,moving}, /storage_service/native_transport,
//     /storage_service/operation_mode, /storage_service/tokens_endpoint (token -> address of the node that owns it;
//     a Joining node owns none) and POST /storage_service/decommission (answers when done, like ScyllaDB);
//   - joins a ring through the registry at $FAKE_SCYLLADB_REGISTRY_URL and heartbeats to it; it exits 1 when it can't
//     join, and marks itself Down and exits 0 on SIGTERM or SIGINT;
//   - with $FAKE_SCYLLADB_RESOLVER_URL, resolves its seeds that aren't IP addresses through that resolver right
//     before joining, as ScyllaDB resolves seed host names through DNS (see "Seed names" below).
//
// Knobs, from the environment at start (see the Env* constants) and at run time through GET/POST /fake/knobs with
// a JSON Knobs body: startupDelay, bootstrapDelay, decommissionDelay (slow), down (the node reports itself Down),
// apiFailure (every REST API call answers 500), nativeTransportDisabled, exitCode (exit right after recording). A
// node that joined as Joining rereads bootstrapDelay, so setting it to "0s" ends the Joining state at once.
// $FAKE_SCYLLADB_ALIAS_ADDRESSES lists further addresses the node is reachable at (its member Service's ClusterIP
// when it broadcasts its Pod IP), standing in for kube-proxy.
//
// # Ring registry
//
// "fake-scylladb registry --listen-address=127.0.0.1:0 --address-file=F --ttl=5s", or NewRegistry in-process, serves
// ring membership over HTTP with JSON bodies:
//   - POST /v1/join (JoinRequest) -> Ring, or 409 {"error"} when refused. A node the registry knows (by host ID)
//     rejoins its ring, like a restarted node. A node whose seeds are all its own addresses founds a new ring. Any
//     other node joins the ring of the first seed reachable at a live node, and is refused when no seed is live, when
//     that node has another cluster name, or when a live node already has its broadcast address. A JoinRequest with
//     replaceHostID replaces that node (see "Replacing a node").
//   - POST /v1/nodes/{hostID}/heartbeat; a node silent for longer than the TTL reads as Down.
//   - POST /v1/nodes/{hostID}/state (StateRequest): status Up|Down, state Joining|Normal|Leaving|Decommissioned; a
//     Decommissioned node leaves its ring for good.
//   - GET /v1/nodes/{hostID}/ring -> Ring; GET /v1/rings -> every non-empty Ring. Several rings with one cluster
//     name mean the cluster split. Each member has "tokens", its ring position: TokensPerNode tokens derived from the
//     host ID of the node that first joined at that position, kept across restarts and handed on by a replacement,
//     and "replaceHostID", the node it replaced or is replacing.
//
// Nodes are keyed by the addresses the sidecar computed: a seed matches a node whose broadcast address, concrete
// listen or RPC address, broadcast RPC address or alias equals it.
//
// # Replacing a node
//
// replace_node_first_boot, from scylla.yaml or the command line (--replace-node-first-boot or
// --replace_node_first_boot), names the host ID of a dead node to replace; a value that isn't a UUID fails the start,
// and replace_address and replace_address_first_boot are refused, as the fake replaces by host ID only. As in
// ScyllaDB it counts on first boot only: a node whose workdir already has a host ID ignores it with a log line. The
// replacing node gets a new host ID and keeps the replaced host ID in its workdir until it is Normal, so a restart
// midway, before it became Normal, resumes the same replacement as ScyllaDB retries an unfinished bootstrap (with
// the option or without it; naming another host ID then fails the start). Record.replaceHostID is the host ID a
// start replaces.
//
// The registry admits the replacing node into the ring its seeds lead to with the replaced node's tokens; it shows
// Joining during bootstrapDelay and then Normal, and once it is Normal the replaced host ID leaves the ring for good:
// it is gone from every node's lists and from GET /v1/rings, and its node can't rejoin. While the replacing node
// is Joining the replaced node stays in the ring, Down, and keeps its tokens; at the same broadcast address the
// REST API lists only the replacing node, as ScyllaDB keys those lists by address. The join is refused, and the
// node exits 1, when the host ID isn't in the ring the seeds lead to, when that node isn't Down, when it was
// replaced already, when no seed is live, or when another node that is Up is replacing it; a replacement whose
// node went Down before it finished is dropped in favour of the new one.
//
// # Seed names
//
// A resolver (the node simulator serves one that plays cluster DNS) answers GET <resolver URL>?name=<name> with
// 200 {"addresses": [...]}, or 404 {"error"} for a name it doesn't know; NewResolverHandler serves that protocol
// and ResolverClient speaks it. With $FAKE_SCYLLADB_RESOLVER_URL set, each start resolves every seed that isn't an
// IP address and joins with the resulting addresses: a name contributes all its addresses, a name that can't be
// resolved is logged and left out, and with no seed left the node can't join and exits 1, so a supervisor that
// restarts it retries once the name resolves. The record keeps the seeds as given in Invocation.Settings.Seeds and
// the addresses joined with in ResolvedSeeds. Without a resolver URL seeds are matched literally, so a name matches
// nothing.
package fakescylladb
