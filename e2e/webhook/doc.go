// Package webhook proves the admission webhook (`scylla-operator webhook`) as users install it: the install manifests
// of deploy/operator/ are applied with `kubectl apply --server-side` to a local control plane, the applied
// ValidatingWebhookConfiguration is pointed at a webhook process on 127.0.0.1 (the local control plane reaches no
// Service; everything else of the deployed configuration stays: rules, failurePolicy Fail, timeout), and the process
// runs with a token of the ServiceAccount its Deployment names, so it has exactly the permissions the manifests
// grant it.
//
// The suite shows, through the real API server:
//   - every manifest of testdata/invalid/ is accepted by the CRD schemas alone and refused by the webhook with the
//     field path and message its "# expect:" lines name; a valid ScyllaCluster is accepted, removing a rack that
//     still has members is refused, and a deprecated field yields an admission warning;
//   - a serving certificate with a short validity is renewed while admissions keep flowing, none of them failing,
//     and the caBundle verifies the new certificate;
//   - with the webhook stopped, creates fail closed with the API server's "failed calling webhook" error, and succeed
//     again once it is back;
//   - as many replicas as the Deployment runs (two) share one Secret: one of them creates it, the caBundle is
//     written once, and none writes anything once they have settled.
//
// The tests need a local control plane and run with the e2e build tag, one e2e package at a time:
//
//	go test -tags e2e -count=1 ./e2e/webhook/
//
// The cases of testdata/invalid/ also run without a control plane (go test ./e2e/webhook/): against the CRD schemas
// with pkg/crdvalidation and against the webhook's admission handler in process.
package webhook
