package scyllacluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/validation"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Defaults of the ScyllaCluster API. The CRD applies them on admission; they are applied here as well so that a
// field the API server stored empty (a zero value it could not tell from "unset") means what the API says it means.
const (
	defaultRepository          = "docker.io/scylladb/scylla"
	defaultAgentRepository     = "docker.io/scylladb/scylla-manager-agent"
	defaultAgentVersion        = "latest"
	defaultTaskNumRetries      = int64(3)
	defaultBackupRetention     = int64(3)
	defaultRepairIntensity     = "1"
	defaultSmallTableThreshold = "1GiB"
)

var (
	scyllaClusterGVK = scyllav1.SchemeGroupVersion.WithKind("ScyllaCluster")

	// startDateNowPattern matches the relative start dates of the ScyllaCluster API ("now", "now+1d2h"), which
	// ScyllaDBManagerTask has no field for.
	startDateNowPattern = regexp.MustCompile(`^now([+]([0-9]+(d|h|m|s))+)?$`)
)

// makeScyllaDBDatacenter translates sc into the ScyllaDBDatacenter that runs it: same name and namespace, controlled
// by sc, labelled for registration with ScyllaDB Manager. Fields of sc without a place in the ScyllaDBDatacenter API
// travel as internal annotations. It returns an error when sc can't be translated; retrying does not help then.
func makeScyllaDBDatacenter(sc *scyllav1.ScyllaCluster) (*scyllav1alpha1.ScyllaDBDatacenter, error) {
	// Everything below may alias sc's fields; the copy keeps the informer cache out of reach of later mutations.
	sc = sc.DeepCopy()
	spec := &sc.Spec

	var errs []error
	if len(spec.Version) == 0 {
		errs = append(errs, errors.New("spec.version must not be empty"))
	}
	additionalArgs, err := validation.SplitArguments(spec.ScyllaArgs)
	if err != nil {
		errs = append(errs, fmt.Errorf("can't split spec.scyllaArgs into arguments: %w", err))
	}
	annotations, err := makeScyllaDBDatacenterAnnotations(sc)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) != 0 {
		return nil, utilerrors.NewAggregate(errs)
	}

	labels := make(map[string]string, len(sc.Labels)+1)
	maps.Copy(labels, sc.Labels)
	if sc.Annotations[naming.DisableGlobalScyllaDBManagerIntegrationAnnotation] == naming.InternalAnnotationTrue {
		// Opted out: a label copied from the ScyllaCluster would register it all the same. A datacenter labelled
		// before loses the label, and the manager-controller removes it from ScyllaDB Manager.
		delete(labels, naming.RegisterWithScyllaDBManagerLabel)
	} else {
		labels[naming.RegisterWithScyllaDBManagerLabel] = naming.RegisterWithScyllaDBManagerLabelValue
	}

	dnsPolicy := spec.Network.DNSPolicy
	if len(dnsPolicy) == 0 {
		// What the ScyllaCluster API does for an empty dnsPolicy; for pods without host networking it behaves as
		// ClusterFirst.
		dnsPolicy = corev1.DNSClusterFirstWithHostNet
	}

	racks := make([]scyllav1alpha1.RackSpec, 0, len(spec.Datacenter.Racks))
	for i := range spec.Datacenter.Racks {
		racks = append(racks, makeRack(&spec.Datacenter.Racks[i]))
	}

	sdc := &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: metav1.ObjectMeta{
			Name:            naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name),
			Namespace:       sc.Namespace,
			Labels:          labels,
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sc, scyllaClusterGVK)},
		},
		Spec: scyllav1alpha1.ScyllaDBDatacenterSpec{
			Metadata:       makeObjectTemplateMetadata(spec.PodMetadata),
			ClusterName:    sc.Name,
			DatacenterName: &spec.Datacenter.Name,
			ScyllaDB: scyllav1alpha1.ScyllaDB{
				Image:                       image(orDefault(spec.Repository, defaultRepository), spec.Version),
				ExternalSeeds:               spec.ExternalSeeds,
				AlternatorOptions:           makeAlternatorOptions(spec.Alternator),
				AdditionalScyllaDBArguments: additionalArgs,
				EnableDeveloperMode:         trueOrNil(spec.DeveloperMode),
			},
			ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgent{
				Image: new(image(orDefault(spec.AgentRepository, defaultAgentRepository), orDefault(spec.AgentVersion, defaultAgentVersion))),
			},
			ImagePullSecrets:                        spec.ImagePullSecrets,
			DNSPolicy:                               &dnsPolicy,
			DNSDomains:                              spec.DNSDomains,
			ForceRedeploymentReason:                 stringOrNil(spec.ForceRedeploymentReason),
			IPFamilyPolicy:                          spec.Network.IPFamilyPolicy,
			IPFamilies:                              spec.Network.IPFamilies,
			ExposeOptions:                           makeExposeOptions(spec.ExposeOptions),
			Racks:                                   racks,
			DisableAutomaticOrphanedNodeReplacement: new(!spec.AutomaticOrphanedNodeCleanup),
			MinTerminationGracePeriodSeconds:        spec.MinTerminationGracePeriodSeconds,
			MinReadySeconds:                         spec.MinReadySeconds,
			ReadinessGates:                          spec.ReadinessGates,
			EnableParallelNodeOperations:            spec.EnableParallelNodeOperations,
		},
	}
	return sdc, nil
}

