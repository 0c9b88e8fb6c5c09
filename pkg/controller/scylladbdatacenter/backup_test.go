package scylladbdatacenter

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/backupstorage"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

const (
	testCredentialsNamespace = "backup-credentials"
	tokenHashAnnotation      = "scylla-operator.scylladb.com/scylladb-manager-agent-auth-token-hash"
)

// newBackupTask returns a backup task of the datacenter sdcName storing into locations.
func newBackupTask(name, sdcName string, locations ...string) *scyllav1alpha1.ScyllaDBManagerTask {
	return &scyllav1alpha1.ScyllaDBManagerTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name, Generation: 1},
		Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
			ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBDatacenter", Name: sdcName},
			Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeBackup,
			Backup:             &scyllav1alpha1.ScyllaDBManagerBackupTaskOptions{Location: locations},
		},
	}
}

// newBucket returns a ScyllaDBBackupBucket of bucketName in us-east-1 whose credentials are in Secret secretName of
// testCredentialsNamespace, or without credentials when secretName is "".
func newBucket(name, bucketName, secretName string) *scyllav1alpha1.ScyllaDBBackupBucket {
	b := &scyllav1alpha1.ScyllaDBBackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1},
		Spec: scyllav1alpha1.ScyllaDBBackupBucketSpec{
			Provider:   scyllav1alpha1.ScyllaDBBackupProviderS3,
			BucketName: bucketName,
			Region:     "us-east-1",
		},
	}
	if len(secretName) != 0 {
		b.Spec.CredentialsSecretRef = &scyllav1alpha1.ScyllaDBBackupBucketSecretReference{Namespace: testCredentialsNamespace, Name: secretName}
	}
	return b
}

// newCredentials returns the user's credentials Secret name with the access key id and secret access key.
func newCredentials(name, id, key string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testCredentialsNamespace, Name: name},
		Data:       map[string][]byte{"access_key_id": []byte(id), "secret_access_key": []byte(key)},
	}
}

// backupWorld is a world with the scylla.scylladb.com objects and user Secrets of other namespaces around it, which
// fixture.world does not carry over from one step to the next.
type backupWorld struct {
	world
	scyllaObjects []runtime.Object
	userSecrets   []runtime.Object
}

// newBackupFixture returns a fixture over w.
func newBackupFixture(t *testing.T, w backupWorld) *fixture {
	t.Helper()
	f := newFixture(t, world{sdc: w.sdc, objects: append(append([]runtime.Object{}, w.objects...), w.userSecrets...)})
	f.cache(w.scyllaObjects...)
	return f
}

// backupStep runs one sync over w, checks its writes to Kubernetes objects and returns the world after it.
func backupStep(t *testing.T, name string, w backupWorld, wantWrites ...string) (backupWorld, *fixture) {
	t.Helper()
	f := newBackupFixture(t, w)
	f.syncWriting(name, wantWrites...)
	return backupWorld{world: f.world(), scyllaObjects: w.scyllaObjects, userSecrets: w.userSecrets}, f
}

// agentConfig returns the agent configuration file of the auth-token Secret in w, parsed.
func agentConfig(t *testing.T, w world) map[string]any {
	t.Helper()
	var config map[string]any
	if err := yaml.Unmarshal(object[*corev1.Secret](t, w, "basic-auth-token").Data["auth-token.yaml"], &config); err != nil {
		t.Fatal(err)
	}
	return config
}

// podHashes returns the agent configuration hash the pods of each StatefulSet of w carry.
func podHashes(t *testing.T, w world) []string {
	t.Helper()
	var hashes []string
	for _, name := range []string{"basic-dc1-a", "basic-dc1-b"} {
		hashes = append(hashes, object[*appsv1.StatefulSet](t, w, name).Spec.Template.Annotations[tokenHashAnnotation])
	}
	return hashes
}

// convergedBackupWorld returns a converged datacenter, with its nodes, and a backup task storing into bucket
// "backups" declared by a ScyllaDBBackupBucket whose credentials are "AKID1" / "secret1".
func convergedBackupWorld(t *testing.T) backupWorld {
	t.Helper()
	return backupWorld{
		world: withNodes(convergedWorld(t)),
		scyllaObjects: []runtime.Object{
			newBackupTask("daily", "basic", "s3:backups"),
			newBucket("shared", "backups", "shared-credentials"),
		},
		userSecrets: []runtime.Object{newCredentials("shared-credentials", "AKID1", "secret1")},
	}
}

