package naming

// CABundlePublishedAnnotation is the annotation of a CA ConfigMap recording when the ConfigMap was first written with
// each CA of its bundle: a JSON object from the CA's fingerprint (certs.CAFingerprint) to an RFC 3339 time. A new CA
// signs certificates only once that time is the trust propagation delay ago (docs/tls.md). A CA of the bundle without
// an entry was published by an earlier version and counts as published at its notBefore.
const CABundlePublishedAnnotation = "internal.scylla-operator.scylladb.com/ca-bundle-published-at"