// makeScyllaDBDatacenterAnnotations returns the internal annotations that carry what the ScyllaDBDatacenter API has
// no field for.
func makeScyllaDBDatacenterAnnotations(sc *scyllav1.ScyllaCluster) (map[string]string, error) {
	annotations := map[string]string{
		naming.ScyllaDBManagerClusterNameOverrideAnnotation: naming.ScyllaDBManagerClusterName(sc.Namespace, sc.Name),
	}
	if sc.Spec.Network.HostNetworking {
		annotations[naming.HostNetworkingAnnotation] = naming.InternalAnnotationTrue
	}
	if alternator := sc.Spec.Alternator; alternator != nil {
		if alternator.Port != 0 {
			annotations[naming.AlternatorPortAnnotation] = strconv.FormatInt(int64(alternator.Port), 10)
		}
		if alternator.InsecureEnableHTTP != nil {
			annotations[naming.AlternatorInsecureEnableHTTPAnnotation] = formatBool(*alternator.InsecureEnableHTTP)
		}
		if alternator.InsecureDisableAuthorization != nil {
			annotations[naming.AlternatorInsecureDisableAuthorizationAnnotation] = formatBool(*alternator.InsecureDisableAuthorization)
		}
	}
	if len(sc.Spec.Sysctls) != 0 {
		// A JSON list: sysctl values may hold spaces and commas.
		sysctls, err := json.Marshal(sc.Spec.Sysctls)
		if err != nil {
			return nil, fmt.Errorf("can't encode spec.sysctls: %w", err)
		}
		annotations[naming.SysctlsAnnotation] = string(sysctls)
	}
	return annotations, nil
}

// makeScyllaDBManagerClusterIDHandOver returns the annotation that hands sc's status.managerId to its
// ScyllaDBDatacenter: the ID an older manager-controller registered sc's cluster under in ScyllaDB Manager, which the
// manager-controller adopts from naming.ScyllaDBManagerClusterIDAnnotation instead of registering the cluster anew
// (under a new ID, away from its backups). The manager-controller owns that annotation, so it is not among the
// ScyllaDBDatacenter's required annotations, which the operator would overwrite, and remove once it stops asking for
// them: it is set only where the ScyllaDBDatacenter has none (resourceapply.ApplyOptions.AnnotationsIfAbsent), and
// a value there always wins. It returns nil when sc has no managerId, or one that can't be handed over (the error).
func makeScyllaDBManagerClusterIDHandOver(sc *scyllav1.ScyllaCluster) (map[string]string, error) {
	id, err := scyllaClusterManagerID(sc)
	if err != nil || len(id) == 0 {
		return nil, err
	}
	return map[string]string{naming.ScyllaDBManagerClusterIDAnnotation: id}, nil
}

// scyllaClusterManagerID returns sc's status.managerId, "" when it has none, or an error when it is not a UUID, which
// no ScyllaDB Manager cluster ID can be.
func scyllaClusterManagerID(sc *scyllav1.ScyllaCluster) (string, error) {
	id := deref(sc.Status.ManagerID)
	if len(id) == 0 {
		return "", nil
	}
	if !managerclient.IsUUID(id) {
		return "", fmt.Errorf("status.managerId %q is not a UUID, so it can't be the ID of a cluster in ScyllaDB Manager", id)
	}
	return id, nil
}