func TestSyncMergesTheCredentialsOfTheBackupBucketIntoTheAgentConfig(t *testing.T) {
	t.Parallel()

	w := convergedBackupWorld(t)
	before := podHashes(t, w.world)
	// The credentials are copied into the datacenter's own Secret, and the agents restart to read them.
	w, f := backupStep(t, "bucket used", w, "update secrets basic-auth-token", "update statefulsets basic-dc1-a", "update statefulsets basic-dc1-b")
	want := map[string]any{
		"auth_token": testToken,
		"s3": map[string]any{
			"access_key_id":     "AKID1",
			"secret_access_key": "secret1",
			"provider":          "AWS",
			"region":            "us-east-1",
		},
	}
	if diff := cmp.Diff(want, agentConfig(t, w.world)); diff != "" {
		t.Errorf("unexpected agent config (-want +got):\n%s", diff)
	}
	secret := object[*corev1.Secret](t, w.world, "basic-auth-token")
	if diff := cmp.Diff([]metav1.OwnerReference{testControllerRef()}, secret.OwnerReferences); diff != "" {
		t.Errorf("the Secret is not controlled by the datacenter (-want +got):\n%s", diff)
	}
	if secret.Namespace != testNamespace || secret.Labels["app.kubernetes.io/managed-by"] != "scylla-operator" {
		t.Errorf("the Secret is not the datacenter's: %s/%s %v", secret.Namespace, secret.Name, secret.Labels)
	}
	after := podHashes(t, w.world)
	for i := range after {
		if after[i] == before[i] {
			t.Errorf("the pods of StatefulSet %d keep their agent configuration hash %q", i, after[i])
		}
	}
	f.checkDegraded("")
	for _, e := range f.events() {
		for _, s := range []string{"AKID1", "secret1"} {
			if strings.Contains(e, s) {
				t.Errorf("event %q holds a credential", e)
			}
		}
	}

	// At rest: nothing is written again.
	_, _ = backupStep(t, "steady", w)
}

func TestSyncRollsTheAgentsWhenTheBucketCredentialsChange(t *testing.T) {
	t.Parallel()

	w, _ := backupStep(t, "bucket used", convergedBackupWorld(t), "update secrets basic-auth-token", "update statefulsets basic-dc1-a", "update statefulsets basic-dc1-b")
	// The StatefulSet controller rolls the pods.
	for _, obj := range w.objects {
		if sts, ok := obj.(*appsv1.StatefulSet); ok {
			settle(sts)
		}
	}
	before := podHashes(t, w.world)

	w.userSecrets = []runtime.Object{newCredentials("shared-credentials", "AKID2", "secret2")}
	w, _ = backupStep(t, "credentials rotated", w, "update secrets basic-auth-token", "update statefulsets basic-dc1-a", "update statefulsets basic-dc1-b")
	if got := agentConfig(t, w.world)["s3"].(map[string]any)["access_key_id"]; got != "AKID2" {
		t.Errorf("expected the new access key id, got %v", got)
	}
	after := podHashes(t, w.world)
	if after[0] == before[0] || after[1] == before[1] {
		t.Errorf("the agent configuration hash did not change: %v, then %v", before, after)
	}

	// The task goes away: so do the credentials, and the agents restart without them.
	w.scyllaObjects = w.scyllaObjects[1:]
	w, _ = backupStep(t, "task deleted", w, "update secrets basic-auth-token", "update statefulsets basic-dc1-a", "update statefulsets basic-dc1-b")
	if _, ok := agentConfig(t, w.world)["s3"]; ok {
		t.Errorf("the agent config keeps an s3 section without a task: %v", agentConfig(t, w.world))
	}
}

