//go:build e2e

package crds

import (
	"fmt"
	"strings"
	"testing"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/crdvalidation"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Messages of the ScyllaDBBackupBucket and ScyllaDBBackupEntry rules, as users read them.
const (
	bucketNameMessage       = "bucketName must be an S3 bucket name: lowercase letters, digits, '.' and '-', starting and ending with a letter or digit, with no two adjacent periods"
	gracePeriodMessage      = "deletionGracePeriod must be a duration such as 720h or 36h30m"
	negativeGraceMessage    = "deletionGracePeriod must not be negative"
	endpointMessage         = "endpoint must be an http or https URL, for example https://minio.example.com:9000"
	managerClusterIDMessage = "managerClusterID must be a UUID in lowercase canonical form"
	entrySpecMessage        = "spec is immutable: an entry's spec can't change; create a new ScyllaDBBackupEntry instead"
	bucketNameImmutable     = "bucketName is immutable: create a new ScyllaDBBackupBucket for another bucket"
)

// specEdit changes the spec of a manifest built by backupBucket or backupEntry.
type specEdit func(spec map[string]interface{})

// set puts value at the dotted path (relative to spec), creating maps on the way.
func set(path string, value interface{}) specEdit {
	return func(spec map[string]interface{}) {
		keys := strings.Split(path, ".")
		m := spec
		for _, k := range keys[:len(keys)-1] {
			next, ok := m[k].(map[string]interface{})
			if !ok {
				next = map[string]interface{}{}
				m[k] = next
			}
			m = next
		}
		m[keys[len(keys)-1]] = value
	}
}

// unset removes the dotted path (relative to spec).
func unset(path string) specEdit {
	return func(spec map[string]interface{}) {
		keys := strings.Split(path, ".")
		m := spec
		for _, k := range keys[:len(keys)-1] {
			m = m[k].(map[string]interface{})
		}
		delete(m, keys[len(keys)-1])
	}
}

func backupManifest(t *testing.T, kind, name string, spec map[string]interface{}, edits []specEdit) []byte {
	t.Helper()
	for _, edit := range edits {
		edit(spec)
	}
	data, err := yaml.Marshal(map[string]interface{}{
		"apiVersion": "scylla.scylladb.com/v1alpha1",
		"kind":       kind,
		"metadata":   map[string]interface{}{"name": name},
		"spec":       spec,
	})
	if err != nil {
		t.Fatalf("can't encode %s %q: %v", kind, name, err)
	}
	return data
}

// backupBucket returns a minimal valid ScyllaDBBackupBucket changed by edits.
func backupBucket(t *testing.T, name string, edits ...specEdit) []byte {
	t.Helper()
	return backupManifest(t, "ScyllaDBBackupBucket", name, map[string]interface{}{
		"provider":   "s3",
		"bucketName": "acme-scylla-backups",
	}, edits)
}

// backupEntry returns a minimal valid ScyllaDBBackupEntry changed by edits.
func backupEntry(t *testing.T, name string, edits ...specEdit) []byte {
	t.Helper()
	return backupManifest(t, "ScyllaDBBackupEntry", name, map[string]interface{}{
		"bucketRef": "acme-scylla-backups",
		"clusterRef": map[string]interface{}{
			"kind": "ScyllaDBDatacenter",
			"name": "basic",
			"uid":  "8d7f3a4e-6f5b-4c1d-9e2a-0b3c4d5e6f70",
		},
		"managerClusterID": "b383e08e-85dd-5032-93ab-71de48b08e5a",
	}, edits)
}

// checkRejectionWithoutHarness asserts that the API server rejected a request with exactly the expected causes,
// for requests pkg/crdvalidation can't judge the same way (status writes, manifests that don't decode into Go).
func checkRejectionWithoutHarness(t *testing.T, what string, err error, expectations []crdvalidation.Expectation) {
	t.Helper()
	rejection, rerr := RejectionOf(err)
	if rerr != nil {
		t.Fatalf("%s: %v", what, rerr)
	}
	if problems := rejection.Unmet(expectations); len(problems) != 0 {
		t.Errorf("%s: the API server's causes differ from the expected ones:\n  %s\ngot:\n%s", what, strings.Join(problems, "\n  "), rejection)
	}
}

func expect(path, message string) crdvalidation.Expectation {
	return crdvalidation.Expectation{Path: path, Message: message}
}

// TestBackupObjectsAreAcceptedAndDefaulted dry-run creates valid ScyllaDBBackupBuckets and ScyllaDBBackupEntries:
// the API server must accept them, default them as pkg/crdvalidation does, and keep the given values.
func TestBackupObjectsAreAcceptedAndDefaulted(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	harness := newHarness(t)

	for _, tc := range []struct {
		name     string
		manifest []byte
		// want are values the stored spec must hold, by dotted path.
		want map[string]interface{}
	}{
		{
			name:     "a minimal bucket gets a grace period of 720h",
			manifest: backupBucket(t, "minimal"),
			want:     map[string]interface{}{"provider": "s3", "bucketName": "acme-scylla-backups", "deletionGracePeriod": "720h"},
		},
		{
			name: "a bucket of an S3-compatible store keeps every field",
			manifest: backupBucket(t, "full",
				set("bucketName", "scylla.backups-1"),
				set("region", "eu-central-1"),
				set("endpoint", "https://minio.example.com:9000"),
				set("credentialsSecretRef.namespace", "scylla-manager"),
				set("credentialsSecretRef.name", "minio-credentials"),
				set("provision", true),
				set("deletionGracePeriod", "36h30m"),
				set("maxClusters", int64(100)),
			),
			want: map[string]interface{}{
				"bucketName":                     "scylla.backups-1",
				"region":                         "eu-central-1",
				"endpoint":                       "https://minio.example.com:9000",
				"credentialsSecretRef.namespace": "scylla-manager",
				"credentialsSecretRef.name":      "minio-credentials",
				"provision":                      true,
				"deletionGracePeriod":            "36h30m",
				"maxClusters":                    int64(100),
			},
		},
		{
			name:     "a bucket with no grace period and an http endpoint on an IP",
			manifest: backupBucket(t, "zero-grace", set("deletionGracePeriod", "0s"), set("endpoint", "http://127.0.0.1:7070")),
			want:     map[string]interface{}{"deletionGracePeriod": "0s", "endpoint": "http://127.0.0.1:7070"},
		},
		{
			name:     "a bucket whose grace period is written the way Go prints durations",
			manifest: backupBucket(t, "go-duration", set("deletionGracePeriod", "720h0m0s")),
			want:     map[string]interface{}{"deletionGracePeriod": "720h0m0s"},
		},
		{
			name:     "a shortest bucket name",
			manifest: backupBucket(t, "short-name", set("bucketName", "a1b")),
			want:     map[string]interface{}{"bucketName": "a1b"},
		},
		{
			name:     "an entry of a ScyllaDBDatacenter",
			manifest: backupEntry(t, "datacenter"),
			want:     map[string]interface{}{"bucketRef": "acme-scylla-backups", "clusterRef.kind": "ScyllaDBDatacenter", "managerClusterID": "b383e08e-85dd-5032-93ab-71de48b08e5a"},
		},
		{
			name:     "an entry of a ScyllaDBCluster",
			manifest: backupEntry(t, "cluster", set("clusterRef.kind", "ScyllaDBCluster"), set("clusterRef.name", "multi.dc")),
			want:     map[string]interface{}{"clusterRef.kind": "ScyllaDBCluster", "clusterRef.name": "multi.dc"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obj, tg := caseObject(t, f, tc.name, tc.manifest)
			stored, err := strictDryRunCreate(t.Context(), tg, obj)
			if err != nil {
				t.Fatalf("the API server rejected %s:\n%s", tg.describe, describeError(err))
			}
			for path, want := range tc.want {
				got, found, err := unstructured.NestedFieldNoCopy(stored.Object, append([]string{"spec"}, strings.Split(path, ".")...)...)
				if err != nil || !found {
					t.Errorf("spec.%s: not stored (%v)", path, err)
					continue
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("spec.%s: got %v, want %v", path, got, want)
				}
			}
			defaulted, errs := harness.ValidateCreate(t.Context(), tc.manifest)
			if len(errs) != 0 {
				t.Fatalf("the API server accepted %s, but pkg/crdvalidation rejects it:\n%s", tg.describe, formatFieldErrors(errs))
			}
			checkSpecMatchesHarness(t, tg.describe, stored, defaulted)
		})
	}
}

// TestInvalidBackupObjectsAreRejected dry-run creates invalid ScyllaDBBackupBuckets and ScyllaDBBackupEntries: the
// API server must reject each with exactly the expected causes, as pkg/crdvalidation does.
func TestInvalidBackupObjectsAreRejected(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	harness := newHarness(t)

	for _, tc := range []struct {
		name     string
		manifest []byte
		want     []crdvalidation.Expectation
		// notGoDecodable is set when the manifest doesn't decode into the Go type: pkg/crdvalidation then reports
		// that besides the API server's causes.
		notGoDecodable bool
	}{
		{
			name:     "gcs is not supported yet",
			manifest: backupBucket(t, "gcs", set("provider", "gcs")),
			want:     []crdvalidation.Expectation{expect("spec.provider", `provider "gcs" is not supported yet: only s3 is`)},
		},
		{
			name:     "azure is not supported yet",
			manifest: backupBucket(t, "azure", set("provider", "azure")),
			want:     []crdvalidation.Expectation{expect("spec.provider", `provider "azure" is not supported yet: only s3 is`)},
		},
		{
			name:     "an unknown provider",
			manifest: backupBucket(t, "localstorage", set("provider", "localstorage")),
			want:     []crdvalidation.Expectation{expect("spec.provider", `Unsupported value: "localstorage"`)},
		},
		{
			name:     "the provider is required",
			manifest: backupBucket(t, "no-provider", unset("provider")),
			want:     []crdvalidation.Expectation{expect("spec.provider", "Required value")},
		},
		{
			name:     "the bucket name is required",
			manifest: backupBucket(t, "no-bucket-name", unset("bucketName")),
			want:     []crdvalidation.Expectation{expect("spec.bucketName", "Required value")},
		},
		{
			name:     "a bucket name of two characters",
			manifest: backupBucket(t, "short-bucket-name", set("bucketName", "ab")),
			want:     []crdvalidation.Expectation{expect("spec.bucketName", "should be at least 3 chars long")},
		},
		{
			name:     "a bucket name of 64 characters",
			manifest: backupBucket(t, "long-bucket-name", set("bucketName", strings.Repeat("b", 64))),
			want:     []crdvalidation.Expectation{expect("spec.bucketName", "Too long")},
		},
		{
			name:     "a bucket name with uppercase letters",
			manifest: backupBucket(t, "uppercase-bucket-name", set("bucketName", "Acme-Backups")),
			want:     []crdvalidation.Expectation{expect("spec.bucketName", bucketNameMessage)},
		},
		{
			name:     "a bucket name with an underscore",
			manifest: backupBucket(t, "underscore-bucket-name", set("bucketName", "acme_backups")),
			want:     []crdvalidation.Expectation{expect("spec.bucketName", bucketNameMessage)},
		},
		{
			name:     "a bucket name starting with a dash",
			manifest: backupBucket(t, "dash-bucket-name", set("bucketName", "-acme-backups")),
			want:     []crdvalidation.Expectation{expect("spec.bucketName", bucketNameMessage)},
		},
		{
			name:     "a bucket name ending with a dot",
			manifest: backupBucket(t, "dot-bucket-name", set("bucketName", "acme-backups.")),
			want:     []crdvalidation.Expectation{expect("spec.bucketName", bucketNameMessage)},
		},
		{
			name:     "a bucket name with adjacent periods",
			manifest: backupBucket(t, "periods-bucket-name", set("bucketName", "acme..backups")),
			want:     []crdvalidation.Expectation{expect("spec.bucketName", bucketNameMessage)},
		},
		{
			name:     "a negative grace period",
			manifest: backupBucket(t, "negative-grace", set("deletionGracePeriod", "-1h")),
			want:     []crdvalidation.Expectation{expect("spec.deletionGracePeriod", negativeGraceMessage)},
		},
		{
			name:     "a negative grace period of minutes",
			manifest: backupBucket(t, "negative-grace-minutes", set("deletionGracePeriod", "-30m")),
			want:     []crdvalidation.Expectation{expect("spec.deletionGracePeriod", negativeGraceMessage)},
		},
		{
			name:           "a grace period that is no duration",
			manifest:       backupBucket(t, "grace-not-a-duration", set("deletionGracePeriod", "30d")),
			want:           []crdvalidation.Expectation{expect("spec.deletionGracePeriod", gracePeriodMessage)},
			notGoDecodable: true,
		},
		{
			name:     "a cap of zero clusters",
			manifest: backupBucket(t, "zero-clusters", set("maxClusters", int64(0))),
			want:     []crdvalidation.Expectation{expect("spec.maxClusters", "should be greater than or equal to 1")},
		},
		{
			name:     "an endpoint without a scheme",
			manifest: backupBucket(t, "endpoint-without-scheme", set("endpoint", "minio.example.com:9000")),
			want:     []crdvalidation.Expectation{expect("spec.endpoint", endpointMessage)},
		},
		{
			name:     "an ftp endpoint",
			manifest: backupBucket(t, "ftp-endpoint", set("endpoint", "ftp://minio.example.com")),
			want:     []crdvalidation.Expectation{expect("spec.endpoint", endpointMessage)},
		},
		{
			name:     "an endpoint without a host",
			manifest: backupBucket(t, "endpoint-without-host", set("endpoint", "https://")),
			want:     []crdvalidation.Expectation{expect("spec.endpoint", endpointMessage)},
		},
		{
			name:     "an endpoint that is no URL",
			manifest: backupBucket(t, "endpoint-not-a-url", set("endpoint", "not a url")),
			want:     []crdvalidation.Expectation{expect("spec.endpoint", endpointMessage)},
		},
		{
			name:     "credentials without a namespace",
			manifest: backupBucket(t, "credentials-without-namespace", set("credentialsSecretRef.name", "minio-credentials")),
			want:     []crdvalidation.Expectation{expect("spec.credentialsSecretRef.namespace", "Required value")},
		},
		{
			name:     "credentials without a name",
			manifest: backupBucket(t, "credentials-without-name", set("credentialsSecretRef.namespace", "scylla-manager")),
			want:     []crdvalidation.Expectation{expect("spec.credentialsSecretRef.name", "Required value")},
		},
		{
			name:     "an entry's manager cluster ID in uppercase",
			manifest: backupEntry(t, "uppercase-id", set("managerClusterID", "B383E08E-85DD-5032-93AB-71DE48B08E5A")),
			want:     []crdvalidation.Expectation{expect("spec.managerClusterID", managerClusterIDMessage)},
		},
		{
			name:     "an entry's manager cluster ID that is no UUID",
			manifest: backupEntry(t, "not-a-uuid", set("managerClusterID", "zzzzzzzz-85dd-5032-93ab-71de48b08e5a")),
			want:     []crdvalidation.Expectation{expect("spec.managerClusterID", managerClusterIDMessage)},
		},
		{
			name:     "an entry's short manager cluster ID",
			manifest: backupEntry(t, "short-id", set("managerClusterID", "b383e08e")),
			want:     []crdvalidation.Expectation{expect("spec.managerClusterID", managerClusterIDMessage)},
		},
		{
			name:     "an entry of a ScyllaCluster",
			manifest: backupEntry(t, "scyllacluster", set("clusterRef.kind", "ScyllaCluster")),
			want:     []crdvalidation.Expectation{expect("spec.clusterRef.kind", `Unsupported value: "ScyllaCluster"`)},
		},
		{
			name:     "an entry without the cluster's UID",
			manifest: backupEntry(t, "no-uid", unset("clusterRef.uid")),
			want:     []crdvalidation.Expectation{expect("spec.clusterRef.uid", "Required value")},
		},
		{
			name:     "an entry whose bucketRef is no object name",
			manifest: backupEntry(t, "bad-bucket-ref", set("bucketRef", "Acme_Backups")),
			want:     []crdvalidation.Expectation{expect("spec.bucketRef", "bucketRef must be a lowercase RFC 1123 subdomain")},
		},
		{
			name:     "an entry without a manager cluster ID",
			manifest: backupEntry(t, "no-id", unset("managerClusterID")),
			want:     []crdvalidation.Expectation{expect("spec.managerClusterID", "Required value")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obj, tg := caseObject(t, f, tc.name, tc.manifest)
			_, err := strictDryRunCreate(t.Context(), tg, obj)
			_, harnessErrs := harness.ValidateCreate(t.Context(), tc.manifest)
			what := fmt.Sprintf("%s (%s)", tc.name, tg.describe)
			if tc.notGoDecodable {
				checkRejectionWithoutHarness(t, what, err, tc.want)
				if !tc.want[0].Matches(harnessErrs) {
					t.Errorf("%s: pkg/crdvalidation doesn't give %q:\n%s", what, tc.want[0].String(), formatFieldErrors(harnessErrs))
				}
				return
			}
			checkRejection(t, what, err, tc.want, harnessErrs)
		})
	}
}

// TestBackupEntrySpecIsImmutable creates an entry and changes each part of its spec, which the API server must
// refuse with one message, while metadata (the retention annotation) and status may change.
func TestBackupEntrySpecIsImmutable(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	harness := newHarness(t)
	original := backupEntry(t, "basic")
	tg, stored := createObject(t, f, "entry", original)

	// The rejected updates all start from the stored object; the group ends before the accepted one changes it.
	t.Run("spec changes are rejected", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			updated []byte
		}{
			{name: "another bucket", updated: backupEntry(t, "basic", set("bucketRef", "other-backups"))},
			{name: "another cluster kind", updated: backupEntry(t, "basic", set("clusterRef.kind", "ScyllaDBCluster"))},
			{name: "another cluster name", updated: backupEntry(t, "basic", set("clusterRef.name", "other"))},
			{name: "another cluster UID", updated: backupEntry(t, "basic", set("clusterRef.uid", "0a7f3a4e-6f5b-4c1d-9e2a-0b3c4d5e6f70"))},
			{name: "another directory", updated: backupEntry(t, "basic", set("managerClusterID", "0383e08e-85dd-5032-93ab-71de48b08e5a"))},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				_, err := updateObject(t, f, tc.name, tc.updated, tg, stored)
				_, harnessErrs := harness.ValidateUpdate(t.Context(), original, tc.updated)
				checkRejection(t, fmt.Sprintf("update of %s to %s", tg.describe, tc.name), err, []crdvalidation.Expectation{expect("spec", entrySpecMessage)}, harnessErrs)
			})
		}
	})

	t.Run("the retention annotation may be set", func(t *testing.T) {
		annotated := stored.DeepCopy()
		annotated.SetAnnotations(map[string]string{naming.ScyllaDBBackupRetentionAnnotation: naming.ScyllaDBBackupRetentionKeep})
		if _, err := tg.resource.Update(t.Context(), annotated, metav1.UpdateOptions{FieldManager: fieldManager, FieldValidation: metav1.FieldValidationStrict}); err != nil {
			t.Fatalf("the API server rejected an annotation of %s:\n%s", tg.describe, describeError(err))
		}
	})
}

