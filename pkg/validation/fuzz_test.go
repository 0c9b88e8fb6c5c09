package validation

import (
	"encoding/json"
	"testing"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
)

// fuzzKind fuzzes the validation of one kind: every JSON document that decodes into a T is validated on its own, as
// an update of itself and of the first example of its kind, and for warnings, none of which may panic. The corpus
// starts with the examples of that kind.
func fuzzKind[T runtime.Object](f *testing.F, validate func(T) any, validateUpdate func(obj, old T) any, warnings func(T) []string) {
	var base T
	found := false
	for _, e := range loadExamples(f) {
		o, ok := e.obj.(T)
		if !ok {
			continue
		}
		if !found {
			base, found = o, true
		}
		data, err := json.Marshal(o)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	if !found {
		f.Fatalf("no example of %T", base)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		obj := base.DeepCopyObject().(T)
		// Decoding into a copy of the example keeps the fields the document leaves out realistic.
		if err := json.Unmarshal(data, obj); err != nil {
			return
		}
		_ = validate(obj)
		_ = validateUpdate(obj, obj)
		_ = validateUpdate(obj, base)
		_ = validateUpdate(base, obj)
		_ = warnings(obj)
	})
}

func FuzzValidateScyllaCluster(f *testing.F) {
	fuzzKind(f,
		func(o *scyllav1.ScyllaCluster) any { return ValidateScyllaCluster(o) },
		func(o, old *scyllav1.ScyllaCluster) any { return ValidateScyllaClusterUpdate(o, old) },
		WarningsForScyllaCluster)
}

func FuzzValidateScyllaDBDatacenter(f *testing.F) {
	fuzzKind(f,
		func(o *scyllav1alpha1.ScyllaDBDatacenter) any { return ValidateScyllaDBDatacenter(o) },
		func(o, old *scyllav1alpha1.ScyllaDBDatacenter) any { return ValidateScyllaDBDatacenterUpdate(o, old) },
		WarningsForScyllaDBDatacenter)
}

func FuzzValidateScyllaDBCluster(f *testing.F) {
	fuzzKind(f,
		func(o *scyllav1alpha1.ScyllaDBCluster) any { return ValidateScyllaDBCluster(o) },
		func(o, old *scyllav1alpha1.ScyllaDBCluster) any { return ValidateScyllaDBClusterUpdate(o, old) },
		WarningsForScyllaDBCluster)
}

func FuzzValidateScyllaDBManagerTask(f *testing.F) {
	fuzzKind(f,
		func(o *scyllav1alpha1.ScyllaDBManagerTask) any { return ValidateScyllaDBManagerTask(o) },
		func(o, old *scyllav1alpha1.ScyllaDBManagerTask) any { return ValidateScyllaDBManagerTaskUpdate(o, old) },
		WarningsForScyllaDBManagerTask)
}

func FuzzValidateScyllaDBBackupBucket(f *testing.F) {
	fuzzKind(f,
		func(o *scyllav1alpha1.ScyllaDBBackupBucket) any { return ValidateScyllaDBBackupBucket(o) },
		func(o, old *scyllav1alpha1.ScyllaDBBackupBucket) any {
			return ValidateScyllaDBBackupBucketUpdate(o, old)
		},
		WarningsForScyllaDBBackupBucket)
}

func FuzzValidateScyllaDBBackupEntry(f *testing.F) {
	fuzzKind(f,
		func(o *scyllav1alpha1.ScyllaDBBackupEntry) any { return ValidateScyllaDBBackupEntry(o) },
		func(o, old *scyllav1alpha1.ScyllaDBBackupEntry) any { return ValidateScyllaDBBackupEntryUpdate(o, old) },
		WarningsForScyllaDBBackupEntry)
}

func FuzzValidateRemoteKubernetesCluster(f *testing.F) {
	fuzzKind(f,
		func(o *scyllav1alpha1.RemoteKubernetesCluster) any { return ValidateRemoteKubernetesCluster(o) },
		func(o, old *scyllav1alpha1.RemoteKubernetesCluster) any {
			return ValidateRemoteKubernetesClusterUpdate(o, old)
		},
		WarningsForRemoteKubernetesCluster)
}

// FuzzCron checks the cron, glob and limit parsers on their own, where the fuzzer reaches their corners faster.
func FuzzCron(f *testing.F) {
	for _, s := range []string{"0 2 * * *", "@every 1h", "30 0 2 * * MON-FRI", "TZ=UTC @daily", "ks.t*", "dc1:[a-z]{x}", "dc1:100", "now+1d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = validateCron(s, nil)
		_ = validateTimezone(s, nil)
		_ = validateDCFilters([]string{s}, nil)
		_ = validateKeyspaceFilters([]string{s}, nil)
		_ = validateLocations([]string{s}, nil)
		_ = validateDCLimits([]string{s, s}, nil, "")
		_ = validateStartDate(s, nil)
		_, _ = SplitArguments(s)
		_, _ = ParseSize(s)
		_ = validateEndpoint(s, nil)
		_ = validateS3BucketName(s, nil)
		_ = validateSysctls([]string{s}, nil)
	})
}