func TestSyncLeavesTheAgentConfigAloneWithoutBucketCredentials(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name          string
		scyllaObjects []runtime.Object
	}{
		{
			name:          "a bucket without credentials",
			scyllaObjects: []runtime.Object{newBackupTask("daily", "basic", "s3:backups"), newBucket("shared", "backups", "")},
		},
		{
			name: "two buckets without credentials, in different regions and at different endpoints",
			scyllaObjects: []runtime.Object{
				newBackupTask("daily", "basic", "s3:backups", "s3:archive"),
				newBucket("shared", "backups", ""),
				func() runtime.Object {
					b := newBucket("archive", "archive", "")
					b.Spec.Region, b.Spec.Endpoint = "eu-west-1", "https://s3.example.com"
					return b
				}(),
			},
		},
		{
			name:          "an undeclared bucket",
			scyllaObjects: []runtime.Object{newBackupTask("daily", "basic", "s3:backups"), newBucket("shared", "other", "shared-credentials")},
		},
		{
			name:          "a location of another datacenter",
			scyllaObjects: []runtime.Object{newBackupTask("daily", "basic", "dc2:s3:backups"), newBucket("shared", "backups", "shared-credentials")},
		},
		{
			name:          "a task of another datacenter",
			scyllaObjects: []runtime.Object{newBackupTask("daily", "other", "s3:backups"), newBucket("shared", "backups", "shared-credentials")},
		},
		{
			name: "a repair task",
			scyllaObjects: []runtime.Object{func() runtime.Object {
				task := newBackupTask("daily", "basic", "s3:backups")
				task.Spec.Type, task.Spec.Backup = scyllav1alpha1.ScyllaDBManagerTaskTypeRepair, nil
				return task
			}(), newBucket("shared", "backups", "shared-credentials")},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := withNodes(convergedWorld(t))
			_, f := backupStep(t, tc.name, backupWorld{
				world:         w,
				scyllaObjects: tc.scyllaObjects,
				userSecrets:   []runtime.Object{newCredentials("shared-credentials", "AKID1", "secret1")},
			})
			for _, action := range f.kubeClient.Actions() {
				if get, ok := action.(clienttesting.GetAction); ok && get.GetNamespace() == testCredentialsNamespace {
					t.Errorf("the credentials Secret was read: %v", get)
				}
			}
			f.checkDegraded("")
		})
	}
}

func TestSyncLetsACustomAgentConfigSettingS3Win(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name   string
		custom string
		wantS3 bool
	}{
		{name: "a custom config setting s3 credentials", custom: "s3:\n  access_key_id: mine\n  secret_access_key: mine\n"},
		{name: "a custom config setting only the s3 region", custom: "s3:\n  region: eu-west-1\n"},
		{name: "a custom config without s3", custom: "auth_token: custom\n", wantS3: true},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sdc := newBasicSDC()
			sdc.Spec.Racks[1].ScyllaDBManagerAgent = &scyllav1alpha1.ScyllaDBManagerAgentTemplate{CustomConfigSecretRef: new("agent-config")}
			w := convergedBackupWorld(t)
			f := newBackupFixture(t, backupWorld{
				world:         world{sdc: sdc},
				scyllaObjects: w.scyllaObjects,
				userSecrets: append(w.userSecrets, &corev1.Secret{
					ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "agent-config"},
					Data:       map[string][]byte{"scylla-manager-agent.yaml": []byte(tc.custom)},
				}),
			})
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			config := agentConfig(t, f.world())
			if _, got := config["s3"]; got != tc.wantS3 {
				t.Errorf("expected an s3 section: %v, got %v", tc.wantS3, config)
			}
			f.checkDegraded("")
		})
	}
}

func TestSyncReportsNoBucketConflictWhenACustomAgentConfigSetsS3(t *testing.T) {
	t.Parallel()

	mixed := []runtime.Object{newBackupTask("daily", "basic", "s3:backups", "s3:archive"), newBucket("shared", "backups", "shared-credentials"), newBucket("archive", "archive", "")}
	differing := []runtime.Object{newBackupTask("daily", "basic", "s3:backups", "s3:archive"), newBucket("shared", "backups", "shared-credentials"), newBucket("archive", "archive", "archive-credentials")}
	tt := []struct {
		name             string
		scyllaObjects    []runtime.Object
		custom           string
		wantDegradedPart string
	}{
		{name: "a bucket with credentials and one without", scyllaObjects: mixed, custom: "s3:\n  region: eu-west-1\n"},
		{name: "two buckets with different credentials", scyllaObjects: differing, custom: "s3:\n  access_key_id: mine\n  secret_access_key: mine\n"},
		{name: "a missing credentials Secret", scyllaObjects: []runtime.Object{newBackupTask("daily", "basic", "s3:backups"), newBucket("shared", "backups", "gone")},
			custom: "s3:\n  region: eu-west-1\n"},
		{name: "a custom config without s3 leaves the conflict", scyllaObjects: mixed, custom: "auth_token: custom\n",
			wantDegradedPart: `SecretControllerDegraded: ScyllaDBBackupBuckets "archive" and "shared"`},
		{name: "an empty s3 section sets nothing", scyllaObjects: differing, custom: "s3: {}\n",
			wantDegradedPart: `SecretControllerDegraded: ScyllaDBBackupBuckets "archive" and "shared"`},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sdc := newBasicSDC()
			sdc.Spec.Racks[1].ScyllaDBManagerAgent = &scyllav1alpha1.ScyllaDBManagerAgentTemplate{CustomConfigSecretRef: new("agent-config")}
			f := newBackupFixture(t, backupWorld{
				world:         world{sdc: sdc},
				scyllaObjects: tc.scyllaObjects,
				userSecrets: []runtime.Object{
					newCredentials("shared-credentials", "AKID1", "secret1"),
					newCredentials("archive-credentials", "AKID2", "secret2"),
					&corev1.Secret{
						ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "agent-config"},
						Data:       map[string][]byte{"scylla-manager-agent.yaml": []byte(tc.custom)},
					},
				},
			})
			if err := f.sync(); err != nil {
				t.Fatalf("a spec error must not be retried, got %v", err)
			}
			if s3, ok := agentConfig(t, f.world())["s3"]; ok {
				t.Errorf("expected no s3 section, got %v", s3)
			}
			c := meta.FindStatusCondition(f.written("scylladbdatacenters", f.sdcName()).(*scyllav1alpha1.ScyllaDBDatacenter).Status.Conditions, "Degraded")
			switch {
			case c == nil:
				t.Fatal("no Degraded condition")
			case len(tc.wantDegradedPart) == 0 && c.Status != metav1.ConditionFalse:
				t.Errorf("expected Degraded False: the custom config's s3 section is used, not the buckets', got %+v", c)
			case len(tc.wantDegradedPart) != 0 && (c.Status != metav1.ConditionTrue || !strings.HasPrefix(c.Message, tc.wantDegradedPart)):
				t.Errorf("expected Degraded True with a message starting %q, got %+v", tc.wantDegradedPart, c)
			}
		})
	}
}