func makeRack(rack *scyllav1.RackSpec) scyllav1alpha1.RackSpec {
	var rackExposeOptions *scyllav1alpha1.RackExposeOptions
	if rack.ExposeOptions != nil {
		rackExposeOptions = &scyllav1alpha1.RackExposeOptions{}
		if rack.ExposeOptions.NodeService != nil {
			rackExposeOptions.NodeService = &scyllav1alpha1.RackNodeServiceTemplate{
				ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata(rack.ExposeOptions.NodeService.ObjectTemplateMetadata),
			}
		}
	}

	return scyllav1alpha1.RackSpec{
		Name: rack.Name,
		RackTemplate: scyllav1alpha1.RackTemplate{
			Nodes:     &rack.Members,
			Placement: makePlacement(rack.Placement),
			ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{
				Resources: &rack.Resources,
				Storage: &scyllav1alpha1.StorageOptions{
					Metadata:         makeObjectTemplateMetadata(rack.Storage.Metadata),
					Capacity:         rack.Storage.Capacity,
					StorageClassName: rack.Storage.StorageClassName,
				},
				CustomConfigMapRef: stringOrNil(rack.ScyllaConfig),
				// The rack's volumes are pod volumes that both the ScyllaDB and the agent mounts may refer to; they
				// are listed once, here, so that the pod does not get them twice.
				Volumes:      rack.Volumes,
				VolumeMounts: rack.VolumeMounts,
			},
			ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgentTemplate{
				Resources:             &rack.AgentResources,
				CustomConfigSecretRef: stringOrNil(rack.ScyllaAgentConfig),
				VolumeMounts:          rack.AgentVolumeMounts,
			},
			ExposeOptions: rackExposeOptions,
		},
	}
}

func makePlacement(placement *scyllav1.PlacementSpec) *scyllav1alpha1.Placement {
	if placement == nil {
		return nil
	}
	return &scyllav1alpha1.Placement{
		NodeAffinity:    placement.NodeAffinity,
		PodAffinity:     placement.PodAffinity,
		PodAntiAffinity: placement.PodAntiAffinity,
		Tolerations:     placement.Tolerations,
	}
}

func makeObjectTemplateMetadata(metadata *scyllav1.ObjectTemplateMetadata) *scyllav1alpha1.ObjectTemplateMetadata {
	if metadata == nil {
		return nil
	}
	return new(scyllav1alpha1.ObjectTemplateMetadata(*metadata))
}

func makeAlternatorOptions(alternator *scyllav1.AlternatorSpec) *scyllav1alpha1.AlternatorOptions {
	if alternator == nil {
		return nil
	}
	options := &scyllav1alpha1.AlternatorOptions{
		WriteIsolation: scyllav1alpha1.AlternatorWriteIsolation(alternator.WriteIsolation),
	}
	if certificate := alternator.ServingCertificate; certificate != nil {
		options.ServingCertificate = &scyllav1alpha1.TLSCertificate{
			Type: scyllav1alpha1.TLSCertificateType(certificate.Type),
		}
		if certificate.UserManagedOptions != nil {
			options.ServingCertificate.UserManagedOptions = new(scyllav1alpha1.UserManagedTLSCertificateOptions(*certificate.UserManagedOptions))
		}
		if certificate.OperatorManagedOptions != nil {
			options.ServingCertificate.OperatorManagedOptions = new(scyllav1alpha1.OperatorManagedTLSCertificateOptions(*certificate.OperatorManagedOptions))
		}
	}
	return options
}

