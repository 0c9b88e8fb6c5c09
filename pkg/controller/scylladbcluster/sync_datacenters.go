package scylladbcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/resourceapply"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// Reasons of the RemoteDatacenterController's progressing conditions.
const (
	waitingForTurnReason      = "WaitingForTurn"
	waitingForRolloutReason   = "WaitingForRollout"
	waitingForClusterReason   = "WaitingForRemoteCluster"
	waitingForNamespaceReason = "WaitingForNamespaceDeletion"
)

// syncDatacenters makes each datacenter's objects in its remote cluster match sc (syncDatacenter), the datacenters
// taking turns as the seed plan says (seedsFor). A datacenter whose remote cluster can't be reached is skipped with an
// error naming it and its RemoteKubernetesCluster; the others go on. The last known state of its nodes still seeds
// the others.
func (c *Controller) syncDatacenters(ctx context.Context, sc *scyllav1alpha1.ScyllaDBCluster, dcs []*remoteDatacenter, token string) ([]metav1.Condition, error) {
	nodesType, _ := broadcastTypes(sc)
	states := make([]dcState, 0, len(dcs))
	readiness := map[string]bool{}
	for i, dc := range dcs {
		state := dcState{name: dc.spec.Name, rolledOut: dc.rolledOut(), unknown: dc.cluster == nil}
		state.bootstrapped = dc.sdc != nil && (state.rolledOut || !joinsThroughLater(sc, dcs, i))
		for _, e := range dc.endpoints(nodesType) {
			state.seedAddresses = append(state.seedAddresses, e.address)
			readiness[e.address] = e.ready
		}
		states = append(states, state)
	}

	// A datacenter whose ScyllaDBDatacenter this sync is about to change is not rolled out any more: the datacenters
	// after it wait for the change to roll out, so that datacenters change one at a time.
	plan := seedsFor(sc.Namespace, sc.Name, states)
	keepSeedOrder(plan, dcs)
	changed := false
	for i, dc := range dcs {
		if !plan.datacenters[i].mayProgress || !states[i].rolledOut {
			continue
		}
		required, err := makeScyllaDBDatacenter(sc, dc.spec, datacenterInputs{externalSeeds: plan.datacenters[i].externalSeeds})
		if err != nil {
			continue
		}
		if upToDate, err := isUpToDate(dc.sdc, required); err == nil && !upToDate {
			states[i].rolledOut = false
			changed = true
		}
	}
	if changed {
		plan = seedsFor(sc.Namespace, sc.Name, states)
		keepSeedOrder(plan, dcs)
	}

	var progressing []metav1.Condition
	var errs []error
	originals := newOriginals(c.kubeClient, sc.Namespace)
	backupS3, err := c.makeBackupS3Configs(ctx, sc, originals)
	if err != nil {
		errs = append(errs, fmt.Errorf("can't give the agents their backup buckets' credentials: %w", err))
	}
	if backupS3.readsCredentials {
		// Credentials Secrets are not watched: look at them again in a while.
		c.queue.AddAfter(cache.MetaObjectToName(sc).String(), referencedObjectsPeriod)
	}
	for i, dc := range dcs {
		p, err := c.syncDatacenter(ctx, sc, dc, plan.datacenters[i], readiness, token, backupS3, originals)
		progressing = append(progressing, p...)
		if err != nil {
			errs = append(errs, fmt.Errorf("datacenter %q (RemoteKubernetesCluster %q): %w", dc.spec.Name, dc.spec.RemoteKubernetesClusterName, err))
		}
	}
	if len(plan.blocked) != 0 {
		progressing = append(progressing, metav1.Condition{Type: "Datacenters", Reason: waitingForTurnReason, Message: plan.blocked})
	}
	return progressing, errors.Join(errs...)
}

// keepSeedOrder orders the external seeds plan gives each datacenter of dcs as its ScyllaDBDatacenter already has
// them, the others after them in plan order: the order of seeds means nothing to ScyllaDB, and a datacenter whose
// seeds only changed order (the datacenters before it reordered) must not be changed, which would restart its nodes.
func keepSeedOrder(plan seedPlan, dcs []*remoteDatacenter) {
	for i, dc := range dcs {
		if dc.sdc == nil {
			continue
		}
		existing := dc.sdc.Spec.ScyllaDB.ExternalSeeds
		position := func(seed string) int {
			if j := slices.Index(existing, seed); j >= 0 {
				return j
			}
			return len(existing)
		}
		slices.SortStableFunc(plan.datacenters[i].externalSeeds, func(a, b string) int { return position(a) - position(b) })
	}
}

