package nodesim

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/ptr"
)

// kwokStartedPod is a ScyllaDB Pod as hack/kwok/stages.yaml leaves it: Running, the container with a readiness
// probe not ready, the other one ready.
func kwokStartedPod(t0 time.Time) *corev1.Pod {
	pod := testPod()
	pod.Spec.Containers = []corev1.Container{
		{Name: "scylla", Image: "scylladb/scylla", ReadinessProbe: &corev1.Probe{}},
		{Name: "scylladb-api-status-probe", Image: "agent"},
	}
	at := metav1.NewTime(t0)
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at},
			{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, LastTransitionTime: at},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: at},
		},
		ContainerStatuses: []corev1.ContainerStatus{
			{Name: "scylla", Image: "scylladb/scylla", Ready: false, Started: ptr.To(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}},
			{Name: "scylladb-api-status-probe", Image: "agent", Ready: true, Started: ptr.To(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}},
		},
	}
	return pod
}

// applyStatusPatch applies patch to pod as the API server would and returns the result.
func applyStatusPatch(t *testing.T, pod *corev1.Pod, patch []byte) *corev1.Pod {
	t.Helper()
	original, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := strategicpatch.StrategicMergePatch(original, patch, &corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	out := &corev1.Pod{}
	if err := json.Unmarshal(patched, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func conditionStatuses(pod *corev1.Pod) map[corev1.PodConditionType]corev1.ConditionStatus {
	out := map[corev1.PodConditionType]corev1.ConditionStatus{}
	for _, c := range pod.Status.Conditions {
		out[c.Type] = c.Status
	}
	return out
}

func TestPodStatusPatchReflectsTheContainer(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0.Add(90 * time.Second)
	running := containerState{Name: "scylla", Running: true, StartedAt: t0.Add(time.Second)}
	readyState := running
	readyState.Ready = true

	tests := []struct {
		name             string
		pod              func() *corev1.Pod
		state            containerState
		wantNoPatch      bool
		wantConditions   map[corev1.PodConditionType]corev1.ConditionStatus
		wantReadyMessage string
		check            func(t *testing.T, scylla corev1.ContainerStatus)
	}{
		{
			name:  "ready probe makes the Pod Ready",
			pod:   func() *corev1.Pod { return kwokStartedPod(t0) },
			state: readyState,
			wantConditions: map[corev1.PodConditionType]corev1.ConditionStatus{
				corev1.PodScheduled: corev1.ConditionTrue, corev1.PodInitialized: corev1.ConditionTrue,
				corev1.ContainersReady: corev1.ConditionTrue, corev1.PodReady: corev1.ConditionTrue,
			},
			check: func(t *testing.T, s corev1.ContainerStatus) {
				if !s.Ready || s.State.Running == nil || !s.State.Running.StartedAt.Equal(&metav1.Time{Time: t0.Add(time.Second)}) {
					t.Errorf("want a ready running container started at t0+1s, got %+v", s)
				}
			},
		},
		{
			name:        "an unready running container keeps a kwok-started Pod's condition statuses",
			pod:         func() *corev1.Pod { return kwokStartedPod(t0) },
			state:       containerState{Name: "scylla", Running: true, StartedAt: t0},
			wantNoPatch: true,
		},
		{
			name: "failing probe makes a Ready Pod unready",
			pod: func() *corev1.Pod {
				p := applyStatusPatch(t, kwokStartedPod(t0), mustPatch(t, kwokStartedPod(t0), readyState, t0))
				return p
			},
			state: running,
			wantConditions: map[corev1.PodConditionType]corev1.ConditionStatus{
				corev1.PodScheduled: corev1.ConditionTrue, corev1.PodInitialized: corev1.ConditionTrue,
				corev1.ContainersReady: corev1.ConditionFalse, corev1.PodReady: corev1.ConditionFalse,
			},
			wantReadyMessage: "containers with unready status: [scylla]",
		},
		{
			name: "a readiness gate that isn't True keeps the Pod unready",
			pod: func() *corev1.Pod {
				p := kwokStartedPod(t0)
				p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/gate"}}
				return p
			},
			state: readyState,
			wantConditions: map[corev1.PodConditionType]corev1.ConditionStatus{
				corev1.PodScheduled: corev1.ConditionTrue, corev1.PodInitialized: corev1.ConditionTrue,
				corev1.ContainersReady: corev1.ConditionTrue, corev1.PodReady: corev1.ConditionFalse,
			},
			wantReadyMessage: `corresponding condition of pod readiness gate "example.com/gate" does not exist or is not True`,
		},
		{
			name: "an exited container waits in back-off with its last exit and restart count",
			pod:  func() *corev1.Pod { return kwokStartedPod(t0) },
			state: containerState{
				Name: "scylla", Restarts: 2, WaitingReason: "CrashLoopBackOff", WaitingMessage: "back-off 4s",
				LastExit: &exitInfo{Code: 1, StartedAt: t0, FinishedAt: t0.Add(3 * time.Second)},
			},
			wantConditions: map[corev1.PodConditionType]corev1.ConditionStatus{
				corev1.PodScheduled: corev1.ConditionTrue, corev1.PodInitialized: corev1.ConditionTrue,
				corev1.ContainersReady: corev1.ConditionFalse, corev1.PodReady: corev1.ConditionFalse,
			},
			wantReadyMessage: "containers with unready status: [scylla]",
			check: func(t *testing.T, s corev1.ContainerStatus) {
				want := corev1.ContainerStatus{
					Name: "scylla", Image: "scylladb/scylla", RestartCount: 2, Started: ptr.To(false),
					State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 4s"}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
						ExitCode: 1, Reason: "Error", StartedAt: metav1.NewTime(t0), FinishedAt: metav1.NewTime(t0.Add(3 * time.Second)),
					}},
				}
				if diff := cmp.Diff(want, s); diff != "" {
					t.Errorf("container status differs (-want +got):\n%s", diff)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := tc.pod()
			patch, err := podStatusPatch(pod, tc.state, now)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantNoPatch {
				// The first patch only adds reasons and messages.
				patched := applyStatusPatch(t, pod, patch)
				if diff := cmp.Diff(conditionStatuses(pod), conditionStatuses(patched)); diff != "" {
					t.Errorf("conditions changed (-before +after):\n%s", diff)
				}
				again, err := podStatusPatch(patched, tc.state, now.Add(time.Minute))
				if err != nil {
					t.Fatal(err)
				}
				if again != nil {
					t.Errorf("want no patch once the status matches, got %s", again)
				}
				return
			}
			if patch == nil {
				t.Fatal("want a patch, got none")
			}
			patched := applyStatusPatch(t, pod, patch)
			if diff := cmp.Diff(tc.wantConditions, conditionStatuses(patched)); diff != "" {
				t.Errorf("conditions differ (-want +got):\n%s", diff)
			}
			if c := podCondition(patched, corev1.PodReady); c.Message != tc.wantReadyMessage {
				t.Errorf("Ready message: want %q, got %q", tc.wantReadyMessage, c.Message)
			}
			for _, c := range patched.Status.Conditions {
				changed := c.Status != conditionStatuses(pod)[c.Type]
				if changed && !c.LastTransitionTime.Time.Equal(now) {
					t.Errorf("condition %s changed, want transition time %v, got %v", c.Type, now, c.LastTransitionTime)
				}
				if !changed && !c.LastTransitionTime.Time.Equal(podCondition(pod, c.Type).LastTransitionTime.Time) {
					t.Errorf("condition %s kept its status, want its transition time kept, got %v", c.Type, c.LastTransitionTime)
				}
			}
			if agent := patched.Status.ContainerStatuses[1]; !agent.Ready || agent.Name != "scylladb-api-status-probe" {
				t.Errorf("want the other container kept ready, got %+v", agent)
			}
			if tc.check != nil {
				tc.check(t, patched.Status.ContainerStatuses[0])
			}
			again, err := podStatusPatch(patched, tc.state, now.Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			if again != nil {
				t.Errorf("want no second patch, got %s", again)
			}
		})
	}
}

func mustPatch(t *testing.T, pod *corev1.Pod, cs containerState, now time.Time) []byte {
	t.Helper()
	patch, err := podStatusPatch(pod, cs, now)
	if err != nil || patch == nil {
		t.Fatalf("want a patch, got %s, %v", patch, err)
	}
	return patch
}
