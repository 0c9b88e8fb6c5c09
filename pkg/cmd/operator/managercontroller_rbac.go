package operator

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// ManagerControllerClusterRoleRules are the cluster-wide permissions of the manager-controller, which
// deploy/manager/ grants through its ClusterRole (deploy/deploy_test.go compares them). Tests of this package check
// that the manager-controller needs no more and uses every one.
func ManagerControllerClusterRoleRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{
			// Read from informer caches only. Finalizers and the ScyllaDB Manager cluster ID and task status
			// annotations are added by merge patches. Tasks may also target a ScyllaDBCluster.
			APIGroups: []string{"scylla.scylladb.com"},
			Resources: []string{"scylladbdatacenters", "scylladbclusters", "scylladbmanagertasks"},
			Verbs:     []string{"list", "watch", "patch"},
		},
		{
			// Server-side apply of only the conditions and fields the manager-controller owns, under its own field
			// manager.
			APIGroups: []string{"scylla.scylladb.com"},
			Resources: []string{"scylladbdatacenters/status", "scylladbclusters/status", "scylladbmanagertasks/status"},
			Verbs:     []string{"patch"},
		},
		{
			// Backups to a declared bucket: the ScyllaDBBackupBucket a task's location names, and the cluster's
			// ScyllaDBBackupEntry in it, which the task controller creates before the task is scheduled.
			APIGroups: []string{"scylla.scylladb.com"},
			Resources: []string{"scylladbbackupbuckets", "scylladbbackupentries"},
			Verbs:     []string{"list", "watch"},
		},
		{
			// Entries are created by the task controller; the entry controller adds and removes their finalizer
			// and keeps the purge cursor in an annotation (merge patches).
			APIGroups: []string{"scylla.scylladb.com"},
			Resources: []string{"scylladbbackupentries"},
			Verbs:     []string{"create", "patch"},
		},
		{
			// Server-side apply of the buckets' and entries' status.
			APIGroups: []string{"scylla.scylladb.com"},
			Resources: []string{"scylladbbackupbuckets/status", "scylladbbackupentries/status"},
			Verbs:     []string{"patch"},
		},
		{
			// The agent auth-token Secrets the operator creates; the informer lists only the operator's objects, but
			// RBAC can't restrict a list by label, so this allows reading every Secret. A bucket's credentials
			// Secret, in any namespace, is read with a get when the bucket is checked or a directory purged.
			APIGroups: []string{""},
			Resources: []string{"secrets"},
			Verbs:     []string{"get", "list", "watch"},
		},
		{
			APIGroups: []string{""},
			Resources: []string{"events"},
			Verbs:     []string{"create", "patch"},
		},
	}
}

// ManagerControllerLeaderElectionRules are the permissions of the manager-controller in its own namespace, which
// deploy/manager/ grants through a Role: leader election on its Lease.
func ManagerControllerLeaderElectionRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{
			APIGroups: []string{"coordination.k8s.io"},
			Resources: []string{"leases"},
			Verbs:     []string{"get", "create", "update"},
		},
	}
}
