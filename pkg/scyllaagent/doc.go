// Package scyllaagent reads and writes the ScyllaDB Manager agent configuration files the operator and the
// manager-controller share: the operator writes the agent auth token, and the s3 section of the backup buckets a
// datacenter uses, into a datacenter's auth-token Secret, and the manager-controller reads the token back to register
// the datacenter with ScyllaDB Manager. Both must agree on the format, so it is defined once, here.
package scyllaagent