// TestBackupEntryStatusIsValidated writes an entry's status through the status subresource: a purge in progress is
// accepted, an unknown operation state is not.
func TestBackupEntryStatusIsValidated(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	tg, stored := createObject(t, f, "entry", backupEntry(t, "basic"))

	withStatus := func(state string) *unstructured.Unstructured {
		obj := stored.DeepCopy()
		obj.Object["status"] = map[string]interface{}{
			"observedGeneration": int64(1),
			"clusterDeletedAt":   "2026-01-01T00:00:00Z",
			"purgeAfter":         "2026-01-31T00:00:00Z",
			"lastOperation": map[string]interface{}{
				"type":           "Purge",
				"state":          state,
				"time":           "2026-01-31T00:01:00Z",
				"message":        "deleted 1000 objects",
				"objectsDeleted": int64(1000),
			},
			"objects": int64(1200),
			"bytes":   int64(1 << 30),
		}
		return obj
	}

	_, err := tg.resource.UpdateStatus(t.Context(), withStatus("Paused"), metav1.UpdateOptions{FieldManager: fieldManager, FieldValidation: metav1.FieldValidationStrict})
	checkRejectionWithoutHarness(t, "status of "+tg.describe+" with state Paused", err, []crdvalidation.Expectation{expect("status.lastOperation.state", `Unsupported value: "Paused"`)})

	updated, err := tg.resource.UpdateStatus(t.Context(), withStatus("Running"), metav1.UpdateOptions{FieldManager: fieldManager, FieldValidation: metav1.FieldValidationStrict})
	if err != nil {
		t.Fatalf("the API server rejected the status of %s:\n%s", tg.describe, describeError(err))
	}
	if state, _, _ := unstructured.NestedString(updated.Object, "status", "lastOperation", "state"); state != "Running" {
		t.Errorf("status.lastOperation.state: got %q, want Running", state)
	}
}

// TestBackupBucketNameIsImmutable creates a bucket and changes its bucketName, which the API server must refuse,
// and its grace period, which it must accept.
func TestBackupBucketNameIsImmutable(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	harness := newHarness(t)
	// Buckets are cluster-scoped: the test's namespace makes the name unique.
	name := f.Namespace()
	original := backupBucket(t, name)
	tg, stored := createObject(t, f, "bucket", original)
	deleteAfterTest(t, tg, name)

	renamed := backupBucket(t, name, set("bucketName", "other-backups"))
	_, err := updateObject(t, f, "renamed bucket", renamed, tg, stored)
	_, harnessErrs := harness.ValidateUpdate(t.Context(), original, renamed)
	checkRejection(t, "update of the bucketName of "+tg.describe, err, []crdvalidation.Expectation{expect("spec.bucketName", bucketNameImmutable)}, harnessErrs)

	shorter := backupBucket(t, name, set("deletionGracePeriod", "24h"), set("maxClusters", int64(10)))
	if _, err := updateObject(t, f, "shorter grace period", shorter, tg, stored); err != nil {
		t.Fatalf("the API server rejected a shorter grace period and a cap for %s:\n%s", tg.describe, describeError(err))
	}
}
