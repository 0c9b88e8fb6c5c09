package naming

import "fmt"

// Names of the manager-controller program and of the example ScyllaDB Manager deployment in deploy/manager/.
const (
	// ManagerControllerProgramName names the manager-controller in the User-Agent of its ScyllaDB Manager requests
	// ("scylla-manager-controller/<version>") and in its objects in deploy/manager/.
	ManagerControllerProgramName = "scylla-manager-controller"
	// ManagerControllerLeaseName is the manager-controller's leader election Lease, distinct from the operator's so
	// that both programs elect their leaders independently.
	ManagerControllerLeaseName = "scylla-manager-controller-lock"

	// ScyllaDBManagerNamespace is the namespace of ScyllaDB Manager and the manager-controller in deploy/manager/.
	ScyllaDBManagerNamespace = "scylla-manager"
	// ScyllaDBManagerServiceName is the Service in front of ScyllaDB Manager's HTTP API (port 80) in deploy/manager/.
	ScyllaDBManagerServiceName = "scylla-manager"
)

// DefaultScyllaDBManagerURL is the ScyllaDB Manager API the manager-controller calls unless told otherwise: the
// Service deploy/manager/ creates, from any namespace of the cluster.
var DefaultScyllaDBManagerURL = fmt.Sprintf("http://%s.%s.svc/api/v1", ScyllaDBManagerServiceName, ScyllaDBManagerNamespace)

// ManagerControllerUserAgent returns the User-Agent of the manager-controller's requests to ScyllaDB Manager.
func ManagerControllerUserAgent(version string) string {
	return ManagerControllerProgramName + "/" + version
}