// joinsThroughLater tells whether the ScyllaDBDatacenter of dcs[i] has, among its external seeds, the seed Service
// of a datacenter after it: it was created to join the cluster through them (seedsFor).
func joinsThroughLater(sc *scyllav1alpha1.ScyllaDBCluster, dcs []*remoteDatacenter, i int) bool {
	sdc := dcs[i].sdc
	if sdc == nil {
		return false
	}
	for _, later := range dcs[i+1:] {
		if slices.Contains(sdc.Spec.ScyllaDB.ExternalSeeds, naming.ScyllaDBClusterSeedServiceHost(sc.Name, later.spec.Name, dcs[i].namespace)) {
			return true
		}
	}
	return false
}

// syncDatacenter makes dc's objects in its remote namespace match sc: the namespace, the agent auth-token Secret,
// copies of the ConfigMaps and Secrets the ScyllaDBDatacenter references, the seed Services with their EndpointSlices
// (all of these even while dc waits for its turn, so that it is ready to go and its seeds follow the other
// datacenters' nodes) and, when seeds.mayProgress, the ScyllaDBDatacenter.
func (c *Controller) syncDatacenter(ctx context.Context, sc *scyllav1alpha1.ScyllaDBCluster, dc *remoteDatacenter, seeds datacenterSeeds, readiness map[string]bool, token string, backupS3 backupS3Configs, originals *originals) ([]metav1.Condition, error) {
	progress := func(reason, format string, args ...any) []metav1.Condition {
		return []metav1.Condition{{
			Type:    "Datacenter",
			Reason:  reason,
			Message: fmt.Sprintf("datacenter %q: ", dc.spec.Name) + fmt.Sprintf(format, args...),
		}}
	}
	if dc.err != nil {
		if errors.Is(dc.err, errCachesNotSynced) {
			return progress(waitingForClusterReason, "%v", dc.err), nil
		}
		return nil, dc.err
	}

	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("datacenter", dc.spec.Name, "remoteKubernetesCluster", dc.spec.RemoteKubernetesClusterName))
	recorder := &datacenterRecorder{EventRecorder: c.eventRecorder, sc: sc, prefix: fmt.Sprintf("datacenter %q (RemoteKubernetesCluster %q): ", dc.spec.Name, dc.spec.RemoteKubernetesClusterName)}
	kubeClient, kubeInformers := dc.cluster.KubeClient(), dc.cluster.KubeInformers()

	ns, err := makeRemoteNamespace(sc, dc.spec)
	if err != nil {
		return nil, err
	}
	if len(c.clusterID) != 0 {
		ns.Labels[naming.ManagedByClusterLabel] = c.clusterID
	}
	_, _, err = resourceapply.Apply(ctx, kubeClient.CoreV1().Namespaces(), kubeInformers.Core().V1().Namespaces().Lister(), recorder, ns, resourceapply.ApplyOptions{
		Precondition: func(existing metav1.Object) error { return c.checkRemoteNamespaceOwner(sc, dc.spec, existing) },
	})
	switch {
	case errors.Is(err, resourceapply.ErrObjectBeingDeleted):
		return progress(waitingForNamespaceReason, "waiting for the deletion of the previous namespace %q to finish", ns.Name), nil
	case err != nil:
		return nil, err
	}

	var errs []error
	required, err := makeScyllaDBDatacenter(sc, dc.spec, datacenterInputs{externalSeeds: seeds.externalSeeds})
	if err != nil {
		return nil, err
	}
	errs = append(errs, c.syncRemoteSecretsAndConfigMaps(ctx, sc, dc, required, token, backupS3, originals, recorder))
	errs = append(errs, c.syncSeedServices(ctx, sc, dc, seeds, readiness, recorder))

	var progressing []metav1.Condition
	switch {
	case !seeds.mayProgress:
		if dc.sdc == nil {
			progressing = progress(waitingForTurnReason, "waiting for the datacenters before it to roll out")
		}
	case len(token) == 0:
		// Its pods would start without the cluster's token and get a token of their own.
		progressing = progress(waitingForTurnReason, "waiting for the cluster's agent auth token")
	case errors.Join(errs...) != nil:
		// The ScyllaDBDatacenter needs what failed.
	default:
		scyllaClient := dc.cluster.ScyllaClient().ScyllaV1alpha1().ScyllaDBDatacenters(dc.namespace)
		lister := dc.cluster.ScyllaInformers().Scylla().V1alpha1().ScyllaDBDatacenters().Lister().ScyllaDBDatacenters(dc.namespace)
		_, changed, err := resourceapply.Apply(ctx, scyllaClient, lister, recorder, required, resourceapply.ApplyOptions{})
		switch {
		case err != nil:
			errs = append(errs, err)
		case changed || !dc.rolledOut():
			progressing = progress(waitingForRolloutReason, "waiting for ScyllaDBDatacenter %q to roll out", required.Name)
		}
	}
	return progressing, errors.Join(errs...)
}