func TestSyncReportsBucketsTheAgentCantReach(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name          string
		scyllaObjects []runtime.Object
		userSecrets   []runtime.Object
		wantS3Key     string
		wantDegraded  string
	}{
		{
			name: "two buckets with different credentials",
			scyllaObjects: []runtime.Object{
				newBackupTask("daily", "basic", "s3:backups", "s3:archive"),
				newBucket("shared", "backups", "shared-credentials"),
				newBucket("archive", "archive", "archive-credentials"),
			},
			userSecrets: []runtime.Object{
				newCredentials("shared-credentials", "AKID1", "secret1"),
				newCredentials("archive-credentials", "AKID2", "secret2"),
			},
			wantDegraded: `SecretControllerDegraded: ScyllaDBBackupBuckets "archive" and "shared", both used by this datacenter's backup tasks, have different credentials or S3 settings, and the ScyllaDB Manager agent has one s3 configuration: neither is used; use buckets with the same credentials, region and endpoint, or set s3 in a custom agent config`,
		},
		{
			name: "a bucket with credentials and one without",
			scyllaObjects: []runtime.Object{
				newBackupTask("daily", "basic", "s3:backups"),
				newBackupTask("weekly", "basic", "s3:archive"),
				newBucket("shared", "backups", "shared-credentials"),
				newBucket("archive", "archive", ""),
			},
			userSecrets: []runtime.Object{newCredentials("shared-credentials", "AKID1", "secret1")},
			wantDegraded: `SecretControllerDegraded: ScyllaDBBackupBuckets "archive" and "shared", both used by this datacenter's backup tasks, have different credentials: ` +
				`"shared" has a credentialsSecretRef and "archive" has none (it uses the agents' own role), and the ScyllaDB Manager agent has one s3 configuration, ` +
				`whose keys would apply to both: no s3 settings are added; use buckets that all have credentials, the same, or all have none, or set s3 in a custom agent config`,
		},
		{
			name: "one bucket declared twice, with credentials and without",
			scyllaObjects: []runtime.Object{
				newBackupTask("daily", "basic", "s3:backups"),
				newBucket("shared", "backups", "shared-credentials"),
				newBucket("shared-by-role", "backups", ""),
			},
			userSecrets: []runtime.Object{newCredentials("shared-credentials", "AKID1", "secret1")},
			wantDegraded: `SecretControllerDegraded: ScyllaDBBackupBuckets "shared" and "shared-by-role", both used by this datacenter's backup tasks, have different credentials: ` +
				`"shared" has a credentialsSecretRef and "shared-by-role" has none (it uses the agents' own role), and the ScyllaDB Manager agent has one s3 configuration, ` +
				`whose keys would apply to both: no s3 settings are added; use buckets that all have credentials, the same, or all have none, or set s3 in a custom agent config`,
		},
		{
			name: "one bucket declared twice, in different regions",
			scyllaObjects: []runtime.Object{
				newBackupTask("daily", "basic", "s3:backups"),
				newBucket("shared", "backups", "shared-credentials"),
				func() runtime.Object {
					b := newBucket("shared-west", "backups", "shared-credentials")
					b.Spec.Region = "us-west-2"
					return b
				}(),
			},
			userSecrets: []runtime.Object{newCredentials("shared-credentials", "AKID1", "secret1")},
			wantDegraded: `SecretControllerDegraded: ScyllaDBBackupBuckets "shared" and "shared-west", both used by this datacenter's backup tasks, have different credentials or S3 settings, ` +
				`and the ScyllaDB Manager agent has one s3 configuration: neither is used; use buckets with the same credentials, region and endpoint, or set s3 in a custom agent config`,
		},
		{
			name: "two tasks storing into two buckets with the same credentials",
			scyllaObjects: []runtime.Object{
				newBackupTask("daily", "basic", "s3:backups"),
				newBackupTask("weekly", "basic", "dc1:s3:archive"),
				newBucket("shared", "backups", "shared-credentials"),
				newBucket("archive", "archive", "archive-credentials"),
			},
			userSecrets: []runtime.Object{
				newCredentials("shared-credentials", "AKID1", "secret1"),
				newCredentials("archive-credentials", "AKID1", "secret1"),
			},
			wantS3Key: "AKID1",
		},
		{
			name: "a missing credentials Secret",
			scyllaObjects: []runtime.Object{
				newBackupTask("daily", "basic", "s3:backups"),
				newBucket("shared", "backups", "shared-credentials"),
			},
			wantDegraded: `SecretControllerDegraded: can't use the credentials of ScyllaDBBackupBucket "shared": Secret "backup-credentials/shared-credentials" does not exist`,
		},
		{
			name: "a credentials Secret without the secret access key",
			scyllaObjects: []runtime.Object{
				newBackupTask("daily", "basic", "s3:backups"),
				newBucket("shared", "backups", "shared-credentials"),
			},
			userSecrets:  []runtime.Object{newCredentials("shared-credentials", "AKID1", "")},
			wantDegraded: `SecretControllerDegraded: can't use the credentials of ScyllaDBBackupBucket "shared": Secret "backup-credentials/shared-credentials" has no key "secret_access_key"`,
		},
		{
			name: "a missing credentials Secret next to a bucket that works",
			scyllaObjects: []runtime.Object{
				newBackupTask("daily", "basic", "s3:backups", "s3:archive"),
				newBucket("shared", "backups", "shared-credentials"),
				newBucket("archive", "archive", "archive-credentials"),
			},
			userSecrets:  []runtime.Object{newCredentials("shared-credentials", "AKID1", "secret1")},
			wantS3Key:    "AKID1",
			wantDegraded: `SecretControllerDegraded: can't use the credentials of ScyllaDBBackupBucket "archive": Secret "backup-credentials/archive-credentials" does not exist`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newBackupFixture(t, backupWorld{world: world{sdc: newBasicSDC()}, scyllaObjects: tc.scyllaObjects, userSecrets: tc.userSecrets})
			f.controller.recheckInterval = 0
			if err := f.sync(); err != nil {
				t.Fatalf("a spec error must not be retried, got %v", err)
			}
			f.checkDegraded(tc.wantDegraded)
			w := f.world()
			// The datacenter runs all the same, with the credentials that are usable.
			object[*appsv1.StatefulSet](t, w, "basic-dc1-a")
			var gotKey any
			if s3, ok := agentConfig(t, w)["s3"].(map[string]any); ok {
				gotKey = s3["access_key_id"]
			}
			if len(tc.wantS3Key) == 0 && gotKey != nil || len(tc.wantS3Key) != 0 && gotKey != tc.wantS3Key {
				t.Errorf("expected access key id %q, got %v", tc.wantS3Key, gotKey)
			}
			// The credentials Secret is not watched: the datacenter is synced again later.
			if diff := cmp.Diff([]string{"scylla/basic"}, queued(f.controller)); diff != "" {
				t.Errorf("unexpected keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncKeepsTheAgentConfigWhenTheCredentialsCantBeRead(t *testing.T) {
	t.Parallel()

	w, _ := backupStep(t, "bucket used", convergedBackupWorld(t), "update secrets basic-auth-token", "update statefulsets basic-dc1-a", "update statefulsets basic-dc1-b")
	f := newBackupFixture(t, w)
	f.kubeClient.PrependReactor("get", "secrets", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetNamespace() != testCredentialsNamespace {
			return false, nil, nil
		}
		return true, nil, apierrors.NewServiceUnavailable("etcd is down")
	})
	err := f.sync()
	if err == nil || isSpecOnly(err) {
		t.Fatalf("expected an error to retry, got %v", err)
	}
	if writes := f.kubeWrites(); len(writes) != 0 {
		t.Errorf("expected no writes, got %v", writes)
	}
}

func TestBackupBucketNames(t *testing.T) {
	t.Parallel()

	deleting := newBackupTask("deleting", "basic", "s3:going")
	deleting.DeletionTimestamp = &metav1.Time{}
	tasks := []*scyllav1alpha1.ScyllaDBManagerTask{
		newBackupTask("daily", "basic", "s3:backups", "dc1:s3:dc1-only", "dc2:s3:dc2-only", "gcs:backups-gcs", "dc1:localstorage:x"),
		newBackupTask("weekly", "basic", "s3:backups", "s3:archive"),
		newBackupTask("theirs", "other", "s3:theirs"),
		deleting,
	}
	want := []string{"archive", "backups", "dc1-only"}
	if diff := cmp.Diff(want, backupBucketNames(newBasicSDC(), tasks)); diff != "" {
		t.Errorf("unexpected buckets (-want +got):\n%s", diff)
	}
}

func TestMakeS3Config(t *testing.T) {
	t.Parallel()

	credentials := map[string][]byte{"access_key_id": []byte("AKID\n"), "secret_access_key": []byte("secret")}
	tt := []struct {
		name     string
		modify   func(b *scyllav1alpha1.ScyllaDBBackupBucket)
		data     map[string][]byte
		want     *scyllaagent.S3Config
		wantErr  string
		specOnly bool
	}{
		{
			name: "AWS",
			data: credentials,
			want: &scyllaagent.S3Config{AccessKeyID: "AKID", SecretAccessKey: "secret", Provider: "AWS", Region: "us-east-1"},
		},
		{
			name: "an S3-compatible store",
			modify: func(b *scyllav1alpha1.ScyllaDBBackupBucket) {
				b.Spec.Endpoint, b.Spec.Region = "http://127.0.0.1:7070", ""
			},
			data: credentials,
			want: &scyllaagent.S3Config{AccessKeyID: "AKID", SecretAccessKey: "secret", Provider: "Minio", Endpoint: "http://127.0.0.1:7070"},
		},
		{
			name:    "no access key id, and the error quotes no credential",
			data:    map[string][]byte{"secret_access_key": []byte("secret")},
			wantErr: `can't use the credentials of ScyllaDBBackupBucket "shared": Secret "backup-credentials/shared-credentials" has no key "access_key_id"`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBucket("shared", "backups", "shared-credentials")
			if tc.modify != nil {
				tc.modify(b)
			}
			got, err := makeS3Config(b, tc.data)
			if checkError(t, err, tc.wantErr, true) {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChooseS3Config(t *testing.T) {
	t.Parallel()

	a := &scyllaagent.S3Config{AccessKeyID: "a", SecretAccessKey: "a", Provider: "AWS"}
	sameAsA := &scyllaagent.S3Config{AccessKeyID: "a", SecretAccessKey: "a", Provider: "AWS"}
	otherRegion := &scyllaagent.S3Config{AccessKeyID: "a", SecretAccessKey: "a", Provider: "AWS", Region: "eu-west-1"}
	tt := []struct {
		name    string
		configs []backupstorage.BucketS3Config
		want    *scyllaagent.S3Config
		wantErr bool
	}{
		{name: "none"},
		{name: "one", configs: []backupstorage.BucketS3Config{{Bucket: "x", Config: a}}, want: a},
		{name: "two that agree", configs: []backupstorage.BucketS3Config{{Bucket: "x", Config: a}, {Bucket: "y", Config: sameAsA}}, want: a},
		{name: "two in different regions", configs: []backupstorage.BucketS3Config{{Bucket: "x", Config: a}, {Bucket: "y", Config: otherRegion}}, wantErr: true},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := chooseS3Config(tc.configs)
			if (err != nil) != tc.wantErr || (err != nil && !isSpecError(err)) {
				t.Fatalf("expected a spec error: %v, got %v", tc.wantErr, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBackupEventsEnqueueTheDatacentersThatUseTheBucket(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name string
		fire func(task, bucket cache.ResourceEventHandler)
		want []string
	}{
		{
			name: "a backup task of the datacenter",
			fire: func(task, _ cache.ResourceEventHandler) {
				task.OnAdd(newBackupTask("daily", "basic", "s3:backups"), false)
			},
			want: []string{"scylla/basic"},
		},
		{
			name: "a backup task moved to another datacenter",
			fire: func(task, _ cache.ResourceEventHandler) {
				task.OnUpdate(newBackupTask("daily", "basic", "s3:backups"), newBackupTask("daily", "other", "s3:backups"))
			},
			want: []string{"scylla/basic", "scylla/other"},
		},
		{
			name: "a deleted backup task, seen late",
			fire: func(task, _ cache.ResourceEventHandler) {
				task.OnDelete(cache.DeletedFinalStateUnknown{Obj: newBackupTask("daily", "basic", "s3:backups")})
			},
			want: []string{"scylla/basic"},
		},
		{
			name: "a bucket the datacenter's tasks use",
			fire: func(_, bucket cache.ResourceEventHandler) {
				bucket.OnAdd(newBucket("shared", "backups", "shared-credentials"), false)
			},
			want: []string{"scylla/basic"},
		},
		{
			name: "a bucket nobody uses",
			fire: func(_, bucket cache.ResourceEventHandler) {
				bucket.OnDelete(newBucket("unused", "unused", "shared-credentials"))
			},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, world{sdc: newBasicSDC()})
			f.cache(newBackupTask("daily", "basic", "dc1:s3:backups"), newBackupTask("theirs", "other", "s3:theirs"))
			tc.fire(f.controller.taskHandlerFuncs(), f.controller.bucketHandlerFuncs())
			if diff := cmp.Diff(tc.want, queued(f.controller)); diff != "" {
				t.Errorf("unexpected keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestABucketSpecErrorDoesNotHideAnErrorToRetry(t *testing.T) {
	t.Parallel()

	bucketErr := newSpecError("buckets disagree")
	tt := []struct {
		name         string
		err          error
		wantSpecOnly bool
	}{
		{name: "only the bucket error", err: withBackupErr(nil, bucketErr), wantSpecOnly: true},
		{name: "a failed write and the bucket error", err: withBackupErr(apierrors.NewServiceUnavailable("down"), bucketErr)},
		{name: "a spec error of the Secret and the bucket error", err: withBackupErr(newSpecError("in the way"), bucketErr), wantSpecOnly: true},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := isSpecOnly(tc.err); got != tc.wantSpecOnly {
				t.Errorf("expected spec only: %v, got %v for %v", tc.wantSpecOnly, got, tc.err)
			}
		})
	}
	if err := apierrors.NewBadRequest("x"); withBackupErr(err, nil) != error(err) {
		t.Errorf("an error without a bucket error is not returned as is")
	}
}

// withOverride returns w with the datacenter annotated to take its auth token from Secret "cluster-token", which
// holds the agent configuration of token and s3, as a ScyllaDBCluster's remote copy does.
func withOverride(t *testing.T, w backupWorld, token string, s3 *scyllaagent.S3Config) backupWorld {
	t.Helper()
	data, err := scyllaagent.MakeConfig(token, s3)
	if err != nil {
		t.Fatal(err)
	}
	w.sdc = w.sdc.DeepCopy()
	w.sdc.Annotations = map[string]string{naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot: "cluster-token"}
	// In the datacenter's namespace, the Secret is carried from one step to the next with the world's objects.
	w.objects = append(w.objects, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "cluster-token"},
		Data:       map[string][]byte{naming.ScyllaDBManagerAgentAuthTokenKey: data},
	})
	return w
}

func TestSyncTakesTheS3SectionOfAClusterDatacenterFromItsTokenOverride(t *testing.T) {
	t.Parallel()

	fromCluster := &scyllaagent.S3Config{AccessKeyID: "CLUSTERKEY", SecretAccessKey: "cluster-secret", Provider: "Minio", Endpoint: "http://minio:9000"}
	w := withOverride(t, backupWorld{world: withNodes(convergedWorld(t))}, testToken, fromCluster)
	w, f := backupStep(t, "override with s3", w, "update secrets basic-auth-token", "update statefulsets basic-dc1-a", "update statefulsets basic-dc1-b")
	want := map[string]any{
		"auth_token": testToken,
		"s3": map[string]any{
			"access_key_id":     "CLUSTERKEY",
			"secret_access_key": "cluster-secret",
			"provider":          "Minio",
			"endpoint":          "http://minio:9000",
		},
	}
	if diff := cmp.Diff(want, agentConfig(t, w.world)); diff != "" {
		t.Errorf("unexpected agent config (-want +got):\n%s", diff)
	}
	f.checkDegraded("")
	_, _ = backupStep(t, "steady", w)

	// The datacenter's own backup tasks to a declared bucket win over what the override carries.
	own := convergedBackupWorld(t)
	w.scyllaObjects, w.userSecrets = own.scyllaObjects, append(w.userSecrets, own.userSecrets...)
	w, _ = backupStep(t, "own bucket", w, "update secrets basic-auth-token", "update statefulsets basic-dc1-a", "update statefulsets basic-dc1-b")
	if got := agentConfig(t, w.world)["s3"].(map[string]any)["access_key_id"]; got != "AKID1" {
		t.Errorf("expected the own bucket's access key id, got %v", got)
	}
}

func TestSyncReportsAClusterDatacenterOwnBucketWithoutCredentialsBesideTheClusterKeys(t *testing.T) {
	t.Parallel()

	fromCluster := &scyllaagent.S3Config{AccessKeyID: "CLUSTERKEY", SecretAccessKey: "cluster-secret", Provider: "AWS", Region: "us-east-1"}
	tt := []struct {
		name         string
		s3           *scyllaagent.S3Config
		custom       string
		wantDegraded string
	}{
		{
			name: "the cluster's buckets have credentials",
			s3:   fromCluster,
			wantDegraded: `SecretControllerDegraded: ScyllaDBBackupBucket "by-role", used by this datacenter's backup tasks, has no credentialsSecretRef ` +
				`(it uses the agents' own role), and the s3 settings of the ScyllaDBCluster's backup buckets, in the agent auth-token Secret "cluster-token" ` +
				`named by annotation "internal.scylla-operator.scylladb.com/scylladb-manager-agent-auth-token-override-secret-ref", have credentials; ` +
				`the ScyllaDB Manager agent has one s3 configuration, whose keys would apply to both: no s3 settings are added; ` +
				`use buckets that all have credentials, the same, or all have none, or set s3 in a custom agent config`,
		},
		{name: "the cluster gives no s3 section"},
		{name: "a custom agent config sets s3", s3: fromCluster, custom: "s3:\n  region: eu-west-1\n"},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := withOverride(t, backupWorld{world: world{sdc: newBasicSDC()}}, testToken, tc.s3)
			if len(tc.custom) != 0 {
				w.sdc.Spec.Racks[1].ScyllaDBManagerAgent = &scyllav1alpha1.ScyllaDBManagerAgentTemplate{CustomConfigSecretRef: new("agent-config")}
				w.userSecrets = append(w.userSecrets, &corev1.Secret{
					ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "agent-config"},
					Data:       map[string][]byte{"scylla-manager-agent.yaml": []byte(tc.custom)},
				})
			}
			w.scyllaObjects = []runtime.Object{newBackupTask("daily", "basic", "s3:backups"), newBucket("by-role", "backups", "")}
			f := newBackupFixture(t, w)
			if err := f.sync(); err != nil {
				t.Fatalf("a spec error must not be retried, got %v", err)
			}
			f.checkDegraded(tc.wantDegraded)
			if s3, ok := agentConfig(t, f.world())["s3"]; ok {
				t.Errorf("expected no s3 section, got %v", s3)
			}
		})
	}
}

func TestSyncReportsAnUnreadableTokenOverride(t *testing.T) {
	t.Parallel()

	w := withOverride(t, backupWorld{world: withNodes(convergedWorld(t))}, testToken, nil)
	w.objects[len(w.objects)-1].(*corev1.Secret).Data[naming.ScyllaDBManagerAgentAuthTokenKey] = []byte("s3: [not: a map")
	f := newBackupFixture(t, w)
	err := f.sync()
	if err == nil || !strings.Contains(err.Error(), `of the agent auth-token Secret "cluster-token" named by annotation`) || !strings.Contains(err.Error(), "not a valid YAML agent configuration") {
		t.Errorf("expected an error about the override's file, got %v", err)
	}
}

func TestAgentS3FromConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file string
		want       *scyllaagent.S3Config
		wantErr    bool
	}{
		{name: "token only", file: "auth_token: x\n"},
		{name: "empty section", file: "auth_token: x\ns3: {}\n"},
		{name: "a section", file: "auth_token: x\ns3:\n  access_key_id: a\n  secret_access_key: b\n", want: &scyllaagent.S3Config{AccessKeyID: "a", SecretAccessKey: "b"}},
		{name: "not YAML", file: "s3: [", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := agentS3FromConfig([]byte(tc.file))
			if (err != nil) != tc.wantErr {
				t.Fatalf("expected an error: %v, got %v", tc.wantErr, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
