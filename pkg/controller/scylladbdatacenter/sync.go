package scylladbdatacenter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/validation"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// ownedObjects are the objects a datacenter controls, after claiming, by name; and the pods and data claims of its
// nodes, which the datacenter does not own but whose removal it waits for.
type ownedObjects struct {
	statefulSets    map[string]*appsv1.StatefulSet
	services        map[string]*corev1.Service
	secrets         map[string]*corev1.Secret
	configMaps      map[string]*corev1.ConfigMap
	serviceAccounts map[string]*corev1.ServiceAccount
	roleBindings    map[string]*rbacv1.RoleBinding
	pdbs            map[string]*policyv1.PodDisruptionBudget
	ingresses       map[string]*networkingv1.Ingress
	pods            map[string]*corev1.Pod
	pvcs            map[string]*corev1.PersistentVolumeClaim
	// key is the datacenter's key.
	key string
	// adopted holds, as kindNameKey, the objects this sync adopted: the cache has them without their new
	// controllerRef, so they are not applied before it shows them again.
	adopted map[string]bool
}

// kindNameKey names an object of kind T in ownedObjects.adopted and ownershipConflicts.
func kindNameKey[T kubeinterfaces.ObjectInterface](name string) string {
	return kindOf[T]() + "/" + name
}

// sync makes the objects of the ScyllaDBDatacenter named by key match its spec and writes its status.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Dropping an invalid key", "key", key)
		return nil
	}

	logger := klog.FromContext(ctx).WithValues("scyllaDBDatacenter", klog.KRef(namespace, name))
	ctx = klog.NewContext(ctx, logger)
	start := time.Now()
	logger.V(4).Info("Started syncing")
	defer func() {
		logger.V(4).Info("Finished syncing", "duration", time.Since(start))
	}()

	sdc, err := c.scyllaDBDatacenters.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		logger.V(2).Info("ScyllaDBDatacenter is gone")
		c.expectations.forget(key)
		c.conflicts.forget(key)
		c.serviceApplies.Forget(key)
		c.statusBatcher.Forget(key)
		c.forgetCertificates(namespace, name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("can't get ScyllaDBDatacenter %q: %w", key, err)
	}
	if sdc.DeletionTimestamp != nil {
		// Everything it owns goes with it through the garbage collector.
		return nil
	}
	if err := validation.ValidateScyllaDBDatacenter(sdc).ToAggregate(); err != nil {
		// Nothing is built from a spec the webhook would refuse (one created while it was down); what exists stays
		// as it is until the spec changes.
		logger.V(2).Info("ScyllaDBDatacenter spec is invalid", "reason", err.Error())
		return c.updateStatus(ctx, sdc, invalidSpecStatus(sdc, err))
	}

	owned, err := c.getOwnedObjects(ctx, sdc)
	if err != nil {
		return err
	}

	c.useWrittenServices(owned)
	// Every builder reads the racks merged with the rack template: they are merged once.
	specRacks := effectiveRacks(sdc)
	racks := collectRacks(sdc, specRacks, owned, c.expectations)
	plans := planScale(datacenterName(sdc), parallelNodeOperations(sdc), racks, replacementInProgress(racks))
	replacements, replacementErr := c.planReplacements(sdc, racks, plans)

	var managedConfig *corev1.ConfigMap
	customConfigs, configErr := c.getCustomConfigs(ctx, sdc, specRacks)
	if configErr == nil {
		managedConfig, configErr = makeManagedConfigMap(sdc, specRacks, customConfigs, c.tlsEnabled())
	}
	if configErr == nil {
		keepRemovedRacksConfig(managedConfig, owned.configMaps[managedConfig.Name], racks)
	}
	backupS3, backupErr := c.makeBackupS3Config(ctx, sdc)
	var authTokenSecret *corev1.Secret
	var tokenErr error
	if backupErr != nil && !isSpecOnly(backupErr) {
		// The s3 section is unknown: the agent configuration stays as it is.
		tokenErr, backupErr = backupErr, nil
	} else {
		var customSetsS3 bool
		authTokenSecret, customSetsS3, tokenErr = c.makeAuthTokenSecret(ctx, sdc, specRacks, owned, backupS3.s3, backupErr != nil)
		if customSetsS3 {
			// The buckets' settings are not used: their problems are no one's (the conflict messages even advise a
			// custom s3 section).
			backupErr = nil
		}
	}
	var authTokenHash string
	if tokenErr == nil {
		authTokenHash = authTokenHMAC(authTokenSecret)
	}

	certOwned := c.takeCertificateObjects(sdc, owned)
	certsApplied := !c.tlsEnabled()
	statefulSets := map[string]*appsv1.StatefulSet{}
	// The Services as the cache has them, then as syncServices applied them.
	services := maps.Clone(owned.services)
	authTokenApplied := false
	subSyncs := []controllerhelpers.SubSync{
		{Name: serviceAccountControllerName, Sync: func(ctx context.Context) ([]metav1.Condition, error) {
			return c.syncServiceAccounts(ctx, sdc, owned)
		}},
		{Name: roleBindingControllerName, Sync: func(ctx context.Context) ([]metav1.Condition, error) {
			return c.syncRoleBindings(ctx, sdc, owned)
		}},
		{Name: configMapControllerName, Sync: func(ctx context.Context) ([]metav1.Condition, error) {
			return c.syncConfigMaps(ctx, sdc, owned, managedConfig, configErr)
		}},
		{Name: secretControllerName, Sync: func(ctx context.Context) ([]metav1.Condition, error) {
			return c.syncSecrets(ctx, sdc, owned, authTokenSecret, tokenErr, backupErr, &authTokenApplied)
		}},
		{Name: serviceControllerName, Sync: func(ctx context.Context) ([]metav1.Condition, error) {
			return c.syncServices(ctx, sdc, owned, racks, plans, services)
		}},
		{Name: nodeReplacementControllerName, Sync: func(ctx context.Context) ([]metav1.Condition, error) {
			if replacementErr != nil {
				return nil, replacementErr
			}
			return c.syncReplacements(ctx, sdc, replacements, services)
		}},
		{Name: statefulSetControllerName, Sync: func(ctx context.Context) ([]metav1.Condition, error) {
			if configErr != nil || !authTokenApplied || !certsApplied {
				// Pods carry hashes of the first two, so their StatefulSets wait rather than roll twice; they mount the
				// certificates.
				return []metav1.Condition{{
					Type:    "StatefulSets",
					Reason:  waitingForPodConfigurationReason,
					Message: "waiting for the managed config, the agent auth-token Secret and the TLS certificates",
				}}, nil
			}
			return c.syncStatefulSets(ctx, sdc, owned, racks, plans, managedConfig, statefulSetInputs{
				operatorImage: c.operatorImage,
				authTokenHash: authTokenHash,
				automaticTLS:  c.tlsEnabled(),
			}, statefulSets)
		}},
		{Name: pdbControllerName, Sync: func(ctx context.Context) ([]metav1.Condition, error) {
			return c.syncPodDisruptionBudgets(ctx, sdc, owned)
		}},
	}
	if cqlIngressOptions(sdc) != nil || len(owned.ingresses) != 0 {
		// After the Services, whose host IDs name the Node Ingresses. Datacenters without CQL ingress have no
		// IngressController conditions: their status does not change.
		servicesAt := slices.IndexFunc(subSyncs, func(s controllerhelpers.SubSync) bool { return s.Name == serviceControllerName })
		subSyncs = slices.Insert(subSyncs, servicesAt+1, controllerhelpers.SubSync{Name: ingressControllerName, Sync: func(ctx context.Context) ([]metav1.Condition, error) {
			return c.syncIngresses(ctx, sdc, owned, services)
		}})
	}
	// Right before the StatefulSets, which wait for what their pods mount.
	certificatesAt := slices.IndexFunc(subSyncs, func(s controllerhelpers.SubSync) bool { return s.Name == statefulSetControllerName })
	if c.tlsEnabled() {
		subSyncs = slices.Insert(subSyncs, certificatesAt, controllerhelpers.SubSync{Name: certificateControllerName, Sync: func(ctx context.Context) ([]metav1.Condition, error) {
			return c.syncCertificates(ctx, sdc, specRacks, owned, services, certOwned, &certsApplied)
		}})
	} else if alternatorCertificateIsUserManaged(sdc) {
		subSyncs = slices.Insert(subSyncs, certificatesAt, controllerhelpers.SubSync{Name: certificateControllerName, Sync: func(ctx context.Context) ([]metav1.Condition, error) {
			return c.syncUserManagedAlternatorCertificate(ctx, sdc, key)
		}})
	}
	conditions, syncErr := controllerhelpers.RunSubSyncs(ctx, sdc.Generation, subSyncs...)
	if conditions == nil {
		// The sub-syncs could not even run (a programming error); nothing they report can be trusted.
		return syncErr
	}

	for _, r := range racks {
		if sts, ok := statefulSets[r.statefulSetName]; ok {
			r.statefulSet = sts
		}
	}
	if replacements != nil {
		conditions = append(conditions, replacements.rackConditions(sdc.Generation)...)
	}
	status, err := c.calculateStatus(sdc, racks, owned.pods, conditions)
	if err != nil {
		return errors.Join(syncErr, err)
	}
	if err := c.updateStatus(ctx, sdc, status); err != nil {
		return errors.Join(syncErr, err)
	}

	if c.conflicts.any(key) || readsUserObjects(sdc) || backupS3.readsCredentials {
		c.queue.AddAfter(key, c.recheckInterval)
	}
	if syncErr != nil && isSpecOnly(syncErr) {
		// Retrying can't fix the spec; its next change, reported in the conditions meanwhile, triggers a sync.
		logger.V(2).Info("ScyllaDBDatacenter spec can't be fully applied", "reason", syncErr.Error())
		return nil
	}
	return syncErr
}