func makeExposeOptions(exposeOptions *scyllav1.ExposeOptions) *scyllav1alpha1.ExposeOptions {
	if exposeOptions == nil {
		return nil
	}
	out := &scyllav1alpha1.ExposeOptions{}

	// The ScyllaDBDatacenter API has no "disabled" switch: a disabled Ingress is no Ingress.
	if cql := exposeOptions.CQL; cql != nil && cql.Ingress != nil && !isTrue(cql.Ingress.Disabled) {
		out.CQL = &scyllav1alpha1.CQLExposeOptions{
			Ingress: &scyllav1alpha1.IngressOptions{
				ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata(cql.Ingress.ObjectTemplateMetadata),
				IngressClassName:       cql.Ingress.IngressClassName,
			},
		}
	}

	if nodeService := exposeOptions.NodeService; nodeService != nil {
		out.NodeService = &scyllav1alpha1.NodeServiceTemplate{
			ObjectTemplateMetadata:        scyllav1alpha1.ObjectTemplateMetadata(nodeService.ObjectTemplateMetadata),
			Type:                          scyllav1alpha1.NodeServiceType(nodeService.Type),
			ExternalTrafficPolicy:         nodeService.ExternalTrafficPolicy,
			AllocateLoadBalancerNodePorts: nodeService.AllocateLoadBalancerNodePorts,
			LoadBalancerClass:             nodeService.LoadBalancerClass,
			InternalTrafficPolicy:         nodeService.InternalTrafficPolicy,
		}
	}

	if broadcastOptions := exposeOptions.BroadcastOptions; broadcastOptions != nil {
		out.BroadcastOptions = &scyllav1alpha1.NodeBroadcastOptions{
			Nodes:   makeBroadcastOptions(broadcastOptions.Nodes),
			Clients: makeBroadcastOptions(broadcastOptions.Clients),
		}
	}

	if listenOptions := exposeOptions.ListenOptions; listenOptions != nil {
		out.ListenOptions = &scyllav1alpha1.NodeListenOptions{
			Nodes:   makeListenOptions(&listenOptions.Nodes),
			Clients: makeListenOptions(&listenOptions.Clients),
		}
	}

	return out
}

// makeBroadcastOptions translates one side of the broadcast options. An absent side means ServiceClusterIP in the
// ScyllaCluster API but PodIP in the ScyllaDBDatacenter API, so it is spelled out. The established operator's
// spelling ServiceLoadBalancerIngress is normalized to ServiceLoadBalancerIngressIP, which it is an alias of, so that
// the ScyllaDBDatacenter controller and the sidecar only ever see one spelling.
func makeBroadcastOptions(options *scyllav1.BroadcastOptions) *scyllav1alpha1.BroadcastOptions {
	if options == nil {
		return &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypeServiceClusterIP}
	}
	addressType := scyllav1alpha1.BroadcastAddressType(options.Type)
	if options.Type == scyllav1.ServiceLoadBalancerIngressBroadcastAddressType {
		addressType = scyllav1alpha1.BroadcastAddressTypeServiceLoadBalancerIngressIP
	}
	return &scyllav1alpha1.BroadcastOptions{
		Type:  addressType,
		PodIP: makePodIPAddressOptions(options.PodIP),
	}
}

func makeListenOptions(options *scyllav1.ListenOptions) *scyllav1alpha1.ListenOptions {
	return &scyllav1alpha1.ListenOptions{
		Type:  scyllav1alpha1.ListenAddressType(options.Type),
		PodIP: makePodIPAddressOptions(options.PodIP),
	}
}

func makePodIPAddressOptions(options *scyllav1.PodIPAddressOptions) *scyllav1alpha1.PodIPAddressOptions {
	if options == nil {
		return nil
	}
	out := &scyllav1alpha1.PodIPAddressOptions{Source: scyllav1alpha1.PodIPSourceType(options.Source)}
	if options.InterfaceOptions != nil {
		out.InterfaceOptions = &scyllav1alpha1.PodIPInterfaceOptions{InterfaceName: options.InterfaceOptions.InterfaceName}
	}
	return out
}

// translatedTask is the ScyllaDBManagerTask translated from one of a ScyllaCluster's backups or repairs, or why it
// could not be.
type translatedTask struct {
	// name is the name of the ScyllaDBManagerTask, known even when the translation failed.
	name string
	// entry is the path of the task's entry in the ScyllaCluster, e.g. spec.repairs[0] (taskEntryPath).
	entry string
	task  *scyllav1alpha1.ScyllaDBManagerTask
	err   error
}

// taskEntryPath returns the path of entry index of the ScyllaCluster's list of backups or repairs, list ("backups" or
// "repairs"), as validation's errors spell it.
func taskEntryPath(list string, index int) string {
	return field.NewPath("spec", list).Index(index).String()
}

