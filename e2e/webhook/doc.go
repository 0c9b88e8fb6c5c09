// Package webhook proves the admission webhook (`scylla-operator webhook`) as users install it: the install manifests
// of deploy/operator/ are applied with `kubectl apply --server-side` to a local control plane, the applied
// ValidatingWebhookConfiguration and MutatingWebhookConfiguration are pointed at a webhook process on 127.0.0.1 (the
// local control plane reaches no Service; everything else of the deployed configurations stays: rules,
// failurePolicy Fail, timeout, reinvocation policy), and the process runs with the Deployment's configuration flags
// and a token of the ServiceAccount its Deployment names, so it has exactly the permissions the manifests grant it.
//
// The suite shows, through the real API server:
//   - every manifest of testdata/invalid/ is accepted by the CRD schemas alone and refused by the webhook with the
//     field path and message its "# expect:" lines name; a valid ScyllaCluster is accepted, removing a rack that
//     still has members is refused, and a deprecated field yields an admission warning;
//   - the mutating webhook sets spec.enableParallelNodeOperations=true on creates that leave it unset at ScyllaDB
//     2026.2 (a ScyllaCluster's version, a ScyllaDBDatacenter's image tag) and on nothing else: not at 2025.1, not
//     over false, not on an update, not for an image pinned by digest;
//   - a serving certificate with a short validity is renewed while admissions keep flowing, none of them failing,
//     and the caBundles of both configurations verify the new certificate;
//   - with the webhook stopped, creates fail closed with the API server's "failed calling webhook" error naming the
//     mutating webhook, updates naming the validating one, and creates succeed again once it is back;
//   - as many replicas as the Deployment runs (two) share one Secret: one of them creates it, the
//     caBundle of each configuration is written once, and none writes anything once they have settled.
//
// The tests need a local control plane and run with the e2e build tag, one e2e package at a time:
//
//	go test -tags e2e -count=1 ./e2e/webhook/
//
// The cases of testdata/invalid/ also run without a control plane (go test ./e2e/webhook/): against the CRD schemas
// with pkg/crdvalidation and against the webhook's admission handler in process.
package webhook
