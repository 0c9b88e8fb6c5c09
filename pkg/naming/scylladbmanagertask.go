package naming

// Names used by the ScyllaDBManagerTask controller of the manager-controller.

const (
	// ScyllaDBManagerTaskClusterRefIndex names the index of ScyllaDBManagerTasks by the ScyllaDB cluster object they
	// reference (ScyllaDBManagerTaskClusterRefIndexKey), through which a change of a ScyllaDBDatacenter or
	// ScyllaDBCluster reaches the tasks that wait for its registration.
	ScyllaDBManagerTaskClusterRefIndex = "scylla-operator.scylladb.com/scylladb-cluster-ref"

	// ScyllaDBManagerTaskClusterIDAnnotation records, on a ScyllaDBManagerTask, the ScyllaDB Manager cluster its task
	// lives in. The controller writes it before it creates the task there, so that after spec.scyllaDBClusterRef
	// changes it still knows where to delete the task from.
	ScyllaDBManagerTaskClusterIDAnnotation = "internal.scylla-operator.scylladb.com/scylladb-manager-task-cluster-id"
)

// ScyllaDBManagerTaskNameInManager returns the name a ScyllaDBManagerTask's task has in ScyllaDB Manager: the value
// of ScyllaDBManagerTaskNameOverrideAnnotation when it is set and not empty (the ScyllaCluster translator sets it to
// the name the task has in the ScyllaCluster, which ScyllaDB Manager knew it by before), else the object's name.
func ScyllaDBManagerTaskNameInManager(objectName string, annotations map[string]string) string {
	if name := annotations[ScyllaDBManagerTaskNameOverrideAnnotation]; len(name) != 0 {
		return name
	}
	return objectName
}

// ScyllaDBManagerTaskClusterRefIndexKey returns the ScyllaDBManagerTaskClusterRefIndex key of a reference to the
// ScyllaDB cluster object of kind and name in namespace.
func ScyllaDBManagerTaskClusterRefIndexKey(namespace, kind, name string) string {
	return namespace + "/" + kind + "/" + name
}
