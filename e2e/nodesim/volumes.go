package nodesim

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// containerFS maps paths inside a simulated container to directories on the host: a volume mount's path to where
// the simulator keeps that volume, and any other path to the container's own root directory.
type containerFS struct {
	rootfs string
	// mounts are sorted by container path, longest first, so the innermost mount wins.
	mounts []fsMount
}

// fsMount is one volume mount of the container.
type fsMount struct {
	containerPath string
	// hostPath is where the volume (and sub path) lives on the host; empty when the simulator can't provide it.
	hostPath string
	// unsupported says why hostPath is empty.
	unsupported string
}

// hostPath returns where the container path p (absolute) lives on the host.
func (fs *containerFS) hostPath(p string) (string, error) {
	if !path.IsAbs(p) {
		return "", fmt.Errorf("path %q is not absolute", p)
	}
	p = path.Clean(p)
	for _, m := range fs.mounts {
		rel, ok := underPath(p, m.containerPath)
		if !ok {
			continue
		}
		if m.hostPath == "" {
			return "", fmt.Errorf("path %q is on the volume mounted at %q, which the node simulator can't provide: %s", p, m.containerPath, m.unsupported)
		}
		return filepath.Join(m.hostPath, filepath.FromSlash(rel)), nil
	}
	return filepath.Join(fs.rootfs, filepath.FromSlash(p)), nil
}

// underPath returns p relative to dir when p is dir or inside it.
func underPath(p, dir string) (string, bool) {
	if p == dir {
		return "", true
	}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	if strings.HasPrefix(p, prefix) {
		return strings.TrimPrefix(p, prefix), true
	}
	return "", false
}

// volumeSources reads what volumes are made of.
type volumeSources interface {
	objectGetter
	// ClaimUID returns the UID of a PersistentVolumeClaim.
	ClaimUID(namespace, name string) (string, error)
}

// volumeDirs says where the simulator keeps volumes on the host.
type volumeDirs struct {
	// Pod is the directory of one Pod (one UID): its container root and its ephemeral volumes.
	Pod string
	// Claims holds one directory per PersistentVolumeClaim UID, so data outlives Pods and follows the claim.
	Claims string
}

// rootfsDir is the container's root directory inside the Pod directory.
func (d volumeDirs) rootfsDir() string { return filepath.Join(d.Pod, "rootfs") }

// mountVolumes provides every volume container c mounts the way the kubelet would at container start:
// PersistentVolumeClaims as a directory per claim UID, emptyDirs as a directory per Pod, ConfigMaps and Secrets
// written out afresh. Volume kinds it can't provide are recorded and only fail a path that needs them. Missing
// objects that aren't optional wrap errNotYetAvailable.
func mountVolumes(pod *corev1.Pod, c *corev1.Container, env map[string]string, dirs volumeDirs, sources volumeSources) (*containerFS, error) {
	volumes := map[string]*corev1.Volume{}
	for i := range pod.Spec.Volumes {
		volumes[pod.Spec.Volumes[i].Name] = &pod.Spec.Volumes[i]
	}
	fs := &containerFS{rootfs: dirs.rootfsDir()}
	if err := os.MkdirAll(fs.rootfs, 0o755); err != nil {
		return nil, fmt.Errorf("can't create the container's root directory: %w", err)
	}
	provided := map[string]string{}
	for _, vm := range c.VolumeMounts {
		v, ok := volumes[vm.Name]
		if !ok {
			return nil, fmt.Errorf("volume mount %q names no volume of the Pod", vm.Name)
		}
		m := fsMount{containerPath: path.Clean(vm.MountPath)}
		dir, done := provided[vm.Name]
		if !done {
			var err error
			dir, err = provideVolume(pod, v, dirs, sources)
			var unsupported unsupportedVolumeError
			switch {
			case errors.As(err, &unsupported):
				m.unsupported = err.Error()
			case err != nil:
				return nil, fmt.Errorf("volume %q: %w", vm.Name, err)
			}
			provided[vm.Name] = dir
		}
		if dir != "" {
			subPath := vm.SubPath
			if vm.SubPathExpr != "" {
				subPath = expand(vm.SubPathExpr, func(name string) (string, bool) {
					v, ok := env[name]
					return v, ok
				})
			}
			if path.IsAbs(subPath) || slices.Contains(strings.Split(subPath, "/"), "..") {
				return nil, fmt.Errorf("volume mount %q: sub path %q must be relative and stay inside the volume", vm.Name, subPath)
			}
			m.hostPath = filepath.Join(dir, filepath.FromSlash(subPath))
			if err := os.MkdirAll(m.hostPath, 0o755); err != nil {
				return nil, fmt.Errorf("volume mount %q: %w", vm.Name, err)
			}
		}
		fs.mounts = append(fs.mounts, m)
	}
	sort.SliceStable(fs.mounts, func(i, j int) bool { return len(fs.mounts[i].containerPath) > len(fs.mounts[j].containerPath) })
	return fs, nil
}

