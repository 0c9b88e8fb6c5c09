package scylladbcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1informers "github.com/scyllakube/client/scylla/informers/externalversions/scylla/v1alpha1"
	scyllav1alpha1listers "github.com/scyllakube/client/scylla/listers/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/backupstorage"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
)

// Bucket credentials for the datacenters of a ScyllaDBCluster (backup-storage.md, "Credentials"). A ScyllaDBCluster's
// backup ScyllaDBManagerTasks, the ScyllaDBBackupBuckets they store into and the buckets' credentials Secrets all
// live in the meta cluster, while its datacenters run in remote clusters, whose operators see none of them. So the
// ScyllaDBCluster controller, in the meta cluster, works out the agents' s3 section per datacenter (a location
// `<dc>:s3:<bucket>` applies to datacenter <dc> only, `s3:<bucket>` to all) and writes it, beside the auth token,
// into the agent configuration file of the token Secret it already copies into each remote namespace. The remote
// ScyllaDBDatacenter controller takes the s3 section from there as it takes the token (scylladbdatacenter's
// backup.go), merges it into the agent configuration it generates, a custom agent config setting s3 still winning,
// and rolls the agents when it changes. The meta token Secret, which the manager-controller reads, keeps the token
// only.
//
// Credentials Secrets are users' objects, outside the informer caches: they are read through the API, at most once
// per sync each (originals), and a ScyllaDBCluster whose agents get credentials is synced again every referencedObjectsPeriod so
// that a changed Secret reaches them.

// scyllaDBClusterTaskKind is the kind a ScyllaDBManagerTask's spec.scyllaDBClusterRef names to target a
// ScyllaDBCluster.
const scyllaDBClusterTaskKind = "ScyllaDBCluster"

// backupWatch is what the controller reads to give the agents the credentials of their backup buckets.
type backupWatch struct {
	taskLister   scyllav1alpha1listers.ScyllaDBManagerTaskLister
	bucketLister scyllav1alpha1listers.ScyllaDBBackupBucketLister
}

// WatchBackups makes the controller give the agents of every datacenter of a ScyllaDBCluster the credentials of the
// declared ScyllaDBBackupBuckets its backup ScyllaDBManagerTasks store into, reading tasks and buckets through the
// given informers. Call it after NewController, before the informers start and the controller runs.
func (c *Controller) WatchBackups(taskInformer scyllav1alpha1informers.ScyllaDBManagerTaskInformer, bucketInformer scyllav1alpha1informers.ScyllaDBBackupBucketInformer) error {
	if c.backups != nil {
		return errors.New("can't watch backups twice")
	}
	c.backups = &backupWatch{taskLister: taskInformer.Lister(), bucketLister: bucketInformer.Lister()}
	c.cachesToSync = append(c.cachesToSync, taskInformer.Informer().HasSynced, bucketInformer.Informer().HasSynced)
	if _, err := taskInformer.Informer().AddEventHandler(c.backupTaskHandlerFuncs()); err != nil {
		return fmt.Errorf("can't add ScyllaDBManagerTask event handler: %w", err)
	}
	if _, err := bucketInformer.Informer().AddEventHandler(c.backupBucketHandlerFuncs()); err != nil {
		return fmt.Errorf("can't add ScyllaDBBackupBucket event handler: %w", err)
	}
	return nil
}

// isBackupTaskOfCluster tells whether task is a backup task of a ScyllaDBCluster, and names it.
func isBackupTaskOfCluster(task *scyllav1alpha1.ScyllaDBManagerTask) (cache.ObjectName, bool) {
	if task.Spec.ScyllaDBClusterRef.Kind != scyllaDBClusterTaskKind || task.Spec.Type != scyllav1alpha1.ScyllaDBManagerTaskTypeBackup || task.Spec.Backup == nil {
		return cache.ObjectName{}, false
	}
	return cache.NewObjectName(task.Namespace, task.Spec.ScyllaDBClusterRef.Name), true
}

