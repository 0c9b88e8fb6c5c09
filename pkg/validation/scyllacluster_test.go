package validation

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func newScyllaCluster(t testing.TB) *scyllav1.ScyllaCluster {
	return exampleOf[*scyllav1.ScyllaCluster](t, "scyllacluster-backups-repairs.yaml")
}

func TestValidateScyllaClusterRefuses(t *testing.T) {
	t.Parallel()
	racks := field.NewPath("spec", "datacenter", "racks")
	backup0 := field.NewPath("spec", "backups").Index(0)
	repair0 := field.NewPath("spec", "repairs").Index(0)
	runValidationCases(t, newScyllaCluster, ValidateScyllaCluster, []validationCase[*scyllav1.ScyllaCluster]{
		{
			name:   "a cron with six fields after the seconds",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Backups[0].Cron = new("0 0 2 * * * *") },
			want: field.ErrorList{field.Invalid(backup0.Child("cron"), "0 0 2 * * * *",
				`must be a cron expression with five fields and an optional leading seconds field, or @yearly, @monthly, @weekly, @daily, @hourly or "@every <duration>": expected 5 to 6 fields, found 7: [0 0 2 * * * *]`)},
		},
		{
			// Found by FuzzTranslateScyllaCluster: nothing can run without an image tag.
			name:   "no version",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Version = "" },
			want:   field.ErrorList{field.Required(field.NewPath("spec", "version"), "the ScyllaDB image tag is required, e.g. 2025.1.2")},
		},
		{
			// The translated ScyllaDBManagerTask would be refused: ScyllaDB Manager holds 32-bit retry counts.
			name:   "a retry count ScyllaDB Manager can't hold",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Repairs[0].NumRetries = new(int64(1) << 31) },
			want:   field.ErrorList{field.Invalid(repair0.Child("numRetries"), int64(1)<<31, "must be between 0 and 2147483647")},
		},
		{
			// Taken for "false" by the translator, which opts out only at "true".
			name: "an opt-out of ScyllaDB Manager that is neither true nor false",
			modify: func(sc *scyllav1.ScyllaCluster) {
				metav1.SetMetaDataAnnotation(&sc.ObjectMeta, naming.DisableGlobalScyllaDBManagerIntegrationAnnotation, "yes")
			},
			want: field.ErrorList{field.Invalid(field.NewPath("metadata", "annotations").Key(naming.DisableGlobalScyllaDBManagerIntegrationAnnotation), "yes", `must be "true" or "false"`)},
		},
		{
			// The client Service would be scylla.prod-client and the pods' host names scylla.prod-dc1-a-0.
			name:   "a name with a dot",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Name = "scylla.prod" },
			want: field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), "scylla.prod",
				"must not contain dots: the name labels the objects made for it and is part of its nodes' Service and host names")},
		},
		{
			// ScyllaDB Manager answers 400 "parse host IP address", and the translated task's schema refuses it.
			name:   "a repair host that is a name",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Repairs[0].Host = new("scylla-0.scylla.svc") },
			want: field.ErrorList{field.Invalid(repair0.Child("host"), "scylla-0.scylla.svc",
				"must be the IPv4 or IPv6 address of a node, e.g. 10.0.0.5: ScyllaDB Manager takes no host names")},
		},
		{
			// The image would be docker.io/scylladb/scylla:6.2:2025.1.2, which the ScyllaDBDatacenter's schema refuses.
			name: "repositories with a tag and with upper case",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.Repository = "docker.io/scylladb/scylla:6.2"
				sc.Spec.AgentRepository = "docker.io/ScyllaDB/scylla-manager-agent"
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "repository"), "docker.io/scylladb/scylla:6.2", "must be an image repository without a tag or digest, e.g. docker.io/scylladb/scylla: the image is <repository>:<tag>"),
				field.Invalid(field.NewPath("spec", "agentRepository"), "docker.io/ScyllaDB/scylla-manager-agent", "must be an image repository without a tag or digest, e.g. docker.io/scylladb/scylla-manager-agent: the image is <agentRepository>:<tag>"),
			},
		},
		{
			name:   "a cron with a CRON_TZ prefix",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Backups[0].Cron = new("CRON_TZ=UTC 0 2 * * *") },
			want:   field.ErrorList{field.Invalid(backup0.Child("cron"), "CRON_TZ=UTC 0 2 * * *", "must not start with TZ= or CRON_TZ=: schedules are in UTC or in the task's timezone")},
		},
		{
			name:   "a cron with a TZ prefix",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Repairs[0].Cron = new("TZ=UTC @daily") },
			want:   field.ErrorList{field.Invalid(repair0.Child("cron"), "TZ=UTC @daily", "must not start with TZ= or CRON_TZ=: schedules are in UTC or in the task's timezone")},
		},
		{
			name: "an @every of zero, less than a second, negative or with a fraction of a second",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.Repairs[0].Cron = new("@every 0s")
				sc.Spec.Backups[0].Cron = new("@every 1.5s")
			},
			want: field.ErrorList{
				field.Invalid(repair0.Child("cron"), "@every 0s", "@every needs a whole number of seconds, at least 1s, e.g. @every 12h"),
				field.Invalid(field.NewPath("spec", "backups").Index(0).Child("cron"), "@every 1.5s", "@every needs a whole number of seconds, at least 1s, e.g. @every 12h"),
			},
		},
		{
			name:   "a negative @every",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Repairs[0].Cron = new("@every -1h") },
			want:   field.ErrorList{field.Invalid(repair0.Child("cron"), "@every -1h", "@every needs a whole number of seconds, at least 1s, e.g. @every 12h")},
		},
		{
			name:   "an @every below a second",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Repairs[0].Cron = new("@every 100ms") },
			want:   field.ErrorList{field.Invalid(repair0.Child("cron"), "@every 100ms", "@every needs a whole number of seconds, at least 1s, e.g. @every 12h")},
		},
		{
			name:   "an @every without a duration",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Repairs[0].Cron = new("@every soon") },
			want: field.ErrorList{field.Invalid(repair0.Child("cron"), "@every soon",
				`must be a cron expression with five fields and an optional leading seconds field, or @yearly, @monthly, @weekly, @daily, @hourly or "@every <duration>": failed to parse duration @every soon: time: invalid duration "soon"`)},
		},
		{
			name:   "an unknown timezone",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Backups[0].Timezone = new("Mars/Olympus") },
			want:   field.ErrorList{field.Invalid(backup0.Child("timezone"), "Mars/Olympus", "must be an IANA time zone name such as Europe/Warsaw or UTC")},
		},
		{
			name:   "a timezone without cron",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Backups[0].Cron = nil },
			want:   field.ErrorList{field.Forbidden(backup0.Child("timezone"), "may be set only together with cron")},
		},
		{
			name:   "a start date that is neither relative nor RFC 3339",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Backups[1].StartDate = new("tomorrow") },
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "backups").Index(1).Child("startDate"), "tomorrow",
				"must be now, now+<duration> (e.g. now+3d2h) or an RFC 3339 time")},
		},
		{
			name:   "an interval that is not a duration",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Repairs[0].Interval = new("weekly") },
			want:   field.ErrorList{field.Invalid(repair0.Child("interval"), "weekly", "must be a non-negative duration in d, h, m and s, e.g. 7d or 1d12h")},
		},
		{
			name: "a negative retry wait",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.Repairs[0].RetryWait = &metav1.Duration{Duration: -time.Minute}
			},
			want: field.ErrorList{field.Invalid(repair0.Child("retryWait"), "-1m0s", "must not be negative")},
		},
		{
			name:   "a dc filter with an unclosed class and an empty one",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Repairs[0].DC = []string{"dc[1", "!"} },
			want: field.ErrorList{
				field.Invalid(repair0.Child("dc").Index(0), "dc[1", "glob pattern has a '[' without a closing ']'"),
				field.Invalid(repair0.Child("dc").Index(1), "!", "must be a datacenter glob pattern such as dc1 or !dc2*"),
			},
		},
		{
			// Commas separate patterns, as the established operator accepted: each pattern is checked.
			name: "keyspace filters with too many dots, an empty table, a bad pattern after a comma and an unbalanced brace",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.Backups[0].Keyspace = []string{"a.b.c", "ks.", "a, b.c.d", "ks.{t1", " , "}
			},
			want: field.ErrorList{
				field.Invalid(backup0.Child("keyspace").Index(0), "a.b.c", "must be <keyspace glob> or <keyspace glob>.<table glob>, e.g. ks1, ks1.table_* or !system*"),
				field.Invalid(backup0.Child("keyspace").Index(1), "ks.", "must be <keyspace glob> or <keyspace glob>.<table glob>, e.g. ks1, ks1.table_* or !system*"),
				field.Invalid(backup0.Child("keyspace").Index(2), "a, b.c.d", `pattern "b.c.d": must be <keyspace glob> or <keyspace glob>.<table glob>, e.g. ks1, ks1.table_* or !system*`),
				field.Invalid(backup0.Child("keyspace").Index(3), "ks.{t1", "glob pattern has a '{' without a closing '}'"),
				field.Invalid(backup0.Child("keyspace").Index(4), " , ", "must be <keyspace glob> or <keyspace glob>.<table glob>, e.g. ks1, ks1.table_* or !system*"),
			},
		},
		{
			name: "locations with an unknown provider and a path in the bucket",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.Backups[0].Location = []string{"ftp:bucket", "s3:bucket/prefix"}
			},
			want: field.ErrorList{
				field.Invalid(backup0.Child("location").Index(0), "ftp:bucket", "must be [<dc>:]<provider>:<bucket> with provider s3, gcs, azure or localstorage and a bucket of lowercase letters, digits, '.' and '-', e.g. s3:backups or dc1:gcs:dc1-backups"),
				field.Invalid(backup0.Child("location").Index(1), "s3:bucket/prefix", "must be [<dc>:]<provider>:<bucket> with provider s3, gcs, azure or localstorage and a bucket of lowercase letters, digits, '.' and '-', e.g. s3:backups or dc1:gcs:dc1-backups"),
			},
		},
		{
			name:   "a backup without a location",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Backups[0].Location = nil },
			want:   field.ErrorList{field.Required(backup0.Child("location"), "a backup needs at least one location, e.g. s3:backups")},
		},
		{
			name: "rate limits that are not numbers or set twice",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.Backups[0].RateLimit = []string{"fast", "dc1:-1", "10", "20", ":5"}
			},
			want: field.ErrorList{
				field.Invalid(backup0.Child("rateLimit").Index(0), "fast", "must be [<dc>:]<non-negative integer>, e.g. 100 or dc1:50"),
				field.Invalid(backup0.Child("rateLimit").Index(1), "dc1:-1", "must be [<dc>:]<non-negative integer>, e.g. 100 or dc1:50"),
				field.Invalid(backup0.Child("rateLimit").Index(3), "20", "sets the default (no datacenter) a second time"),
				field.Invalid(backup0.Child("rateLimit").Index(4), ":5", "must be [<dc>:]<non-negative integer>, e.g. 100 or dc1:50"),
			},
		},
		{
			name: "parallel limits that are not numbers or set twice for a datacenter",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.Backups[0].SnapshotParallel = []string{"two"}
				sc.Spec.Backups[0].UploadParallel = []string{"dc1:2", "dc1:3"}
			},
			want: field.ErrorList{
				field.Invalid(backup0.Child("snapshotParallel").Index(0), "two", "must be [<dc>:]<non-negative integer>, e.g. 2 or dc1:1"),
				field.Invalid(backup0.Child("uploadParallel").Index(1), "dc1:3", `sets datacenter "dc1" a second time`),
			},
		},
		{
			name:   "a small table threshold that is not a size",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Repairs[0].SmallTableThreshold = "big" },
			want:   field.ErrorList{field.Invalid(repair0.Child("smallTableThreshold"), "big", "must be a size such as 1GiB or 512MiB")},
		},
		{
			name:   "a repair and a backup with the same name",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Backups[1].Name = "weekly" },
			want:   field.ErrorList{field.Duplicate(field.NewPath("spec", "backups").Index(1).Child("name"), "weekly")},
		},
		{
			name:   "a task without a name",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Repairs[0].Name = "" },
			want:   field.ErrorList{field.Required(repair0.Child("name"), "every task needs a name")},
		},
		{
			name:   "a task name that is not a DNS subdomain",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Backups[0].Name = "A" },
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "backups").Index(0).Child("name"), "A",
				"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")},
		},
		{
			name: "two racks with the same name",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.Datacenter.Racks = append(sc.Spec.Datacenter.Racks, sc.Spec.Datacenter.Racks[0])
			},
			want: field.ErrorList{field.Duplicate(racks.Index(1).Child("name"), "a")},
		},
		{
			name: "requests above limits, a zero limit and a negative request",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.Datacenter.Racks[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}
				sc.Spec.Datacenter.Racks[0].AgentResources = corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("0")},
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")},
				}
			},
			want: field.ErrorList{
				field.Invalid(racks.Index(0).Child("resources", "requests").Key("cpu"), "8", "must be less than or equal to the cpu limit 4"),
				field.Invalid(racks.Index(0).Child("agentResources", "limits").Key("memory"), "0", "must be greater than 0"),
				field.Invalid(racks.Index(0).Child("agentResources", "requests").Key("cpu"), "-1", "must not be negative"),
			},
		},
		{
			name: "invalid label and annotation keys and values",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.PodMetadata = &scyllav1.ObjectTemplateMetadata{Labels: map[string]string{"team": "a b"}}
				sc.Spec.Datacenter.Racks[0].Storage.Metadata = &scyllav1.ObjectTemplateMetadata{Annotations: map[string]string{"-bad": "x"}}
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "podMetadata", "labels"), "a b", "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
				field.Invalid(racks.Index(0).Child("storage", "metadata", "annotations"), "-bad", "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
			},
		},
		{
			name: "a readiness gate that is not a qualified name",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "bad gate"}}
			},
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "readinessGates").Index(0).Child("conditionType"), "bad gate",
				"name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")},
		},
		{
			name: "parallel node operations on a version before 2026.2",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.EnableParallelNodeOperations = new(true)
			},
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "enableParallelNodeOperations"), true, `needs ScyllaDB 2026.2 or later, but spec.version is "2025.1.2"`)},
		},
		{
			name: "parallel node operations on a release candidate of 2026.2",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.Version = "2026.2.0-rc1"
				sc.Spec.EnableParallelNodeOperations = new(true)
			},
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "enableParallelNodeOperations"), true, `needs ScyllaDB 2026.2 or later, but spec.version is "2026.2.0-rc1"`)},
		},
		{
			name: "a Headless node Service on ScyllaDB 5.1",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.Version = "5.1.9"
				sc.Spec.ExposeOptions = &scyllav1.ExposeOptions{NodeService: &scyllav1.NodeServiceTemplate{Type: scyllav1.HeadlessServiceType}}
			},
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "exposeOptions", "nodeService", "type"), "Headless",
				`needs ScyllaDB 5.2 or later (2023.1 or later for enterprise versions) to replace nodes by host ID, but spec.version is "5.1.9"`)},
		},
		{
			name: "a LoadBalancer node Service on enterprise 2022.2",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.Version = "2022.2.0"
				sc.Spec.ExposeOptions = &scyllav1.ExposeOptions{NodeService: &scyllav1.NodeServiceTemplate{Type: scyllav1.LoadBalancerServiceType}}
			},
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "exposeOptions", "nodeService", "type"), "LoadBalancer",
				`needs ScyllaDB 5.2 or later (2023.1 or later for enterprise versions) to replace nodes by host ID, but spec.version is "2022.2.0"`)},
		},
		{
			name: "CQL ingress without DNS domains, with a bad ingress label",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.ExposeOptions = &scyllav1.ExposeOptions{CQL: &scyllav1.CQLExposeOptions{Ingress: &scyllav1.CQLExposeIngressOptions{
					ObjectTemplateMetadata: scyllav1.ObjectTemplateMetadata{Labels: map[string]string{"a/b/c": "x"}},
				}}}
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "exposeOptions", "cql", "ingress", "labels"), "a/b/c", "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"),
				field.Required(field.NewPath("spec", "dnsDomains"), "CQL ingress (spec.exposeOptions.cql.ingress) needs at least one DNS domain"),
			},
		},
		{
			name:   "a DNS domain that is not fully qualified",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.DNSDomains = []string{"localhost"} },
			want:   field.ErrorList{field.Invalid(field.NewPath("spec", "dnsDomains").Index(0), "localhost", "should be a domain with at least two segments separated by dots")},
		},
		{
			name:   "an external seed that is neither an IP nor a DNS name",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.ExternalSeeds = []string{"10.0.0.1:7000"} },
			want:   field.ErrorList{field.Invalid(field.NewPath("spec", "externalSeeds").Index(0), "10.0.0.1:7000", `"10.0.0.1:7000" is neither an IP address nor a DNS name`)},
		},
		{
			name:   "a sysctl without a value",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Sysctls = []string{"fs.aio-max-nr="} },
			want:   field.ErrorList{field.Invalid(field.NewPath("spec", "sysctls").Index(0), "fs.aio-max-nr=", "must be key=value with a sysctl name as key, e.g. fs.aio-max-nr=30000000")},
		},
		{
			name: "a sysctl key with a glob character other than '*' or a parent directory",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.Sysctls = []string{"net.ipv4.conf.eth?.rp_filter=1", "net/../../x=1", "net.ipv4.conf.*.rp_filter=1", "fs.aio-max-nr=1"}
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "sysctls").Index(0), "net.ipv4.conf.eth?.rp_filter=1", "must be key=value with a sysctl name as key, e.g. fs.aio-max-nr=30000000"),
				field.Invalid(field.NewPath("spec", "sysctls").Index(1), "net/../../x=1", "must be key=value with a sysctl name as key, e.g. fs.aio-max-nr=30000000"),
			},
		},
		{
			name:   "an IPv6 listen address in an IPv4 cluster",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.ScyllaArgs = "--smp 2 --listen-address ::1" },
			want:   field.ErrorList{field.Invalid(field.NewPath("spec", "scyllaArgs"), "::1", "--listen-address must be an IPv4 address: the cluster's primary IP family is IPv4")},
		},
		{
			name:   "a rack storage capacity that is not a positive quantity",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Datacenter.Racks[0].Storage.Capacity = "-1Gi" },
			want:   field.ErrorList{field.Invalid(racks.Index(0).Child("storage", "capacity"), "-1Gi", "must be a positive quantity, e.g. 10Gi")},
		},
		{
			name:   "an alternator port beyond 65535",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Alternator = &scyllav1.AlternatorSpec{Port: 70000} },
			want:   field.ErrorList{field.Invalid(field.NewPath("spec", "alternator", "port"), int32(70000), "must be a port number between 1 and 65535, or 0 for the default")},
		},
		{
			name:   "arguments with an unterminated quote",
			modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.ScyllaArgs = `--smp '2` },
			want:   field.ErrorList{field.Invalid(field.NewPath("spec", "scyllaArgs"), `--smp '2`, `must split into arguments as a POSIX shell would: "--smp '2" has an unterminated quote`)},
		},
		{
			name: "an IPv4 rpc address in an IPv6 cluster",
			modify: func(sc *scyllav1.ScyllaCluster) {
				sc.Spec.Network.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
				sc.Spec.ScyllaArgs = "--rpc_address=10.0.0.1"
			},
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "scyllaArgs"), "10.0.0.1", "--rpc-address must be an IPv6 address: the cluster's primary IP family is IPv6")},
		},
	})
}

