package nodesim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// fakeVolumeSources adds claims ("namespace/name" -> UID) to fakeObjects.
type fakeVolumeSources struct {
	fakeObjects
	claims map[string]string
}

func (f fakeVolumeSources) ClaimUID(namespace, name string) (string, error) {
	if uid, ok := f.claims[namespace+"/"+name]; ok {
		return uid, nil
	}
	return "", apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumeclaims"}, name)
}

// readTree returns every regular file under dir by slash-separated relative path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestMountVolumesProvidesEachKindAndMapsPaths(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dirs := volumeDirs{Pod: filepath.Join(root, "pod"), Claims: filepath.Join(root, "claims")}
	sources := fakeVolumeSources{
		fakeObjects: fakeObjects{
			configMaps: map[string]*corev1.ConfigMap{"ns/managed": {
				Data:       map[string]string{"rack-a": "cluster_name: x\n", "rack-b": "other"},
				BinaryData: map[string][]byte{"bin": {1, 2}},
			}},
			secrets: map[string]*corev1.Secret{"ns/token": {Data: map[string][]byte{"token.yaml": []byte("auth_token: t")}}},
		},
		claims: map[string]string{"ns/data-dc-a-0": "claim-uid-1"},
	}
	pod := testPod()
	pod.Namespace = "ns"
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-dc-a-0"}}},
		{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "managed", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "managed"},
			Items:                []corev1.KeyToPath{{Key: "rack-a", Path: "scylla.yaml"}},
		}}},
		{Name: "all", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "managed"}}}},
		{Name: "token", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "token"}}},
		{Name: "absent", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "absent", Optional: ptr.To(true)}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/dev"}}},
	}
	c := &corev1.Container{VolumeMounts: []corev1.VolumeMount{
		{Name: "data", MountPath: "/var/lib/scylla"},
		{Name: "data", MountPath: "/var/lib/scylla/hints", SubPathExpr: "$(POD_NAME)-hints"},
		{Name: "shared", MountPath: "/mnt/shared"},
		{Name: "managed", MountPath: "/etc/managed"},
		{Name: "all", MountPath: "/etc/all"},
		{Name: "token", MountPath: "/etc/token"},
		{Name: "absent", MountPath: "/etc/absent"},
		{Name: "host", MountPath: "/host"},
	}}
	// A stale file from an earlier container start is replaced.
	stale := filepath.Join(dirs.Pod, "volumes", "managed", "stale")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	fs, err := mountVolumes(pod, c, map[string]string{"POD_NAME": "dc-a-0"}, dirs, sources)
	if err != nil {
		t.Fatal(err)
	}

	paths := []struct{ container, host, wantErr string }{
		{container: "/var/lib/scylla", host: "claims/claim-uid-1"},
		{container: "/var/lib/scylla/commitlog", host: "claims/claim-uid-1/commitlog"},
		{container: "/var/lib/scylla/hints/x", host: "claims/claim-uid-1/dc-a-0-hints/x"},
		{container: "/var/lib/scyllax", host: "pod/rootfs/var/lib/scyllax"},
		{container: "/mnt/shared/scylla-operator", host: "pod/volumes/shared/scylla-operator"},
		{container: "/etc/managed/scylla.yaml", host: "pod/volumes/managed/scylla.yaml"},
		{container: "/etc/scylla/../scylla/scylla.yaml", host: "pod/rootfs/etc/scylla/scylla.yaml"},
		{container: "/host/sda", wantErr: `path "/host/sda" is on the volume mounted at "/host", which the node simulator can't provide: volume "host" is of a kind the node simulator doesn't provide`},
	}
	for _, p := range paths {
		got, err := fs.hostPath(p.container)
		if p.wantErr != "" {
			if err == nil || err.Error() != p.wantErr {
				t.Errorf("hostPath(%q): want error %q, got %q, %v", p.container, p.wantErr, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("hostPath(%q): %v", p.container, err)
			continue
		}
		if want := filepath.Join(root, p.host); got != want {
			t.Errorf("hostPath(%q) = %q, want %q", p.container, got, want)
		}
	}

	wantFiles := map[string]string{
		"volumes/managed/scylla.yaml": "cluster_name: x\n",
		"volumes/all/rack-a":          "cluster_name: x\n",
		"volumes/all/rack-b":          "other",
		"volumes/all/bin":             "\x01\x02",
		"volumes/token/token.yaml":    "auth_token: t",
	}
	if diff := cmp.Diff(wantFiles, readTree(t, dirs.Pod)); diff != "" {
		t.Errorf("files of the Pod's volumes differ (-want +got):\n%s", diff)
	}
	for _, d := range []string{"claims/claim-uid-1/dc-a-0-hints", "pod/volumes/shared", "pod/volumes/absent", "pod/rootfs"} {
		if info, err := os.Stat(filepath.Join(root, d)); err != nil || !info.IsDir() {
			t.Errorf("want directory %s: %v", d, err)
		}
	}
}

func TestMountVolumesFailures(t *testing.T) {
	t.Parallel()
	volume := func(name string, src corev1.VolumeSource) []corev1.Volume {
		return []corev1.Volume{{Name: name, VolumeSource: src}}
	}
	mount := func(name string) []corev1.VolumeMount { return []corev1.VolumeMount{{Name: name, MountPath: "/v"}} }
	tests := []struct {
		name    string
		volumes []corev1.Volume
		mounts  []corev1.VolumeMount
		wantErr string
		notYet  bool
	}{
		{
			name:    "claim not created yet",
			volumes: volume("data", corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-x"}}),
			mounts:  mount("data"),
			wantErr: `volume "data": PersistentVolumeClaim "scylla/data-x" doesn't exist`,
			notYet:  true,
		},
		{
			name:    "required ConfigMap missing",
			volumes: volume("cfg", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}}}),
			mounts:  mount("cfg"),
			wantErr: `volume "cfg": ConfigMap "scylla/nope" doesn't exist`,
			notYet:  true,
		},
		{
			name: "required item missing",
			volumes: volume("cfg", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "k", Path: "f"}},
			}}),
			mounts:  mount("cfg"),
			wantErr: `volume "cfg": key "k" doesn't exist`,
			notYet:  true,
		},
		{
			name: "item escaping the volume",
			volumes: volume("cfg", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "a", Path: "../f"}},
			}}),
			mounts:  mount("cfg"),
			wantErr: `volume "cfg": file "../f" must stay inside the volume`,
		},
		{
			name:    "mount of an unknown volume",
			mounts:  mount("ghost"),
			wantErr: `volume mount "ghost" names no volume of the Pod`,
		},
		{
			name:    "sub path escaping the volume",
			volumes: volume("tmp", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
			mounts:  []corev1.VolumeMount{{Name: "tmp", MountPath: "/v", SubPath: "a/../../b"}},
			wantErr: `volume mount "tmp": sub path "a/../../b" must be relative and stay inside the volume`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			pod := testPod()
			pod.Spec.Volumes = tc.volumes
			sources := fakeVolumeSources{fakeObjects: fakeObjects{configMaps: map[string]*corev1.ConfigMap{
				"scylla/cfg": {Data: map[string]string{"a": "1"}},
			}}}
			_, err := mountVolumes(pod, &corev1.Container{VolumeMounts: tc.mounts}, nil, volumeDirs{Pod: root + "/pod", Claims: root + "/claims"}, sources)
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Fatalf("want error starting with %q, got %v", tc.wantErr, err)
			}
			if errors.Is(err, errNotYetAvailable) != tc.notYet {
				t.Errorf("error %q: want retryable=%v", err, tc.notYet)
			}
		})
	}
}