// keepRemovedRacksConfig copies into managedConfig the scylla.yaml of every rack removed from the spec whose
// StatefulSet still runs nodes, from the existing ConfigMap: their pods must keep finding it when they restart.
func keepRemovedRacksConfig(managedConfig, existing *corev1.ConfigMap, racks []*rackObjects) {
	if existing == nil {
		return
	}
	for _, r := range racks {
		key := naming.ScyllaDBManagedConfigKey(r.name)
		if data, ok := existing.Data[key]; ok && r.rack == nil && r.currentReplicas() != 0 {
			managedConfig.Data[key] = data
		}
	}
}

// getCustomConfigs returns the scylla.yaml of every custom config ConfigMap the racks (effectiveRacks) name, by
// ConfigMap name. They are the user's and outside the informer caches (readsUserObjects): each is read from the API
// server.
func (c *Controller) getCustomConfigs(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, racks []scyllav1alpha1.RackSpec) (map[string][]byte, error) {
	configs := map[string][]byte{}
	for i := range racks {
		rack := &racks[i]
		ref := customConfigMapRef(rack)
		if _, ok := configs[ref]; ok || len(ref) == 0 {
			continue
		}
		cm, err := c.kubeClient.CoreV1().ConfigMaps(sdc.Namespace).Get(ctx, ref, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("can't get the custom config ConfigMap %q of rack %q: %w", ref, rack.Name, err)
		}
		data, ok := cm.Data[naming.ScyllaDBCustomConfigKey]
		if !ok {
			return nil, newSpecError("can't read the custom config ConfigMap %q of rack %q: it has no key %q", ref, rack.Name, naming.ScyllaDBCustomConfigKey)
		}
		configs[ref] = []byte(data)
	}
	return configs, nil
}