// splitTaskErrors splits errs, what validation.ValidateScyllaCluster found wrong with sc, into the errors inside one
// backup or repair, by the path of its entry (taskEntryPath), and the others. Only the entry is wrong in the first
// case: the ScyllaDBDatacenter and the other tasks can still be translated.
func splitTaskErrors(sc *scyllav1.ScyllaCluster, errs field.ErrorList) (taskErrs map[string]field.ErrorList, specErrs field.ErrorList) {
	lengths := map[string]int{"backups": len(sc.Spec.Backups), "repairs": len(sc.Spec.Repairs)}
	for _, err := range errs {
		if entry, ok := taskEntryOf(err.Field, lengths); ok {
			if taskErrs == nil {
				taskErrs = map[string]field.ErrorList{}
			}
			taskErrs[entry] = append(taskErrs[entry], err)
			continue
		}
		specErrs = append(specErrs, err)
	}
	return taskErrs, specErrs
}

// taskEntryOf returns the entry path (taskEntryPath) that path, a field path, lies in, when it lies in one of the
// lists of backups or repairs, whose lengths lengths holds by list name.
func taskEntryOf(path string, lengths map[string]int) (string, bool) {
	for list, length := range lengths {
		rest, ok := strings.CutPrefix(path, "spec."+list+"[")
		if !ok {
			continue
		}
		index, rest, ok := strings.Cut(rest, "]")
		if !ok || (len(rest) != 0 && !strings.HasPrefix(rest, ".") && !strings.HasPrefix(rest, "[")) {
			continue
		}
		i, err := strconv.Atoi(index)
		if err != nil || i < 0 || i >= length {
			continue
		}
		return taskEntryPath(list, i), true
	}
	return "", false
}

// makeScyllaDBManagerTasks translates each of sc's backups and repairs into a ScyllaDBManagerTask. invalid holds, by
// entry path (taskEntryPath), what validation found wrong inside an entry (splitTaskErrors): such an entry is not
// translated, and its error is validation's.
func makeScyllaDBManagerTasks(sc *scyllav1.ScyllaCluster, invalid map[string]field.ErrorList) []translatedTask {
	tasks := make([]translatedTask, 0, len(sc.Spec.Backups)+len(sc.Spec.Repairs))
	tasks = appendTranslatedTasks(tasks, sc, naming.ScyllaDBManagerTaskTypeBackup, "backups", sc.Spec.Backups, invalid,
		func(backup *scyllav1.BackupTaskSpec) string { return backup.Name }, makeBackupTask)
	return appendTranslatedTasks(tasks, sc, naming.ScyllaDBManagerTaskTypeRepair, "repairs", sc.Spec.Repairs, invalid,
		func(repair *scyllav1.RepairTaskSpec) string { return repair.Name }, makeRepairTask)
}

func appendTranslatedTasks[S any](
	tasks []translatedTask,
	sc *scyllav1.ScyllaCluster,
	taskType string,
	list string,
	specs []S,
	invalid map[string]field.ErrorList,
	name func(*S) string,
	makeTask func(*scyllav1.ScyllaCluster, *S) (*scyllav1alpha1.ScyllaDBManagerTask, error),
) []translatedTask {
	for i := range specs {
		t := translatedTask{
			name:  naming.ScyllaDBManagerTaskName(sc.Name, taskType, name(&specs[i])),
			entry: taskEntryPath(list, i),
		}
		if errs := invalid[t.entry]; len(errs) != 0 {
			// The message the webhook gives, after the task it is about.
			t.err = fmt.Errorf("can't translate %s task %q: %w", strings.ToLower(taskType), name(&specs[i]), errs.ToAggregate())
		} else {
			t.task, t.err = makeTask(sc, &specs[i])
		}
		tasks = append(tasks, t)
	}
	return tasks
}