// backupTaskHandlerFuncs enqueue the ScyllaDBCluster a backup task targets, before and after a change.
func (c *Controller) backupTaskHandlerFuncs() cache.ResourceEventHandlerFuncs {
	enqueue := func(objs ...any) {
		for _, obj := range objs {
			task, err := controllerhelpers.ObjectFromDeleteEvent[*scyllav1alpha1.ScyllaDBManagerTask](obj)
			if err != nil {
				utilruntime.HandleError(err)
				continue
			}
			if name, ok := isBackupTaskOfCluster(task); ok {
				c.queue.Add(name.String())
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(obj) },
		UpdateFunc: func(oldObj, newObj any) { enqueue(oldObj, newObj) },
		DeleteFunc: func(obj any) { enqueue(obj) },
	}
}

// backupBucketHandlerFuncs enqueue the ScyllaDBClusters whose backup tasks store into a ScyllaDBBackupBucket's
// bucket, before and after a change.
func (c *Controller) backupBucketHandlerFuncs() cache.ResourceEventHandlerFuncs {
	enqueue := func(objs ...any) {
		var bucketNames []string
		for _, obj := range objs {
			bucket, err := controllerhelpers.ObjectFromDeleteEvent[*scyllav1alpha1.ScyllaDBBackupBucket](obj)
			if err != nil {
				utilruntime.HandleError(err)
				continue
			}
			bucketNames = append(bucketNames, bucket.Spec.BucketName)
		}
		tasks, err := c.backups.taskLister.List(labels.Everything())
		if err != nil {
			utilruntime.HandleError(fmt.Errorf("can't list ScyllaDBManagerTasks: %w", err))
			return
		}
		for _, task := range tasks {
			name, ok := isBackupTaskOfCluster(task)
			if !ok {
				continue
			}
			// Whatever datacenter a location names: the sync tells which it applies to.
			if slices.ContainsFunc(task.Spec.Backup.Location, func(location string) bool {
				_, bucket, ok := backupstorage.ParseS3Location(location)
				return ok && slices.Contains(bucketNames, bucket)
			}) {
				c.queue.Add(name.String())
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(obj) },
		UpdateFunc: func(oldObj, newObj any) { enqueue(oldObj, newObj) },
		DeleteFunc: func(obj any) { enqueue(obj) },
	}
}

// backupS3Configs are the agents' s3 sections of a ScyllaDBCluster's datacenters.
type backupS3Configs struct {
	// byDatacenter is the s3 section of each datacenter that gets one, by name.
	byDatacenter map[string]*scyllaagent.S3Config
	// unknown tells that the sections could not be worked out (an API read failed): the remote agent
	// configurations must stay as they are.
	unknown bool
	// readsCredentials tells whether a credentials Secret was read, so that the ScyllaDBCluster is synced again to
	// follow it.
	readsCredentials bool
}

// forDatacenter returns the s3 section of datacenter dc, nil for none.
func (b backupS3Configs) forDatacenter(dc string) *scyllaagent.S3Config {
	return b.byDatacenter[dc]
}

// makeBackupS3Configs returns the s3 section each datacenter of sc needs for the declared buckets its live backup
// tasks store into. Problems only a change of the objects fixes (a missing credentials Secret or key, two buckets of
// one datacenter that disagree) leave the buckets concerned out and are returned as the error; any other error makes
// the sections unknown.
func (c *Controller) makeBackupS3Configs(ctx context.Context, sc *scyllav1alpha1.ScyllaDBCluster, originals *originals) (backupS3Configs, error) {
	if c.backups == nil {
		return backupS3Configs{}, nil
	}
	tasks, err := c.backups.taskLister.ScyllaDBManagerTasks(sc.Namespace).List(labels.Everything())
	if err != nil {
		return backupS3Configs{unknown: true}, fmt.Errorf("can't list ScyllaDBManagerTasks: %w", err)
	}
	var locations []string
	for _, task := range tasks {
		if name, ok := isBackupTaskOfCluster(task); ok && task.DeletionTimestamp == nil && name.Name == sc.Name {
			locations = append(locations, task.Spec.Backup.Location...)
		}
	}
	if len(locations) == 0 {
		return backupS3Configs{}, nil
	}
	allBuckets, err := c.backups.bucketLister.List(labels.Everything())
	if err != nil {
		return backupS3Configs{unknown: true}, fmt.Errorf("can't list ScyllaDBBackupBuckets: %w", err)
	}

	out := backupS3Configs{byDatacenter: map[string]*scyllaagent.S3Config{}}
	var specErrs []error
	for _, dc := range sc.Spec.Datacenters {
		// Buckets without credentials count too: static keys of another bucket would replace the agents' own role
		// for them (backupstorage.ChooseS3Config).
		buckets := backupstorage.DeclaredS3Buckets(allBuckets, backupstorage.S3BucketsOfLocations(locations, dc.Name))
		if !backupstorage.AnyHasCredentials(buckets) {
			continue
		}
		out.readsCredentials = true
		s3, errs, err := backupstorage.ResolveAgentS3Config(ctx, buckets, originals.secretIn)
		if err != nil {
			return backupS3Configs{unknown: true, readsCredentials: true}, err
		}
		for _, e := range errs {
			specErrs = append(specErrs, fmt.Errorf("datacenter %q: %w", dc.Name, e))
		}
		if s3 != nil {
			out.byDatacenter[dc.Name] = s3
		}
	}
	return out, errors.Join(specErrs...)
}

// withAgentS3 returns secret, a remote copy of the agent auth-token Secret (makeRemoteAuthTokenSecret) holding
// token, with s3 added to its agent configuration file. Errors never include the token or the credentials.
func withAgentS3(secret *corev1.Secret, token string, s3 *scyllaagent.S3Config) (*corev1.Secret, error) {
	data, err := scyllaagent.MakeConfig(token, s3)
	if err != nil {
		return nil, fmt.Errorf("can't make the agent auth-token Secret %q: %w", secret.Name, err)
	}
	secret.Data[naming.ScyllaDBManagerAgentAuthTokenKey] = data
	return secret, nil
}