// isSpecOnly tells whether every error in err is a specError.
func isSpecOnly(err error) bool {
	var se *specError
	if errors.As(err, &se) {
		return true
	}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			if !isSpecOnly(e) {
				return false
			}
		}
		return true
	}
	return false
}

// getOwnedObjects claims the objects of every owned kind in the datacenter's namespace (adopting orphans that carry
// its labels, releasing the ones that lost them) and lists its pods and data claims.
func (c *Controller) getOwnedObjects(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter) (*ownedObjects, error) {
	ns := sdc.Namespace
	canAdopt := controllerhelpers.RecheckController(sdc, func(ctx context.Context) (metav1.Object, error) {
		return c.scyllaClient.ScyllaV1alpha1().ScyllaDBDatacenters(ns).Get(ctx, sdc.Name, metav1.GetOptions{})
	})

	// One selector for every kind: each object of the namespace is matched against it.
	selector := naming.ClusterSelector(sdc.Name)
	var errs []error
	owned := &ownedObjects{key: cache.MetaObjectToName(sdc).String(), adopted: map[string]bool{}}
	owned.statefulSets, errs = claim(ctx, sdc, selector, canAdopt, c.statefulSetLister.StatefulSets(ns), c.kubeClient.AppsV1().StatefulSets(ns), owned.adopted, errs)
	owned.services, errs = claim(ctx, sdc, selector, canAdopt, c.serviceLister.Services(ns), c.kubeClient.CoreV1().Services(ns), owned.adopted, errs)
	owned.secrets, errs = claim(ctx, sdc, selector, canAdopt, c.secretLister.Secrets(ns), c.kubeClient.CoreV1().Secrets(ns), owned.adopted, errs)
	owned.configMaps, errs = claim(ctx, sdc, selector, canAdopt, c.configMapLister.ConfigMaps(ns), c.kubeClient.CoreV1().ConfigMaps(ns), owned.adopted, errs)
	owned.serviceAccounts, errs = claim(ctx, sdc, selector, canAdopt, c.serviceAccountLister.ServiceAccounts(ns), c.kubeClient.CoreV1().ServiceAccounts(ns), owned.adopted, errs)
	owned.roleBindings, errs = claim(ctx, sdc, selector, canAdopt, c.roleBindingLister.RoleBindings(ns), c.kubeClient.RbacV1().RoleBindings(ns), owned.adopted, errs)
	owned.pdbs, errs = claim(ctx, sdc, selector, canAdopt, c.pdbLister.PodDisruptionBudgets(ns), c.kubeClient.PolicyV1().PodDisruptionBudgets(ns), owned.adopted, errs)
	owned.ingresses, errs = claim(ctx, sdc, selector, canAdopt, c.ingressLister.Ingresses(ns), c.kubeClient.NetworkingV1().Ingresses(ns), owned.adopted, errs)

	pods, err := c.podLister.Pods(ns).List(selector)
	if err != nil {
		errs = append(errs, fmt.Errorf("can't list Pods: %w", err))
	}
	owned.pods = byName(pods)
	pvcs, err := c.pvcLister.PersistentVolumeClaims(ns).List(selector)
	if err != nil {
		errs = append(errs, fmt.Errorf("can't list PersistentVolumeClaims: %w", err))
	}
	owned.pvcs = byName(pvcs)

	return owned, utilerrors.NewAggregate(errs)
}

