package naming

// OperatorProgramName names the operator program as the source of its controllers' events.
const OperatorProgramName = "scylla-operator"

// EventSourceComponent returns the source component of the events that controllerName of programName
// (OperatorProgramName or ManagerControllerProgramName) records: "<program>-<controller>", so that every controller of
// both programs is told apart the same way.
func EventSourceComponent(programName, controllerName string) string {
	return programName + "-" + controllerName
}
