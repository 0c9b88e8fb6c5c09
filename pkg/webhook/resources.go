package webhook

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"

	"github.com/scyllakube/scylla-operator/pkg/validation"
)

// NewScheme returns the scheme of every kind the webhook admits.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{scyllav1.AddToScheme, scyllav1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("can't build the webhook's scheme: %w", err)
		}
	}
	return scheme, nil
}

// ScyllaResources returns the Resources of every scylla.scylladb.com kind, validated with pkg/validation; lookup
// answers the rules about other objects.
func ScyllaResources(lookup validation.Lookup) []Resource {
	v1alpha1 := scyllav1alpha1.SchemeGroupVersion
	return []Resource{
		NewResource(scyllav1.SchemeGroupVersion.WithResource("scyllaclusters"), scyllav1.SchemeGroupVersion.WithKind("ScyllaCluster"),
			func() *scyllav1.ScyllaCluster { return &scyllav1.ScyllaCluster{} },
			Validator[*scyllav1.ScyllaCluster]{
				Validate:       ignoreContext(validation.ValidateScyllaCluster),
				ValidateUpdate: ignoreContextUpdate(validation.ValidateScyllaClusterUpdate),
				Warnings:       validation.WarningsForScyllaCluster,
				Mutate:         defaultScyllaClusterParallelNodeOperations,
			}),
		NewResource(v1alpha1.WithResource("scylladbdatacenters"), v1alpha1.WithKind("ScyllaDBDatacenter"),
			func() *scyllav1alpha1.ScyllaDBDatacenter { return &scyllav1alpha1.ScyllaDBDatacenter{} },
			Validator[*scyllav1alpha1.ScyllaDBDatacenter]{
				Validate:       ignoreContext(validation.ValidateScyllaDBDatacenter),
				ValidateUpdate: ignoreContextUpdate(validation.ValidateScyllaDBDatacenterUpdate),
				Warnings:       validation.WarningsForScyllaDBDatacenter,
				Mutate:         defaultScyllaDBDatacenterParallelNodeOperations,
			}),
		NewResource(v1alpha1.WithResource("scylladbclusters"), v1alpha1.WithKind("ScyllaDBCluster"),
			func() *scyllav1alpha1.ScyllaDBCluster { return &scyllav1alpha1.ScyllaDBCluster{} },
			Validator[*scyllav1alpha1.ScyllaDBCluster]{
				Validate:       ignoreContext(validation.ValidateScyllaDBCluster),
				ValidateUpdate: ignoreContextUpdate(validation.ValidateScyllaDBClusterUpdate),
				Warnings:       validation.WarningsForScyllaDBCluster,
			}),
		NewResource(v1alpha1.WithResource("scylladbmanagertasks"), v1alpha1.WithKind("ScyllaDBManagerTask"),
			func() *scyllav1alpha1.ScyllaDBManagerTask { return &scyllav1alpha1.ScyllaDBManagerTask{} },
			Validator[*scyllav1alpha1.ScyllaDBManagerTask]{
				Validate: func(ctx context.Context, task *scyllav1alpha1.ScyllaDBManagerTask) field.ErrorList {
					return append(validation.ValidateScyllaDBManagerTask(task), validation.ValidateScyllaDBManagerTaskReferences(ctx, task, lookup)...)
				},
				ValidateUpdate: func(ctx context.Context, task, old *scyllav1alpha1.ScyllaDBManagerTask) field.ErrorList {
					errs := validation.ValidateScyllaDBManagerTaskUpdate(task, old)
					// A task whose target is gone must stay updatable (its finalizer removed), so the target is
					// checked only when the reference changes.
					if !equality.Semantic.DeepEqual(task.Spec.ScyllaDBClusterRef, old.Spec.ScyllaDBClusterRef) {
						errs = append(errs, validation.ValidateScyllaDBManagerTaskReferences(ctx, task, lookup)...)
					}
					return errs
				},
				Warnings: validation.WarningsForScyllaDBManagerTask,
			}),
		NewResource(v1alpha1.WithResource("remotekubernetesclusters"), v1alpha1.WithKind("RemoteKubernetesCluster"),
			func() *scyllav1alpha1.RemoteKubernetesCluster { return &scyllav1alpha1.RemoteKubernetesCluster{} },
			Validator[*scyllav1alpha1.RemoteKubernetesCluster]{
				Validate:       ignoreContext(validation.ValidateRemoteKubernetesCluster),
				ValidateUpdate: ignoreContextUpdate(validation.ValidateRemoteKubernetesClusterUpdate),
				Warnings:       validation.WarningsForRemoteKubernetesCluster,
			}),
		NewResource(v1alpha1.WithResource("scylladbbackupbuckets"), v1alpha1.WithKind("ScyllaDBBackupBucket"),
			func() *scyllav1alpha1.ScyllaDBBackupBucket { return &scyllav1alpha1.ScyllaDBBackupBucket{} },
			Validator[*scyllav1alpha1.ScyllaDBBackupBucket]{
				Validate:       ignoreContext(validation.ValidateScyllaDBBackupBucket),
				ValidateUpdate: ignoreContextUpdate(validation.ValidateScyllaDBBackupBucketUpdate),
				Warnings:       validation.WarningsForScyllaDBBackupBucket,
			}),
		NewResource(v1alpha1.WithResource("scylladbbackupentries"), v1alpha1.WithKind("ScyllaDBBackupEntry"),
			func() *scyllav1alpha1.ScyllaDBBackupEntry { return &scyllav1alpha1.ScyllaDBBackupEntry{} },
			Validator[*scyllav1alpha1.ScyllaDBBackupEntry]{
				Validate:       ignoreContext(validation.ValidateScyllaDBBackupEntry),
				ValidateUpdate: ignoreContextUpdate(validation.ValidateScyllaDBBackupEntryUpdate),
				Warnings:       validation.WarningsForScyllaDBBackupEntry,
			}),
	}
}

func ignoreContext[T any](f func(T) field.ErrorList) func(context.Context, T) field.ErrorList {
	return func(_ context.Context, obj T) field.ErrorList { return f(obj) }
}

func ignoreContextUpdate[T any](f func(T, T) field.ErrorList) func(context.Context, T, T) field.ErrorList {
	return func(_ context.Context, obj, old T) field.ErrorList { return f(obj, old) }
}