// listerInterface lists the objects of a kind in one namespace from an informer cache.
type listerInterface[T kubeinterfaces.ObjectInterface] interface {
	List(selector labels.Selector) ([]T, error)
}

// claim lists every object of a kind in the datacenter's namespace and returns, by name, those it controls after
// claiming them (selector is the datacenter's naming.ClusterSelector); the ones it just adopted are added to adopted
// (kindNameKey).
func claim[T kubeinterfaces.ObjectInterface](
	ctx context.Context,
	sdc *scyllav1alpha1.ScyllaDBDatacenter,
	selector labels.Selector,
	canAdopt controllerhelpers.CanAdoptFunc,
	lister listerInterface[T],
	client kubeinterfaces.PatcherInterface[T],
	adopted map[string]bool,
	errs []error,
) (map[string]T, []error) {
	kind := kindOf[T]()
	objects, err := lister.List(labels.Everything())
	if err != nil {
		return nil, append(errs, fmt.Errorf("can't list %ss in namespace %q: %w", kind, sdc.Namespace, err))
	}
	claimer := controllerhelpers.NewClaimer(sdc, scyllaDBDatacenterGVK, selector, client, canAdopt)
	claimed, err := claimer.Claim(ctx, objects)
	if err != nil {
		errs = append(errs, fmt.Errorf("can't claim %ss for ScyllaDBDatacenter %q: %w", kind, klog.KObj(sdc), err))
	}
	for _, obj := range claimed {
		// Claim returns an adopted object as the cache has it: without a controller.
		if metav1.GetControllerOfNoCopy(obj) == nil {
			adopted[kindNameKey[T](obj.GetName())] = true
		}
	}
	return byName(claimed), errs
}

// kindOf names the kind of T, a pointer to an API struct, for errors and conditions.
func kindOf[T kubeinterfaces.ObjectInterface]() string {
	return reflect.TypeFor[T]().Elem().Name()
}

func byName[T kubeinterfaces.ObjectInterface](objects []T) map[string]T {
	m := make(map[string]T, len(objects))
	for _, obj := range objects {
		m[obj.GetName()] = obj
	}
	return m
}