// makeBackupTask translates one of sc's backups into a ScyllaDBManagerTask. It returns an error when the backup
// can't be translated; retrying does not help then.
func makeBackupTask(sc *scyllav1.ScyllaCluster, backup *scyllav1.BackupTaskSpec) (*scyllav1alpha1.ScyllaDBManagerTask, error) {
	backup = backup.DeepCopy()
	task := newScyllaDBManagerTask(sc, scyllav1alpha1.ScyllaDBManagerTaskTypeBackup, backup.Name)

	var errs []error
	schedule, err := makeTaskSchedule(&backup.SchedulerTaskSpec, task.Annotations)
	if err != nil {
		errs = append(errs, err)
	}
	if len(backup.Location) == 0 {
		errs = append(errs, errors.New("location must not be empty: a backup needs at least one [<dc>:]<provider>:<bucket>"))
	}
	if len(errs) != 0 {
		return nil, fmt.Errorf("can't translate backup task %q: %w", backup.Name, utilerrors.NewAggregate(errs))
	}

	retention := backup.Retention
	if retention == 0 {
		retention = defaultBackupRetention
	}

	task.Spec.Backup = &scyllav1alpha1.ScyllaDBManagerBackupTaskOptions{
		ScyllaDBManagerTaskSchedule: schedule,
		DC:                          splitPatterns(backup.DC),
		Keyspace:                    splitPatterns(backup.Keyspace),
		Location:                    backup.Location,
		RateLimit:                   backup.RateLimit,
		Retention:                   &retention,
		SnapshotParallel:            backup.SnapshotParallel,
		UploadParallel:              backup.UploadParallel,
	}
	return task, nil
}

// makeRepairTask translates one of sc's repairs into a ScyllaDBManagerTask. It returns an error when the repair
// can't be translated; retrying does not help then.
func makeRepairTask(sc *scyllav1.ScyllaCluster, repair *scyllav1.RepairTaskSpec) (*scyllav1alpha1.ScyllaDBManagerTask, error) {
	repair = repair.DeepCopy()
	task := newScyllaDBManagerTask(sc, scyllav1alpha1.ScyllaDBManagerTaskTypeRepair, repair.Name)

	var errs []error
	schedule, err := makeTaskSchedule(&repair.SchedulerTaskSpec, task.Annotations)
	if err != nil {
		errs = append(errs, err)
	}

	// The ScyllaDBManagerTask API takes an integer intensity; the ScyllaCluster API a decimal string. The string
	// always travels in the override annotation, which the ScyllaDBManagerTask controller prefers; the field is set
	// too whenever the value is a whole number.
	intensity := orDefault(repair.Intensity, defaultRepairIntensity)
	task.Annotations[naming.ScyllaDBManagerTaskRepairIntensityOverrideAnnot] = intensity
	intensityValue, err := strconv.ParseFloat(intensity, 64)
	if err != nil || intensityValue < 0 || math.IsInf(intensityValue, 0) || math.IsNaN(intensityValue) {
		errs = append(errs, fmt.Errorf("intensity %q must be a non-negative number, e.g. 1 or 0.5", intensity))
	}

	// Likewise the threshold: a size string with binary units here, a Quantity there.
	smallTableThreshold := orDefault(repair.SmallTableThreshold, defaultSmallTableThreshold)
	task.Annotations[naming.ScyllaDBManagerTaskRepairSmallTableThresholdAnnot] = smallTableThreshold

	if len(errs) != 0 {
		return nil, fmt.Errorf("can't translate repair task %q: %w", repair.Name, utilerrors.NewAggregate(errs))
	}

	if repair.FailFast {
		// Failing fast means not retrying: the ScyllaCluster API always behaved so.
		schedule.NumRetries = new(int64(0))
	}

	options := &scyllav1alpha1.ScyllaDBManagerRepairTaskOptions{
		ScyllaDBManagerTaskSchedule: schedule,
		DC:                          splitPatterns(repair.DC),
		Keyspace:                    splitPatterns(repair.Keyspace),
		FailFast:                    &repair.FailFast,
		Host:                        repair.Host,
		IgnoreDownHosts:             repair.IgnoreDownHosts,
		Parallel:                    &repair.Parallel,
		SmallTableThreshold:         parseSize(smallTableThreshold),
	}
	if intensityValue == math.Trunc(intensityValue) && intensityValue <= math.MaxInt64 {
		options.Intensity = new(int64(intensityValue))
	}
	task.Spec.Repair = options
	return task, nil
}

