package nodesim

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// containerState is what the simulator knows about the simulated container, as a kubelet would report it.
type containerState struct {
	// Name is the container's name.
	Name string
	// Running is true while the sidecar process runs; StartedAt is when it started.
	Running   bool
	StartedAt time.Time
	// Ready is the last readiness probe result while running.
	Ready bool
	// Restarts counts the restarts of the container within the Pod.
	Restarts int32
	// LastExit is the last time the process exited, if it did.
	LastExit *exitInfo
	// WaitingReason and WaitingMessage say why the container doesn't run (ContainerCreating, CrashLoopBackOff,
	// CreateContainerConfigError, ...).
	WaitingReason, WaitingMessage string
}

// exitInfo is how a sidecar process ended.
type exitInfo struct {
	Code                  int
	StartedAt, FinishedAt time.Time
}

// podStatusPatch returns a strategic merge patch of the Pod's status that makes its Ready and ContainersReady
// conditions and the simulated container's status match cs, or nil when they already do. Other containers are
// reported as the Pod has them; readiness gates count towards Ready as the kubelet counts them.
func podStatusPatch(pod *corev1.Pod, cs containerState, now time.Time) ([]byte, error) {
	statuses := make([]corev1.ContainerStatus, 0, len(pod.Spec.Containers))
	for _, c := range pod.Spec.Containers {
		i := slices.IndexFunc(pod.Status.ContainerStatuses, func(s corev1.ContainerStatus) bool { return s.Name == c.Name })
		var s corev1.ContainerStatus
		if i >= 0 {
			s = *pod.Status.ContainerStatuses[i].DeepCopy()
		} else {
			s = corev1.ContainerStatus{Name: c.Name, Image: c.Image}
		}
		if c.Name == cs.Name {
			setContainerStatus(&s, cs)
		}
		statuses = append(statuses, s)
	}

	var unready []string
	for _, s := range statuses {
		if !s.Ready {
			unready = append(unready, s.Name)
		}
	}
	containersReady := corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}
	if len(unready) > 0 {
		containersReady.Status = corev1.ConditionFalse
		containersReady.Reason = "ContainersNotReady"
		containersReady.Message = fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	}
	ready := containersReady
	ready.Type = corev1.PodReady
	if ready.Status == corev1.ConditionTrue {
		var gates []string
		for _, g := range pod.Spec.ReadinessGates {
			if c := podCondition(pod, g.ConditionType); c == nil || c.Status != corev1.ConditionTrue {
				gates = append(gates, string(g.ConditionType))
			}
		}
		if len(gates) > 0 {
			ready.Status = corev1.ConditionFalse
			ready.Reason = "ReadinessGatesNotReady"
			ready.Message = fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist or is not True", strings.Join(gates, ", "))
		}
	}

	conditions := []corev1.PodCondition{ready, containersReady}
	same := apiequality.Semantic.DeepEqual(statuses, pod.Status.ContainerStatuses)
	for i := range conditions {
		c := &conditions[i]
		old := podCondition(pod, c.Type)
		c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
		if old != nil && old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		if old == nil || old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message {
			same = false
		}
	}
	if same {
		return nil, nil
	}
	return json.Marshal(map[string]any{"status": map[string]any{
		"conditions":        conditions,
		"containerStatuses": statuses,
	}})
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func setContainerStatus(s *corev1.ContainerStatus, cs containerState) {
	s.Ready = cs.Running && cs.Ready
	s.RestartCount = cs.Restarts
	started := cs.Running
	s.Started = &started
	switch {
	case cs.Running:
		s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(cs.StartedAt.Truncate(time.Second))}}
	case cs.LastExit != nil && cs.WaitingReason == "":
		s.State = corev1.ContainerState{Terminated: terminated(cs.LastExit)}
	default:
		reason := cs.WaitingReason
		if reason == "" {
			reason = "ContainerCreating"
		}
		s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: cs.WaitingMessage}}
	}
	s.LastTerminationState = corev1.ContainerState{}
	if cs.LastExit != nil {
		s.LastTerminationState.Terminated = terminated(cs.LastExit)
	}
}

func terminated(e *exitInfo) *corev1.ContainerStateTerminated {
	reason := "Completed"
	if e.Code != 0 {
		reason = "Error"
	}
	return &corev1.ContainerStateTerminated{
		ExitCode:   int32(e.Code),
		Reason:     reason,
		StartedAt:  metav1.NewTime(e.StartedAt.Truncate(time.Second)),
		FinishedAt: metav1.NewTime(e.FinishedAt.Truncate(time.Second)),
	}
}
