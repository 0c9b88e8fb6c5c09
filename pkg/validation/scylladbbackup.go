package validation

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateScyllaDBBackupBucket returns every error of bucket that the CRD schema can't catch: the S3 bucket naming
// rules beyond its character set, and an endpoint that is a bare http(s) origin.
func ValidateScyllaDBBackupBucket(bucket *scyllav1alpha1.ScyllaDBBackupBucket) field.ErrorList {
	var allErrs field.ErrorList
	specPath := field.NewPath("spec")
	allErrs = append(allErrs, validateS3BucketName(bucket.Spec.BucketName, specPath.Child("bucketName"))...)
	if len(bucket.Spec.Endpoint) != 0 {
		allErrs = append(allErrs, validateEndpoint(bucket.Spec.Endpoint, specPath.Child("endpoint"))...)
	}
	if r := bucket.Spec.Region; len(r) != 0 && strings.ContainsAny(r, " \t/:") {
		allErrs = append(allErrs, field.Invalid(specPath.Child("region"), r, "must be a region name such as us-east-1"))
	}
	if d := bucket.Spec.DeletionGracePeriod; d != nil && d.Duration < 0 {
		allErrs = append(allErrs, field.Invalid(specPath.Child("deletionGracePeriod"), d.Duration.String(), "must not be negative"))
	}
	return allErrs
}

// validateS3BucketName checks the S3 bucket naming rules: 3 to 63 characters of lowercase letters, digits, '.' and
// '-', starting and ending with a letter or digit, no two adjacent periods or a period next to a hyphen, not an IP
// address, and none of the reserved prefixes and suffixes.
func validateS3BucketName(name string, path *field.Path) field.ErrorList {
	var problems []string
	if len(name) < 3 || len(name) > 63 {
		problems = append(problems, "must be 3 to 63 characters long")
	}
	if strings.Contains(name, "..") || strings.Contains(name, ".-") || strings.Contains(name, "-.") {
		problems = append(problems, "must not have two adjacent periods or a period next to a hyphen")
	}
	if net.ParseIP(name) != nil {
		problems = append(problems, "must not be formatted as an IP address")
	}
	for _, prefix := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(name, prefix) {
			problems = append(problems, fmt.Sprintf("must not start with the reserved prefix %q", prefix))
		}
	}
	for _, suffix := range []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(name, suffix) {
			problems = append(problems, fmt.Sprintf("must not end with the reserved suffix %q", suffix))
		}
	}
	var allErrs field.ErrorList
	for _, p := range problems {
		allErrs = append(allErrs, field.Invalid(path, name, p))
	}
	return allErrs
}

// validateEndpoint checks that an endpoint is an http or https origin: a host and an optional port, with no
// credentials, path, query or fragment, which S3 clients would drop or misuse.
func validateEndpoint(endpoint string, path *field.Path) field.ErrorList {
	u, err := url.Parse(endpoint)
	const want = "must be an http or https URL of a host and an optional port, e.g. https://minio.example.com:9000"
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(path, endpoint, want)}
	case u.Scheme != "http" && u.Scheme != "https":
		return field.ErrorList{field.Invalid(path, endpoint, want)}
	case len(u.Hostname()) == 0:
		return field.ErrorList{field.Invalid(path, endpoint, want)}
	case u.User != nil:
		return field.ErrorList{field.Invalid(path, endpoint, "must not hold credentials: put them in the Secret spec.credentialsSecretRef names")}
	case (len(u.Path) != 0 && u.Path != "/") || len(u.RawQuery) != 0 || len(u.Fragment) != 0 || u.ForceQuery:
		return field.ErrorList{field.Invalid(path, endpoint, "must not have a path, query or fragment: "+want)}
	}
	if port := u.Port(); len(port) != 0 {
		var n int
		if _, err := fmt.Sscanf(port, "%d", &n); err != nil || n < 1 || n > 65535 {
			return field.ErrorList{field.Invalid(path, endpoint, "has a port out of the range 1-65535")}
		}
	}
	return nil
}

// ValidateScyllaDBBackupBucketUpdate returns the errors of ValidateScyllaDBBackupBucket(bucket); the schema already
// refuses the changes that aren't allowed.
func ValidateScyllaDBBackupBucketUpdate(bucket, old *scyllav1alpha1.ScyllaDBBackupBucket) field.ErrorList {
	return ValidateScyllaDBBackupBucket(bucket)
}

// WarningsForScyllaDBBackupBucket returns admission warnings for bucket; it has no deprecated fields.
func WarningsForScyllaDBBackupBucket(bucket *scyllav1alpha1.ScyllaDBBackupBucket) []string {
	return nil
}

// ValidateScyllaDBBackupEntry returns every error of entry that the CRD schema can't catch: the value of its
// retention annotation.
func ValidateScyllaDBBackupEntry(entry *scyllav1alpha1.ScyllaDBBackupEntry) field.ErrorList {
	v, ok := entry.Annotations[naming.ScyllaDBBackupRetentionAnnotation]
	if !ok || v == naming.ScyllaDBBackupRetentionKeep || v == naming.ScyllaDBBackupRetentionPurgeNow {
		return nil
	}
	return field.ErrorList{field.NotSupported(field.NewPath("metadata", "annotations").Key(naming.ScyllaDBBackupRetentionAnnotation), v,
		[]string{naming.ScyllaDBBackupRetentionKeep, naming.ScyllaDBBackupRetentionPurgeNow})}
}

// ValidateScyllaDBBackupEntryUpdate returns the errors of ValidateScyllaDBBackupEntry(entry); the schema already
// makes the spec immutable.
func ValidateScyllaDBBackupEntryUpdate(entry, old *scyllav1alpha1.ScyllaDBBackupEntry) field.ErrorList {
	return ValidateScyllaDBBackupEntry(entry)
}

// WarningsForScyllaDBBackupEntry returns admission warnings for entry; it has no deprecated fields.
func WarningsForScyllaDBBackupEntry(entry *scyllav1alpha1.ScyllaDBBackupEntry) []string {
	return nil
}
