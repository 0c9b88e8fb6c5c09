package naming

// Field managers under which earlier operator versions wrote statuses with Update (the API server names an Update's
// manager after the client's user agent): the established operator's "scylla-operator", and this operator's
// "scylla-operator-operator" (genericclioptions.UserAgent("operator")) before it applied statuses under
// OperatorFieldManager. Fields only such an entry owns would outlive the operator no longer sending them, so the
// entries are merged into OperatorFieldManager's once (k8s.io/client-go/util/csaupgrade).
const (
	EstablishedOperatorStatusUpdateManager = "scylla-operator"
	OperatorStatusUpdateManager            = "scylla-operator-operator"
)

// LegacyOperatorStatusUpdateManagers returns the field managers of the Update entries whose status fields the
// operator's apply entry takes over.
func LegacyOperatorStatusUpdateManagers() []string {
	return []string{EstablishedOperatorStatusUpdateManager, OperatorStatusUpdateManager}
}
