package genericclioptions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// LeaderElection holds the flags of leader election on a Lease, so that only one replica reconciles.
type LeaderElection struct {
	Enabled       bool
	Namespace     string
	LeaseName     string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration

	// HealthzAdaptor reports unhealthy when this replica leads but has not renewed its lease in time.
	HealthzAdaptor *leaderelection.HealthzAdaptor
}

// NewLeaderElection returns leader election options with the durations client-go's own components use.
func NewLeaderElection(leaseName string) LeaderElection {
	return LeaderElection{
		Enabled:        true,
		LeaseName:      leaseName,
		LeaseDuration:  15 * time.Second,
		RenewDeadline:  10 * time.Second,
		RetryPeriod:    2 * time.Second,
		HealthzAdaptor: leaderelection.NewLeaderHealthzAdaptor(20 * time.Second),
	}
}

// AddFlags registers the leader election flags.
func (le *LeaderElection) AddFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&le.Enabled, "leader-elect", le.Enabled, "Elect a leader on a Lease before reconciling, so that only one replica works at a time.")
	cmd.Flags().StringVar(&le.Namespace, "leader-election-namespace", le.Namespace, "Namespace of the leader election Lease. Empty means the pod's own namespace.")
	cmd.Flags().StringVar(&le.LeaseName, "leader-election-lease-name", le.LeaseName, "Name of the leader election Lease.")
	cmd.Flags().DurationVar(&le.LeaseDuration, "leader-election-lease-duration", le.LeaseDuration, "How long other replicas wait before they may take over a lease that was not renewed.")
	cmd.Flags().DurationVar(&le.RenewDeadline, "leader-election-renew-deadline", le.RenewDeadline, "How long the leader keeps trying to renew before it gives up leading.")
	cmd.Flags().DurationVar(&le.RetryPeriod, "leader-election-retry-period", le.RetryPeriod, "How often candidates try to acquire or renew the lease.")
}

// Validate rejects leader election settings client-go would refuse or that can't elect anyone.
func (le *LeaderElection) Validate() error {
	if !le.Enabled {
		return nil
	}
	var errs []error
	if len(le.LeaseName) == 0 {
		errs = append(errs, errors.New("--leader-election-lease-name must not be empty"))
	}
	if le.LeaseDuration <= le.RenewDeadline {
		errs = append(errs, fmt.Errorf("--leader-election-lease-duration (%v) must be greater than --leader-election-renew-deadline (%v)", le.LeaseDuration, le.RenewDeadline))
	}
	if le.RetryPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--leader-election-retry-period must be positive, got %v", le.RetryPeriod))
	} else if float64(le.RenewDeadline) <= leaderelection.JitterFactor*float64(le.RetryPeriod) {
		errs = append(errs, fmt.Errorf("--leader-election-renew-deadline (%v) must be greater than %v times --leader-election-retry-period (%v)", le.RenewDeadline, leaderelection.JitterFactor, le.RetryPeriod))
	}
	return errors.Join(errs...)
}

// Complete fills the lease namespace from the pod's service account when it is not given.
func (le *LeaderElection) Complete() error {
	if !le.Enabled || len(le.Namespace) != 0 {
		return nil
	}
	if ns := os.Getenv("POD_NAMESPACE"); len(ns) != 0 {
		le.Namespace = ns
		return nil
	}
	b, err := os.ReadFile(serviceAccountNamespaceFile)
	if err != nil {
		return fmt.Errorf("can't find the namespace for the leader election Lease (set --leader-election-namespace): %w", err)
	}
	le.Namespace = strings.TrimSpace(string(b))
	return nil
}

// Run calls run once this replica leads, and returns when ctx is done (releasing the lease) or leadership is lost.
// Losing leadership is an error: the process must exit so that it never reconciles beside a new leader.
func (le *LeaderElection) Run(ctx context.Context, client kubernetes.Interface, run func(ctx context.Context)) error {
	if !le.Enabled {
		run(ctx)
		return nil
	}

	hostname, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("can't get hostname: %w", err)
	}
	identity := hostname + "_" + string(uuid.NewUUID())

	lock, err := resourcelock.New(
		resourcelock.LeasesResourceLock,
		le.Namespace,
		le.LeaseName,
		client.CoreV1(),
		client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: identity},
	)
	if err != nil {
		return fmt.Errorf("can't create the leader election lock: %w", err)
	}

	// On shutdown the workers drain first and only then is the lease released, so that a new leader never
	// reconciles beside an old one that is still finishing its items.
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	electorCtx, cancelElector := context.WithCancel(context.Background())
	defer cancelElector()

	var started atomic.Bool
	runDone := make(chan struct{})
	go func() {
		<-runCtx.Done()
		if started.Load() {
			<-runDone
		}
		cancelElector()
	}()

	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.LeaseDuration,
		RenewDeadline:   le.RenewDeadline,
		RetryPeriod:     le.RetryPeriod,
		ReleaseOnCancel: true,
		WatchDog:        le.HealthzAdaptor,
		Name:            le.LeaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				started.Store(true)
				defer close(runDone)
				klog.InfoS("Started leading", "identity", identity, "lease", klog.KRef(le.Namespace, le.LeaseName))
				run(runCtx)
			},
			OnStoppedLeading: func() {
				klog.InfoS("Stopped leading", "identity", identity, "lease", klog.KRef(le.Namespace, le.LeaseName))
				cancelRun()
			},
		},
	})
	if err != nil {
		return fmt.Errorf("can't create the leader elector: %w", err)
	}
	elector.Run(electorCtx)

	if started.Load() {
		<-runDone
	}
	if ctx.Err() == nil {
		return errors.New("lost leadership of the leader election lease")
	}
	return nil
}
