//go:build e2e

package operator

import (
	"slices"
	"testing"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// testSysctlsSetByAPrivilegedInitContainer checks that a ScyllaCluster's spec.sysctls reach every ScyllaDB pod as a
// privileged init container that sets them before anything else runs, and that removing them rolls the pods out
// without it.
func testSysctlsSetByAPrivilegedInitContainer(t *testing.T, op *operatorProcess) {
	e := newTestEnv(t)
	ctx := t.Context()
	sc := e.newScyllaCluster(1, 1)
	sc.Spec.Sysctls = []string{"fs.aio-max-nr=30000000", "net.ipv4.ip_local_port_range=1024 65000"}
	sc = e.createScyllaCluster(sc)
	sc = e.waitForRollout(sc.Name, "the ScyllaCluster with sysctls to roll out")

	wantCommand := []string{naming.OperatorBinaryPathInImage, "sysctl", "--", "fs.aio-max-nr=30000000", "net.ipv4.ip_local_port_range=1024 65000"}
	checkInitContainers := func(wantSysctl bool) {
		t.Helper()
		pods, err := e.kube.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: naming.ClusterSelector(naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name)).String()})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) == 0 {
			t.Fatal("no pods")
		}
		for _, pod := range pods.Items {
			var names []string
			for _, c := range pod.Spec.InitContainers {
				names = append(names, c.Name)
			}
			if !wantSysctl {
				if slices.Contains(names, naming.SysctlContainerName) {
					t.Errorf("pod %s still has init container %q: %v", pod.Name, naming.SysctlContainerName, names)
				}
				continue
			}
			if len(names) == 0 || names[0] != naming.SysctlContainerName {
				t.Errorf("pod %s has init containers %v, want %q first", pod.Name, names, naming.SysctlContainerName)
				continue
			}
			c := pod.Spec.InitContainers[0]
			if !slices.Equal(c.Command, wantCommand) {
				t.Errorf("pod %s: init container %q runs %q, want %q", pod.Name, c.Name, c.Command, wantCommand)
			}
			if c.SecurityContext == nil || !deref(c.SecurityContext.Privileged) {
				t.Errorf("pod %s: init container %q is not privileged: %+v", pod.Name, c.Name, c.SecurityContext)
			}
		}
	}
	checkInitContainers(true)

	e.updateScyllaCluster(sc.Name, func(sc *scyllav1.ScyllaCluster) { sc.Spec.Sysctls = nil })
	sc = e.waitForRollout(sc.Name, "the ScyllaCluster without sysctls to roll out")
	checkInitContainers(false)
	if err := e.checkInventory(ctx, sc); err != nil {
		t.Fatal(err)
	}
	e.expectNoWrites(op, sc, 1)
}
