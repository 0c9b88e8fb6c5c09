package operator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestReplaceOptionReadsEverySpelling(t *testing.T) {
	t.Parallel()
	const id = "f4850a9a-b8a4-45c7-ab46-67138c126a3b"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"dashes with =", []string{"--smp=1", "--replace-node-first-boot=" + id}, id},
		{"underscores with =", []string{"--replace_node_first_boot=" + id}, id},
		{"value as the next argument", []string{"--replace-node-first-boot", id, "--smp=1"}, id},
		{"the last one wins", []string{"--replace-node-first-boot=other", "--replace-node-first-boot=" + id}, id},
		{"absent", []string{"--smp=1", "--seeds=10.0.0.1"}, ""},
		{"another option with the name as its prefix", []string{"--replace-node-first-boot-extra=" + id}, ""},
		{"a single dash is no option", []string{"-replace-node-first-boot=" + id}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := replaceOption(tc.args); got != tc.want {
				t.Errorf("replaceOption(%q) = %q, want %q", tc.args, got, tc.want)
			}
		})
	}
}

func TestVolumeNodesReadsTheRequiredHostnames(t *testing.T) {
	t.Parallel()
	pv := &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}},
			{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"node-1"}},
			{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"node-2"}},
		}}},
	}}}}
	if got := volumeNodes(pv); len(got) != 1 || got[0] != "node-1" {
		t.Errorf("volumeNodes = %q, want [node-1]", got)
	}
	if got := volumeNodes(&corev1.PersistentVolume{}); got != nil {
		t.Errorf("volumeNodes of a volume without node affinity = %q, want none", got)
	}
}
