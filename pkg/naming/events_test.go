package naming

import "testing"

func TestEventSourceComponentNamesTheProgramAndTheController(t *testing.T) {
	t.Parallel()

	tt := []struct {
		program, controller, want string
	}{
		{OperatorProgramName, "ScyllaClusterController", "scylla-operator-ScyllaClusterController"},
		{ManagerControllerProgramName, "ScyllaDBManagerTaskController", "scylla-manager-controller-ScyllaDBManagerTaskController"},
	}
	for _, tc := range tt {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			if got := EventSourceComponent(tc.program, tc.controller); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
