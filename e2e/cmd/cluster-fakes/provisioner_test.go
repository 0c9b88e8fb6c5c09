package main

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func newClass(mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: "standard"},
		Provisioner:       naming.FakeVolumeProvisioner,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimRetain),
		VolumeBindingMode: ptr.To(mode),
		MountOptions:      []string{"noatime"},
	}
}

func newClaim(annotations map[string]string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-0", UID: "uid-1", Annotations: annotations},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To("standard"),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			},
		},
	}
}

func TestMakePersistentVolume(t *testing.T) {
	t.Parallel()

	hostPathType := corev1.HostPathDirectoryOrCreate
	noStorage := newClaim(nil)
	noStorage.Spec.Resources.Requests = nil
	noAccessModes := newClaim(nil)
	noAccessModes.Spec.AccessModes = nil

	tt := []struct {
		name         string
		claim        *corev1.PersistentVolumeClaim
		selectedNode string
		want         *corev1.PersistentVolume
		wantErr      bool
	}{
		{
			name:         "volume is pre-bound to the claim and pinned to the selected node",
			claim:        newClaim(nil),
			selectedNode: "kwok-a-0",
			want: &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{
					Name:        "pvc-uid-1",
					Annotations: map[string]string{naming.ProvisionedByAnnotation: naming.FakeVolumeProvisioner},
				},
				Spec: corev1.PersistentVolumeSpec{
					Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					ClaimRef: &corev1.ObjectReference{
						Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: "ns", Name: "data-0", UID: "uid-1",
					},
					PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
					StorageClassName:              "standard",
					MountOptions:                  []string{"noatime"},
					PersistentVolumeSource: corev1.PersistentVolumeSource{
						HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/cluster-fakes/volumes/pvc-uid-1", Type: &hostPathType},
					},
					NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
						NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
							Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"kwok-a-0"},
						}}}},
					}},
				},
			},
		},
		{
			name:    "claim without a storage request is refused",
			claim:   noStorage,
			wantErr: true,
		},
		{
			name:    "claim without access modes is refused",
			claim:   noAccessModes,
			wantErr: true,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := makePersistentVolume(tc.claim, newClass(storagev1.VolumeBindingWaitForFirstConsumer), naming.FakeVolumeProvisioner, tc.selectedNode)
			if (err != nil) != tc.wantErr {
				t.Fatalf("expected error %v, got %v", tc.wantErr, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected volume (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProvisionerSyncClaim(t *testing.T) {
	t.Parallel()

	ours := map[string]string{naming.StorageProvisionerAnnotation: naming.FakeVolumeProvisioner}
	oursOnNode := map[string]string{
		naming.StorageProvisionerAnnotation: naming.FakeVolumeProvisioner,
		naming.SelectedNodeAnnotation:       "kwok-a-0",
	}
	bound := newClaim(oursOnNode)
	bound.Spec.VolumeName = "some-volume"

	tt := []struct {
		name       string
		claim      *corev1.PersistentVolumeClaim
		class      *storagev1.StorageClass
		wantCreate bool
	}{
		{
			name:       "claim handed to us with a selected node gets a volume",
			claim:      newClaim(oursOnNode),
			class:      newClass(storagev1.VolumeBindingWaitForFirstConsumer),
			wantCreate: true,
		},
		{
			name:  "WaitForFirstConsumer claim waits for the scheduler to select a node",
			claim: newClaim(ours),
			class: newClass(storagev1.VolumeBindingWaitForFirstConsumer),
		},
		{
			name:       "Immediate claim gets a volume without a selected node",
			claim:      newClaim(ours),
			class:      newClass(storagev1.VolumeBindingImmediate),
			wantCreate: true,
		},
		{
			name:  "claim of another provisioner is left alone",
			claim: newClaim(map[string]string{naming.StorageProvisionerAnnotation: "example.com/other"}),
			class: newClass(storagev1.VolumeBindingImmediate),
		},
		{
			name:  "bound claim is left alone",
			claim: bound,
			class: newClass(storagev1.VolumeBindingImmediate),
		},
		{
			name:  "claim whose class does not exist waits",
			claim: newClaim(ours),
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			objs := []runtime.Object{tc.claim}
			if tc.class != nil {
				objs = append(objs, tc.class)
			}
			client := fake.NewClientset(objs...)
			factory := informers.NewSharedInformerFactory(client, 0)
			p := newProvisioner(client, naming.FakeVolumeProvisioner,
				factory.Core().V1().PersistentVolumeClaims(), factory.Core().V1().PersistentVolumes(), factory.Storage().V1().StorageClasses())
			for _, obj := range objs {
				var err error
				switch o := obj.(type) {
				case *corev1.PersistentVolumeClaim:
					err = factory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(o)
				case *storagev1.StorageClass:
					err = factory.Storage().V1().StorageClasses().Informer().GetIndexer().Add(o)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			client.ClearActions()

			if err := p.syncClaim(ctx, "ns/data-0"); err != nil {
				t.Fatalf("unexpected sync error: %v", err)
			}
			var created []string
			for _, a := range client.Actions() {
				if a.GetVerb() == "create" && a.GetResource().Resource == "persistentvolumes" {
					created = append(created, a.GetResource().Resource)
				} else {
					t.Errorf("unexpected action %v", a)
				}
			}
			if got := len(created) == 1; got != tc.wantCreate {
				t.Errorf("expected a volume to be created: %v, got actions %v", tc.wantCreate, client.Actions())
			}
		})
	}
}

func TestProvisionerSyncVolume(t *testing.T) {
	t.Parallel()

	newVolume := func(provisionedBy string, phase corev1.PersistentVolumePhase, policy corev1.PersistentVolumeReclaimPolicy) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pvc-uid-1", UID: "pv-uid", Annotations: map[string]string{naming.ProvisionedByAnnotation: provisionedBy}},
			Spec:       corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: policy},
			Status:     corev1.PersistentVolumeStatus{Phase: phase},
		}
	}
	tt := []struct {
		name       string
		volume     *corev1.PersistentVolume
		wantDelete bool
	}{
		{
			name:       "released volume of ours with Delete policy is deleted",
			volume:     newVolume(naming.FakeVolumeProvisioner, corev1.VolumeReleased, corev1.PersistentVolumeReclaimDelete),
			wantDelete: true,
		},
		{
			name:   "bound volume is kept",
			volume: newVolume(naming.FakeVolumeProvisioner, corev1.VolumeBound, corev1.PersistentVolumeReclaimDelete),
		},
		{
			name:   "released volume with Retain policy is kept",
			volume: newVolume(naming.FakeVolumeProvisioner, corev1.VolumeReleased, corev1.PersistentVolumeReclaimRetain),
		},
		{
			name:   "released volume of another provisioner is kept",
			volume: newVolume("example.com/other", corev1.VolumeReleased, corev1.PersistentVolumeReclaimDelete),
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client := fake.NewClientset(tc.volume)
			factory := informers.NewSharedInformerFactory(client, 0)
			p := newProvisioner(client, naming.FakeVolumeProvisioner,
				factory.Core().V1().PersistentVolumeClaims(), factory.Core().V1().PersistentVolumes(), factory.Storage().V1().StorageClasses())
			if err := factory.Core().V1().PersistentVolumes().Informer().GetIndexer().Add(tc.volume); err != nil {
				t.Fatal(err)
			}
			client.ClearActions()

			if err := p.syncVolume(context.Background(), tc.volume.Name); err != nil {
				t.Fatalf("unexpected sync error: %v", err)
			}
			deleted := len(client.Actions()) == 1 && client.Actions()[0].GetVerb() == "delete"
			if deleted != tc.wantDelete || len(client.Actions()) > 1 {
				t.Errorf("expected delete %v, got actions %v", tc.wantDelete, client.Actions())
			}
		})
	}
}