// newScyllaDBManagerTask returns the skeleton of the ScyllaDBManagerTask translated from sc's task of taskType and
// name: its name, labels, controller and the annotation with the task's name in ScyllaDB Manager.
func newScyllaDBManagerTask(sc *scyllav1.ScyllaCluster, taskType scyllav1alpha1.ScyllaDBManagerTaskType, name string) *scyllav1alpha1.ScyllaDBManagerTask {
	return &scyllav1alpha1.ScyllaDBManagerTask{
		ObjectMeta: metav1.ObjectMeta{
			Name:            naming.ScyllaDBManagerTaskName(sc.Name, string(taskType), name),
			Namespace:       sc.Namespace,
			Labels:          naming.ClusterLabels(sc.Name),
			Annotations:     map[string]string{naming.ScyllaDBManagerTaskNameOverrideAnnotation: name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sc, scyllaClusterGVK)},
		},
		Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
			ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{
				Kind: "ScyllaDBDatacenter",
				Name: naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name),
			},
			Type: taskType,
		},
	}
}

// makeTaskSchedule translates a task's schedule. What ScyllaDBManagerTaskSchedule has no field for (an interval, a
// time zone, a start date relative to now) goes into annotations.
func makeTaskSchedule(spec *scyllav1.SchedulerTaskSpec, annotations map[string]string) (scyllav1alpha1.ScyllaDBManagerTaskSchedule, error) {
	numRetries := defaultTaskNumRetries
	if spec.NumRetries != nil {
		numRetries = *spec.NumRetries
	}
	schedule := scyllav1alpha1.ScyllaDBManagerTaskSchedule{
		Cron:       spec.Cron,
		NumRetries: &numRetries,
		RetryWait:  spec.RetryWait,
	}

	if spec.StartDate != nil {
		startDate := *spec.StartDate
		if startDateNowPattern.MatchString(startDate) {
			annotations[naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot] = startDate
		} else {
			t, err := time.Parse(time.RFC3339, startDate)
			if err != nil {
				return scyllav1alpha1.ScyllaDBManagerTaskSchedule{}, fmt.Errorf("startDate %q must be an RFC 3339 time or now, optionally followed by an offset such as now+3d2h: %w", startDate, err)
			}
			schedule.StartDate = new(metav1.NewTime(t.UTC()))
		}
	}
	if spec.Interval != nil {
		annotations[naming.ScyllaDBManagerTaskScheduleIntervalOverrideAnnot] = *spec.Interval
	}
	if spec.Timezone != nil {
		annotations[naming.ScyllaDBManagerTaskScheduleTimezoneOverrideAnnot] = *spec.Timezone
	}
	return schedule, nil
}

// splitPatterns splits glob filters written comma-separated in one entry, which the ScyllaCluster API allowed and
// the ScyllaDBManagerTask API rejects, into one entry each. ScyllaDB Manager reads both forms the same.
func splitPatterns(patterns []string) []string {
	if patterns == nil {
		return nil
	}
	out := make([]string, 0, len(patterns))
	for _, entry := range patterns {
		for pattern := range strings.SplitSeq(entry, ",") {
			if pattern = strings.TrimSpace(pattern); len(pattern) != 0 {
				out = append(out, pattern)
			}
		}
	}
	return out
}

// parseSize converts a ScyllaDB Manager size such as 1GiB to a Quantity, or returns nil when it is not one or is
// zero, which the ScyllaDBManagerTask API refuses: the override annotation still carries the string, the
// ScyllaDBManagerTask controller prefers it, and ScyllaDB Manager judges it.
func parseSize(size string) *resource.Quantity {
	bytes, err := validation.ParseSize(size)
	if err != nil || bytes == 0 {
		return nil
	}
	return resource.NewQuantity(bytes, resource.BinarySI)
}

func image(repository, tag string) string {
	return repository + ":" + tag
}

func orDefault(value, defaultValue string) string {
	if len(value) == 0 {
		return defaultValue
	}
	return value
}

func stringOrNil(s string) *string {
	if len(s) == 0 {
		return nil
	}
	return &s
}

func trueOrNil(b bool) *bool {
	if !b {
		return nil
	}
	return &b
}

func isTrue(b *bool) bool {
	return b != nil && *b
}

func formatBool(b bool) string {
	if b {
		return naming.InternalAnnotationTrue
	}
	return naming.InternalAnnotationFalse
}