// collectRacks groups the datacenter's StatefulSets, member Services, pods and data claims by rack: first the racks of
// the spec (specRacks, effectiveRacks of sdc), in order, then the racks removed from the spec whose StatefulSet is
// still there, by name. Writes the caches may not show yet come from exp.
func collectRacks(sdc *scyllav1alpha1.ScyllaDBDatacenter, specRacks []scyllav1alpha1.RackSpec, owned *ownedObjects, exp *expectations) []*rackObjects {
	key := cache.MetaObjectToName(sdc).String()
	dc := datacenterName(sdc)
	var racks []*rackObjects
	known := map[string]bool{}
	for i := range specRacks {
		rack := &specRacks[i]
		stsName := naming.StatefulSetName(sdc.Name, dc, rack.Name)
		known[stsName] = true
		racks = append(racks, &rackObjects{
			name:            rack.Name,
			rack:            rack,
			statefulSetName: stsName,
			statefulSet:     owned.statefulSets[stsName],
		})
	}
	for _, stsName := range slices.Sorted(maps.Keys(owned.statefulSets)) {
		if known[stsName] {
			continue
		}
		sts := owned.statefulSets[stsName]
		name := sts.Labels[naming.RackNameLabel]
		if len(name) == 0 {
			name = stsName
		}
		racks = append(racks, &rackObjects{name: name, statefulSetName: stsName, statefulSet: sts})
	}

	for _, r := range racks {
		if replicas, ok := exp.pendingReplicas(key, r.statefulSetName, r.statefulSet); ok {
			r.pendingReplicas = &replicas
		}
		r.services = map[int32]*corev1.Service{}
		r.pods = map[int32]*corev1.Pod{}
		r.pvcs = map[int32]*corev1.PersistentVolumeClaim{}
		r.pendingDecommissions = map[string]bool{}
	}
	members := newMemberMatcher(racks)
	for name, pod := range owned.pods {
		if r, ordinal, ok := members.rackOf(name); ok {
			r.pods[ordinal] = pod
		}
	}
	for name, svc := range owned.services {
		if svc.Labels[naming.ScyllaServiceTypeLabel] != naming.ScyllaServiceTypeMember {
			continue
		}
		r, ordinal, ok := members.rackOf(name)
		if !ok {
			continue
		}
		if exp.pendingDecommission(key, name, svc) {
			svc = svc.DeepCopy()
			svc.Labels[naming.DecommissionedLabel] = naming.DecommissionedLabelFalse
			r.pendingDecommissions[name] = true
		}
		r.services[ordinal] = svc
	}
	pvcPrefix := naming.PVCName("")
	for name, pvc := range owned.pvcs {
		podName, ok := strings.CutPrefix(name, pvcPrefix)
		if !ok {
			continue
		}
		if r, ordinal, ok := members.rackOf(podName); ok {
			r.pvcs[ordinal] = pvc
		}
	}
	return racks
}

// memberMatcher finds the rack a pod (or member Service) name belongs to, as memberOrdinal does, formatting each
// rack's name of an ordinal once: every pod, member Service and data claim of the datacenter is matched against
// every rack at every sync.
type memberMatcher struct {
	racks []*rackObjects
	names map[memberKey]string
}

// memberKey is the ordinal-th member of racks[rack].
type memberKey struct {
	rack    int
	ordinal int32
}

func newMemberMatcher(racks []*rackObjects) *memberMatcher {
	return &memberMatcher{racks: racks, names: map[memberKey]string{}}
}

// rackOf returns the rack whose StatefulSet names the pod name, and the pod's ordinal. A name is at most one rack's:
// its ordinal is its own, and the StatefulSet names of the racks differ.
func (m *memberMatcher) rackOf(name string) (*rackObjects, int32, bool) {
	ordinal, err := naming.PodOrdinal(name)
	if err != nil {
		return nil, 0, false
	}
	for i, r := range m.racks {
		k := memberKey{rack: i, ordinal: ordinal}
		want, ok := m.names[k]
		if !ok {
			want = naming.PodName(r.statefulSetName, ordinal)
			m.names[k] = want
		}
		if want == name {
			return r, ordinal, true
		}
	}
	return nil, 0, false
}

// memberOrdinal returns the ordinal of a pod (or member Service) name of the StatefulSet stsName.
func memberOrdinal(stsName, name string) (int32, bool) {
	ordinal, err := naming.PodOrdinal(name)
	if err != nil || naming.PodName(stsName, ordinal) != name {
		return 0, false
	}
	return ordinal, true
}