// checkRemoteNamespaceOwner refuses to update an existing remote namespace that is not dc's: one another
// ScyllaDBCluster, another meta cluster (naming.ManagedByClusterLabel) or a user created under the same name.
func (c *Controller) checkRemoteNamespaceOwner(sc *scyllav1alpha1.ScyllaDBCluster, dc *scyllav1alpha1.ScyllaDBClusterDatacenter, existing metav1.Object) error {
	want := naming.ScyllaDBClusterRemoteLabels(sc.Namespace, sc.Name, dc.Name)
	got := existing.GetLabels()
	for k, v := range want {
		if got[k] != v {
			return fmt.Errorf("namespace %q exists but is not this datacenter's: its label %q is %q, not %q", existing.GetName(), k, got[k], v)
		}
	}
	if id, ok := c.otherMetaCluster(existing); ok {
		return fmt.Errorf("namespace %q belongs to a ScyllaDBCluster of another Kubernetes cluster (label %q is %q, this cluster's is %q)", existing.GetName(), naming.ManagedByClusterLabel, id, c.clusterID)
	}
	return nil
}

// otherMetaCluster returns the identity of the meta cluster a remote namespace belongs to
// (naming.ManagedByClusterLabel) when it is another one than the controller's: a ScyllaDBCluster of the same
// namespace and name there made it, and this controller must neither update nor delete it.
func (c *Controller) otherMetaCluster(ns metav1.Object) (string, bool) {
	id, ok := ns.GetLabels()[naming.ManagedByClusterLabel]
	if !ok || len(c.clusterID) == 0 || id == c.clusterID {
		return "", false
	}
	return id, true
}

// syncRemoteSecretsAndConfigMaps applies, in dc's remote namespace, the copy of the cluster's agent auth token, with
// the s3 section of dc's backup buckets (backup.go), and copies of the ConfigMaps and Secrets sdc references, read
// from sc's namespace, and removes the copies sdc no longer references.
func (c *Controller) syncRemoteSecretsAndConfigMaps(ctx context.Context, sc *scyllav1alpha1.ScyllaDBCluster, dc *remoteDatacenter, sdc *scyllav1alpha1.ScyllaDBDatacenter, token string, backupS3 backupS3Configs, originals *originals, recorder record.EventRecorder) error {
	kubeClient, kubeInformers := dc.cluster.KubeClient(), dc.cluster.KubeInformers()
	secretClient, secretLister := kubeClient.CoreV1().Secrets(dc.namespace), kubeInformers.Core().V1().Secrets().Lister().Secrets(dc.namespace)
	configMapClient, configMapLister := kubeClient.CoreV1().ConfigMaps(dc.namespace), kubeInformers.Core().V1().ConfigMaps().Lister().ConfigMaps(dc.namespace)
	refs := referencedObjects(sdc)
	var errs []error

	// A Secret or ConfigMap that can't be read keeps its copy: a wrong copy is better than none while the error lasts.
	wantedSecrets, wantedConfigMaps := sets.New[string](), sets.New[string]()
	// Unknown s3 settings leave the copy as it is: the agents keep reaching their buckets while the error lasts.
	if len(token) != 0 && !backupS3.unknown {
		secret, err := makeRemoteAuthTokenSecret(sc, dc.spec, token)
		if s3 := backupS3.forDatacenter(dc.spec.Name); err == nil && s3 != nil {
			secret, err = withAgentS3(secret, token, s3)
		}
		if err == nil {
			_, _, err = resourceapply.Apply(ctx, secretClient, secretLister, recorder, secret, resourceapply.ApplyOptions{})
		}
		errs = append(errs, err)
	}
	wantedSecrets.Insert(naming.ScyllaDBClusterAuthTokenSecretName(sc.Name))

	for _, name := range names(refs.secrets) {
		wantedSecrets.Insert(name)
		original, err := originals.secret(ctx, name)
		if apierrors.IsNotFound(err) && refs.secrets[name] {
			wantedSecrets.Delete(name)
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("can't get Secret %q referenced by the datacenter: %w", name, err))
			continue
		}
		copied, err := makeRemoteSecret(sc, dc.spec, original)
		if err == nil {
			_, _, err = resourceapply.Apply(ctx, secretClient, secretLister, recorder, copied, resourceapply.ApplyOptions{})
		}
		errs = append(errs, err)
	}
	for _, name := range names(refs.configMaps) {
		wantedConfigMaps.Insert(name)
		original, err := originals.configMap(ctx, name)
		if apierrors.IsNotFound(err) && refs.configMaps[name] {
			wantedConfigMaps.Delete(name)
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("can't get ConfigMap %q referenced by the datacenter: %w", name, err))
			continue
		}
		copied, err := makeRemoteConfigMap(sc, dc.spec, original)
		if err == nil {
			_, _, err = resourceapply.Apply(ctx, configMapClient, configMapLister, recorder, copied, resourceapply.ApplyOptions{})
		}
		errs = append(errs, err)
	}

	selector := labels.SelectorFromSet(naming.ScyllaDBClusterRemoteLabels(sc.Namespace, sc.Name, dc.spec.Name))
	if existing, err := secretLister.List(selector); err == nil {
		errs = append(errs, pruneRemote(ctx, secretClient, recorder, existing, wantedSecrets))
	}
	if existing, err := configMapLister.List(selector); err == nil {
		errs = append(errs, pruneRemote(ctx, configMapClient, recorder, existing, wantedConfigMaps))
	}
	return errors.Join(errs...)
}