func TestValidateScyllaClusterAccepts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		modify func(*scyllav1.ScyllaCluster)
	}{
		{name: "cron with seconds", modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Backups[0].Cron = new("30 0 2 * * *") }},
		{name: "@every", modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Backups[0].Cron = new("@every 12h") }},
		{name: "repositories of a private registry with a port", modify: func(sc *scyllav1.ScyllaCluster) {
			sc.Spec.Repository = "registry.example.com:5000/mirror/scylladb/scylla-enterprise"
			sc.Spec.AgentRepository = "localhost:5000/scylla-manager-agent"
		}},
		{name: "comma-separated filters, as the established operator accepted", modify: func(sc *scyllav1.ScyllaCluster) {
			sc.Spec.Repairs[0].DC = []string{"dc1,!dc2*"}
			sc.Spec.Repairs[0].Keyspace = []string{"ks1, !ks1.skip", "ks2"}
			sc.Spec.Backups[0].DC = []string{"dc1, dc2"}
			sc.Spec.Backups[0].Keyspace = []string{"ks1,ks2.t*"}
		}},
		{name: "the established operator's opt-out of ScyllaDB Manager", modify: func(sc *scyllav1.ScyllaCluster) {
			metav1.SetMetaDataAnnotation(&sc.ObjectMeta, naming.DisableGlobalScyllaDBManagerIntegrationAnnotation, "true")
		}},
		{name: "the opt-out of ScyllaDB Manager turned off", modify: func(sc *scyllav1.ScyllaCluster) {
			metav1.SetMetaDataAnnotation(&sc.ObjectMeta, naming.DisableGlobalScyllaDBManagerIntegrationAnnotation, "false")
		}},
		{name: "an IPv4 repair host", modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Repairs[0].Host = new("10.0.0.5") }},
		{name: "an IPv6 repair host", modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Repairs[0].Host = new("fd00::5") }},
		{name: "an RFC 3339 start date", modify: func(sc *scyllav1.ScyllaCluster) { sc.Spec.Backups[1].StartDate = new("2026-01-02T03:04:05Z") }},
		{name: "parallel node operations on 2026.2", modify: func(sc *scyllav1.ScyllaCluster) {
			sc.Spec.Version = "2026.2.0"
			sc.Spec.EnableParallelNodeOperations = new(true)
		}},
		{name: "a LoadBalancer node Service on 5.2", modify: func(sc *scyllav1.ScyllaCluster) {
			sc.Spec.Version = "5.2.0"
			sc.Spec.ExposeOptions = &scyllav1.ExposeOptions{NodeService: &scyllav1.NodeServiceTemplate{Type: scyllav1.LoadBalancerServiceType}}
		}},
		{name: "a ClusterIP node Service on any version", modify: func(sc *scyllav1.ScyllaCluster) {
			sc.Spec.Version = "4.6.0"
			sc.Spec.ExposeOptions = &scyllav1.ExposeOptions{NodeService: &scyllav1.NodeServiceTemplate{Type: scyllav1.ClusterIPServiceType}}
		}},
		{name: "disabled CQL ingress without DNS domains", modify: func(sc *scyllav1.ScyllaCluster) {
			sc.Spec.ExposeOptions = &scyllav1.ExposeOptions{CQL: &scyllav1.CQLExposeOptions{Ingress: &scyllav1.CQLExposeIngressOptions{Disabled: new(true)}}}
		}},
		{name: "escaped and class globs", modify: func(sc *scyllav1.ScyllaCluster) {
			sc.Spec.Repairs[0].Keyspace = []string{"ks[0-9]", `ks\[.t?`, "{ks1}*"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := newScyllaCluster(t)
			tc.modify(sc)
			if errs := ValidateScyllaCluster(sc); len(errs) != 0 {
				t.Errorf("unexpected errors: %v", errs.ToAggregate())
			}
		})
	}
}

