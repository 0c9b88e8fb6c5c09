package scylladbcluster

import (
	"maps"
	"slices"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// objectRefs are the names of the ConfigMaps and Secrets, in the ScyllaDBCluster's namespace, that a datacenter's
// ScyllaDBDatacenter references, each with whether every reference to it is optional (a missing optional object is
// not copied and not an error).
type objectRefs struct {
	configMaps map[string]bool
	secrets    map[string]bool
}

// referencedObjects returns what sdc's rack template and racks reference: custom ScyllaDB configs
// (scyllaDB.customConfigMapRef), custom agent configs (scyllaDBManagerAgent.customConfigSecretRef) and the
// ConfigMap, Secret and projected volumes of both containers.
func referencedObjects(sdc *scyllav1alpha1.ScyllaDBDatacenter) objectRefs {
	refs := objectRefs{configMaps: map[string]bool{}, secrets: map[string]bool{}}
	add := func(m map[string]bool, name string, optional bool) {
		if len(name) == 0 {
			return
		}
		if wasOptional, ok := m[name]; ok {
			optional = optional && wasOptional
		}
		m[name] = optional
	}
	addVolumes := func(volumes []corev1.Volume) {
		for _, v := range volumes {
			switch {
			case v.ConfigMap != nil:
				add(refs.configMaps, v.ConfigMap.Name, ptrTrue(v.ConfigMap.Optional))
			case v.Secret != nil:
				add(refs.secrets, v.Secret.SecretName, ptrTrue(v.Secret.Optional))
			case v.Projected != nil:
				for _, s := range v.Projected.Sources {
					if s.ConfigMap != nil {
						add(refs.configMaps, s.ConfigMap.Name, ptrTrue(s.ConfigMap.Optional))
					}
					if s.Secret != nil {
						add(refs.secrets, s.Secret.Name, ptrTrue(s.Secret.Optional))
					}
				}
			}
		}
	}
	templates := []*scyllav1alpha1.RackTemplate{sdc.Spec.RackTemplate}
	for i := range sdc.Spec.Racks {
		templates = append(templates, &sdc.Spec.Racks[i].RackTemplate)
	}
	for _, t := range templates {
		if t == nil {
			continue
		}
		if s := t.ScyllaDB; s != nil {
			if s.CustomConfigMapRef != nil {
				add(refs.configMaps, *s.CustomConfigMapRef, false)
			}
			addVolumes(s.Volumes)
		}
		if a := t.ScyllaDBManagerAgent; a != nil {
			if a.CustomConfigSecretRef != nil {
				add(refs.secrets, *a.CustomConfigSecretRef, false)
			}
			addVolumes(a.Volumes)
		}
	}
	return refs
}

// names returns the sorted names of m.
func names(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}

func ptrTrue(b *bool) bool {
	return b != nil && *b
}

// referencesObjects tells whether a datacenter of sc may reference ConfigMaps or Secrets to copy.
func referencesObjects(sc *scyllav1alpha1.ScyllaDBCluster) bool {
	for i := range sc.Spec.Datacenters {
		sdc, err := makeScyllaDBDatacenter(sc, &sc.Spec.Datacenters[i], datacenterInputs{})
		if err != nil {
			continue
		}
		refs := referencedObjects(sdc)
		if len(refs.configMaps) != 0 || len(refs.secrets) != 0 {
			return true
		}
	}
	return false
}

// makeRemoteConfigMap returns the copy of cm in dc's remote namespace: its data, under the same name.
func makeRemoteConfigMap(sc *scyllav1alpha1.ScyllaDBCluster, dc *scyllav1alpha1.ScyllaDBClusterDatacenter, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	if _, err := validateDatacenter(sc, dc); err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		ObjectMeta: remoteObjectMeta(sc, dc, cm.Name),
		Data:       maps.Clone(cm.Data),
		BinaryData: maps.Clone(cm.BinaryData),
	}, nil
}

// makeRemoteSecret returns the copy of secret in dc's remote namespace: its type and data, under the same name.
func makeRemoteSecret(sc *scyllav1alpha1.ScyllaDBCluster, dc *scyllav1alpha1.ScyllaDBClusterDatacenter, secret *corev1.Secret) (*corev1.Secret, error) {
	if _, err := validateDatacenter(sc, dc); err != nil {
		return nil, err
	}
	return &corev1.Secret{
		ObjectMeta: remoteObjectMeta(sc, dc, secret.Name),
		Type:       secret.Type,
		Data:       maps.Clone(secret.Data),
	}, nil
}