// originals reads the ConfigMaps and Secrets the datacenters reference from the ScyllaDBCluster's namespace, and the
// credentials Secrets of their backup buckets, through the API (they are users' objects, which the operator does not
// cache), each at most once per sync however many datacenters reference it.
type originals struct {
	kubeClient kubernetes.Interface
	namespace  string
	secrets    map[string]readResult[*corev1.Secret]
	configMaps map[string]readResult[*corev1.ConfigMap]
}

type readResult[T any] struct {
	obj T
	err error
}

func newOriginals(kubeClient kubernetes.Interface, namespace string) *originals {
	return &originals{
		kubeClient: kubeClient,
		namespace:  namespace,
		secrets:    map[string]readResult[*corev1.Secret]{},
		configMaps: map[string]readResult[*corev1.ConfigMap]{},
	}
}

func (o *originals) secret(ctx context.Context, name string) (*corev1.Secret, error) {
	return o.secretIn(ctx, o.namespace, name)
}

// secretIn reads a Secret of any namespace, such as a backup bucket's credentials.
func (o *originals) secretIn(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	key := namespace + "/" + name
	r, ok := o.secrets[key]
	if !ok {
		r.obj, r.err = o.kubeClient.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		o.secrets[key] = r
	}
	return r.obj, r.err
}

func (o *originals) configMap(ctx context.Context, name string) (*corev1.ConfigMap, error) {
	r, ok := o.configMaps[name]
	if !ok {
		r.obj, r.err = o.kubeClient.CoreV1().ConfigMaps(o.namespace).Get(ctx, name, metav1.GetOptions{})
		o.configMaps[name] = r
	}
	return r.obj, r.err
}