type unsupportedVolumeError string

func (e unsupportedVolumeError) Error() string { return string(e) }

// provideVolume returns the host directory of volume v, creating and filling it as needed.
func provideVolume(pod *corev1.Pod, v *corev1.Volume, dirs volumeDirs, sources volumeSources) (string, error) {
	ephemeral := filepath.Join(dirs.Pod, "volumes", v.Name)
	switch {
	case v.PersistentVolumeClaim != nil:
		uid, err := sources.ClaimUID(pod.Namespace, v.PersistentVolumeClaim.ClaimName)
		if err != nil {
			return "", missingOrError(err, false, "PersistentVolumeClaim", pod.Namespace, v.PersistentVolumeClaim.ClaimName)
		}
		dir := filepath.Join(dirs.Claims, uid)
		return dir, os.MkdirAll(dir, 0o755)
	case v.EmptyDir != nil:
		// An emptyDir lives as long as the Pod, across container restarts.
		return ephemeral, os.MkdirAll(ephemeral, 0o755)
	case v.ConfigMap != nil:
		cm, err := sources.ConfigMap(pod.Namespace, v.ConfigMap.Name)
		if err != nil {
			if err := missingOrError(err, isOptional(v.ConfigMap.Optional), "ConfigMap", pod.Namespace, v.ConfigMap.Name); err != nil {
				return "", err
			}
			return ephemeral, writeVolumeFiles(ephemeral, nil, nil, true)
		}
		data := map[string][]byte{}
		for k, val := range cm.Data {
			data[k] = []byte(val)
		}
		for k, val := range cm.BinaryData {
			data[k] = val
		}
		return ephemeral, writeVolumeFiles(ephemeral, data, v.ConfigMap.Items, isOptional(v.ConfigMap.Optional))
	case v.Secret != nil:
		s, err := sources.Secret(pod.Namespace, v.Secret.SecretName)
		if err != nil {
			if err := missingOrError(err, isOptional(v.Secret.Optional), "Secret", pod.Namespace, v.Secret.SecretName); err != nil {
				return "", err
			}
			return ephemeral, writeVolumeFiles(ephemeral, nil, nil, true)
		}
		return ephemeral, writeVolumeFiles(ephemeral, s.Data, v.Secret.Items, isOptional(v.Secret.Optional))
	}
	return "", unsupportedVolumeError(fmt.Sprintf("volume %q is of a kind the node simulator doesn't provide", v.Name))
}

// writeVolumeFiles replaces dir's content with data: every key, or only items at their paths.
func writeVolumeFiles(dir string, data map[string][]byte, items []corev1.KeyToPath, optional bool) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("can't clear %q: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("can't create %q: %w", dir, err)
	}
	files := map[string][]byte{}
	if len(items) == 0 {
		for k, v := range data {
			files[k] = v
		}
	}
	for _, item := range items {
		v, ok := data[item.Key]
		if !ok {
			if optional {
				continue
			}
			return fmt.Errorf("key %q doesn't exist: %w", item.Key, errNotYetAvailable)
		}
		files[item.Path] = v
	}
	for name, content := range files {
		clean := path.Clean(name)
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("file %q must stay inside the volume", name)
		}
		p := filepath.Join(dir, filepath.FromSlash(clean))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			return fmt.Errorf("can't write %q: %w", p, err)
		}
	}
	return nil
}