func TestValidateScyllaClusterUpdateRackRemoval(t *testing.T) {
	t.Parallel()
	racks := field.NewPath("spec", "datacenter", "racks")
	withTwoRacks := func(t testing.TB) (*scyllav1.ScyllaCluster, *scyllav1.ScyllaCluster) {
		old := newScyllaCluster(t)
		second := old.Spec.Datacenter.Racks[0]
		second.Name = "b"
		second.Members = 0
		old.Spec.Datacenter.Racks = append(old.Spec.Datacenter.Racks, second)
		old.Generation = 4
		old.Status.ObservedGeneration = new(int64(4))
		old.Status.Racks = map[string]scyllav1.RackStatus{"a": {Members: 3}, "b": {Members: 0}}
		sc := old.DeepCopy()
		sc.Spec.Datacenter.Racks = sc.Spec.Datacenter.Racks[:1]
		return sc, old
	}
	for _, tc := range []struct {
		name   string
		modify func(old *scyllav1.ScyllaCluster)
		want   field.ErrorList
	}{
		{name: "scaled to zero and observed", modify: func(*scyllav1.ScyllaCluster) {}},
		{
			name:   "members still in the spec",
			modify: func(old *scyllav1.ScyllaCluster) { old.Spec.Datacenter.Racks[1].Members = 2 },
			want:   field.ErrorList{field.Forbidden(racks, `rack "b" can't be removed while its nodes are 2: scale it to 0 first`)},
		},
		{
			name:   "members still running",
			modify: func(old *scyllav1.ScyllaCluster) { old.Status.Racks["b"] = scyllav1.RackStatus{Members: 1} },
			want:   field.ErrorList{field.Forbidden(racks, `rack "b" can't be removed while it still runs 1 nodes: wait for the scale-down to 0 to finish`)},
		},
		{
			name:   "a status of an older generation",
			modify: func(old *scyllav1.ScyllaCluster) { old.Status.ObservedGeneration = new(int64(3)) },
			want:   field.ErrorList{field.Forbidden(racks, `rack "b" can't be removed until the status shows the current generation: wait for the operator to observe the scale-down to 0`)},
		},
		{
			name:   "a stale rack status",
			modify: func(old *scyllav1.ScyllaCluster) { old.Status.Racks["b"] = scyllav1.RackStatus{Stale: new(true)} },
			want:   field.ErrorList{field.Forbidden(racks, `rack "b" can't be removed until the status shows the current generation: wait for the operator to observe the scale-down to 0`)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc, old := withTwoRacks(t)
			tc.modify(old)
			if diff := cmp.Diff(tc.want, ValidateScyllaClusterUpdate(sc, old), ignoreOrigin); diff != "" {
				t.Errorf("errors differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWarningsForScyllaCluster(t *testing.T) {
	t.Parallel()
	sc := newScyllaCluster(t)
	if w := WarningsForScyllaCluster(sc); len(w) != 0 {
		t.Errorf("unexpected warnings for the example: %q", w)
	}
	sc.Spec.Sysctls = []string{"fs.aio-max-nr=1"}
	sc.Spec.ExposeOptions = &scyllav1.ExposeOptions{CQL: &scyllav1.CQLExposeOptions{}}
	sc.Spec.Network.HostNetworking = true
	sc.Spec.GenericUpgrade = &scyllav1.GenericUpgradeSpec{PollInterval: metav1.Duration{Duration: time.Second}}
	sc.Spec.CpuSet = true
	sc.Spec.Alternator = &scyllav1.AlternatorSpec{Port: 8000}
	sc.Spec.Repairs[0].Interval = new("7d")
	want := []string{
		"spec.sysctls is deprecated: every ScyllaDB pod sets them with a privileged init container; prefer tuning the nodes' kernel parameters where the nodes are provisioned",
		"spec.exposeOptions.cql is deprecated: expose nodes with spec.exposeOptions.nodeService and broadcastOptions instead",
		"spec.network.hostNetworking is deprecated: use spec.exposeOptions with broadcast type PodIP instead",
		"spec.genericUpgrade.pollInterval is deprecated and has no effect",
		"spec.cpuset is deprecated and has no effect: CPU pinning is always on",
		"spec.alternator.port is deprecated",
		"spec.repairs[0].interval is deprecated: use cron instead",
	}
	if diff := cmp.Diff(want, WarningsForScyllaCluster(sc)); diff != "" {
		t.Errorf("warnings differ (-want +got):\n%s", diff)
	}
}