// syncSeedServices applies, in dc's remote namespace, the seed Services seeds asks for with their EndpointSlices, and
// removes the other seed Services and EndpointSlices but those seeds keeps.
func (c *Controller) syncSeedServices(ctx context.Context, sc *scyllav1alpha1.ScyllaDBCluster, dc *remoteDatacenter, seeds datacenterSeeds, readiness map[string]bool, recorder record.EventRecorder) error {
	kubeClient, kubeInformers := dc.cluster.KubeClient(), dc.cluster.KubeInformers()
	serviceClient, serviceLister := kubeClient.CoreV1().Services(dc.namespace), kubeInformers.Core().V1().Services().Lister().Services(dc.namespace)
	sliceClient, sliceLister := kubeClient.DiscoveryV1().EndpointSlices(dc.namespace), controllerhelpers.OperatorEndpointSlices(kubeInformers, naming.RemoteOperatorEndpointSlicesSelector()).Lister().EndpointSlices(dc.namespace)

	var errs []error
	wantedServices, wantedSlices := sets.New[string](), sets.New[string]()
	for _, s := range seeds.seedServices {
		wantedServices.Insert(s.name)
		svc, err := makeSeedService(sc, dc.spec, s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, _, err := resourceapply.Apply(ctx, serviceClient, serviceLister, recorder, svc, resourceapply.ApplyOptions{}); err != nil {
			errs = append(errs, err)
		}
		slices, err := makeSeedEndpointSlices(sc, dc.spec, s, readiness)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, slice := range slices {
			wantedSlices.Insert(slice.Name)
			if _, _, err := resourceapply.Apply(ctx, sliceClient, sliceLister, recorder, slice, resourceapply.ApplyOptions{}); err != nil {
				errs = append(errs, err)
			}
		}
	}

	kept := sets.New(seeds.keptSeedServices...)
	wantedServices = wantedServices.Union(kept)
	selector := labels.SelectorFromSet(naming.ScyllaDBClusterRemoteLabels(sc.Namespace, sc.Name, dc.spec.Name))
	if existing, err := serviceLister.List(selector); err == nil {
		errs = append(errs, pruneRemote(ctx, serviceClient, recorder, existing, wantedServices))
	}
	if existing, err := sliceLister.List(selector); err == nil {
		for _, slice := range existing {
			if kept.Has(slice.Labels[discoveryv1.LabelServiceName]) {
				wantedSlices.Insert(slice.Name)
			}
		}
		errs = append(errs, pruneRemote(ctx, sliceClient, recorder, existing, wantedSlices))
	}
	return errors.Join(errs...)
}

// pruneRemote deletes the objects of existing, which carry a datacenter's remote labels, whose names are not in
// wanted. Remote objects have no owner references: the labels are what marks them as the ScyllaDBCluster's. Each
// delete carries a UID precondition, so that an object recreated under the same name is never deleted.
func pruneRemote[T kubeinterfaces.ObjectInterface](ctx context.Context, client kubeinterfaces.DeleterInterface, recorder record.EventRecorder, existing []T, wanted sets.Set[string]) error {
	var errs []error
	for _, obj := range slices.SortedFunc(slices.Values(existing), func(a, b T) int { return strings.Compare(a.GetName(), b.GetName()) }) {
		if wanted.Has(obj.GetName()) || obj.GetDeletionTimestamp() != nil {
			continue
		}
		uid := obj.GetUID()
		err := client.Delete(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		switch {
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			// Gone already, or recreated since the cache saw it.
		case err != nil:
			recorder.Eventf(obj, corev1.EventTypeWarning, "DeleteFailed", "can't delete %T %q: %v", obj, obj.GetName(), err)
			errs = append(errs, fmt.Errorf("can't delete %T %q: %w", obj, klog.KObj(obj), err))
		default:
			recorder.Eventf(obj, corev1.EventTypeNormal, "Deleted", "deleted %T %q, no longer needed", obj, obj.GetName())
			klog.FromContext(ctx).V(2).Info("Deleted a remote object that is no longer needed", "object", klog.KObj(obj))
		}
	}
	return errors.Join(errs...)
}

// isUpToDate tells whether existing, a ScyllaDBDatacenter in a remote cluster, was last applied as required: the
// hash resourceapply keeps in its annotations matches. A nil existing is not.
func isUpToDate(existing, required *scyllav1alpha1.ScyllaDBDatacenter) (bool, error) {
	if existing == nil {
		return false, nil
	}
	hash, err := resourceapply.Hash(required)
	if err != nil {
		return false, err
	}
	return existing.Annotations[naming.ManagedHashAnnotation] == hash, nil
}

// datacenterRecorder records the events of what the controller does in a remote cluster on the ScyllaDBCluster, in
// the meta cluster, prefixed with the datacenter: the remote objects' namespaces do not exist there, and the remote
// cluster's events are not where users of the ScyllaDBCluster look.
type datacenterRecorder struct {
	record.EventRecorder
	sc     *scyllav1alpha1.ScyllaDBCluster
	prefix string
}

func (r *datacenterRecorder) Event(_ runtime.Object, eventType, reason, message string) {
	r.EventRecorder.Event(r.sc, eventType, reason, r.prefix+message)
}

func (r *datacenterRecorder) Eventf(_ runtime.Object, eventType, reason, messageFmt string, args ...any) {
	r.EventRecorder.Event(r.sc, eventType, reason, r.prefix+fmt.Sprintf(messageFmt, args...))
}

func (r *datacenterRecorder) AnnotatedEventf(_ runtime.Object, annotations map[string]string, eventType, reason, messageFmt string, args ...any) {
	r.EventRecorder.AnnotatedEventf(r.sc, annotations, eventType, reason, "%s", r.prefix+fmt.Sprintf(messageFmt, args...))
}
