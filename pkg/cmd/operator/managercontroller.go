package operator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/scyllakube/managerclient"

	"github.com/scyllakube/scylla-operator/pkg/controller/managerregistration"
	"github.com/scyllakube/scylla-operator/pkg/controller/scylladbbackupbucket"
	"github.com/scyllakube/scylla-operator/pkg/controller/scylladbbackupentry"
	"github.com/scyllakube/scylla-operator/pkg/controller/scylladbmanagertask"
	"github.com/scyllakube/scylla-operator/pkg/metrics"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	"github.com/scyllakube/scylla-operator/pkg/version"
)

// scyllaDBManagerPingTimeout bounds the reachability check at start.
const scyllaDBManagerPingTimeout = 10 * time.Second

// ManagerControllerOptions are the options of the manager-controller program.
type ManagerControllerOptions struct {
	ControllerProgramOptions

	ScyllaDBManagerURL           string
	ScyllaDBManagerAuthTokenFile string
	ScyllaDBManagerCAFile        string

	// scyllaDBManagerFileCheckInterval is the shortest time between two reads of the token and CA files; zero means
	// managerclient.DefaultFileCheckInterval. Tests shorten it.
	scyllaDBManagerFileCheckInterval time.Duration

	// Set by Complete.
	managerClient *managerclient.Client
}

// NewManagerControllerOptions returns ManagerControllerOptions with their defaults.
func NewManagerControllerOptions() *ManagerControllerOptions {
	return &ManagerControllerOptions{
		ControllerProgramOptions: NewControllerProgramOptions("manager-controller", naming.ManagerControllerLeaseName),
		ScyllaDBManagerURL:       naming.DefaultScyllaDBManagerURL,
	}
}

// AddFlags registers the manager-controller's flags.
func (o *ManagerControllerOptions) AddFlags(cmd *cobra.Command) {
	o.ControllerProgramOptions.AddFlags(cmd, "How often every object is synced again even when nothing changed, which also compares it with ScyllaDB Manager's state again.")
	cmd.Flags().StringVar(&o.ScyllaDBManagerURL, "scylladb-manager-url", o.ScyllaDBManagerURL, "URL of ScyllaDB Manager's API, with or without the /api/v1 suffix (http or https).")
	cmd.Flags().StringVar(&o.ScyllaDBManagerAuthTokenFile, "scylladb-manager-auth-token-file", o.ScyllaDBManagerAuthTokenFile, "File holding the token sent to ScyllaDB Manager as \"Authorization: Bearer <token>\" (surrounding whitespace is ignored). Empty sends none. The file is followed: a changed token is used from the next request on.")
	cmd.Flags().StringVar(&o.ScyllaDBManagerCAFile, "scylladb-manager-ca-file", o.ScyllaDBManagerCAFile, "PEM file of the certificate authorities that sign ScyllaDB Manager's certificate, for an https URL. Empty uses the system's. The file is followed: a changed bundle is used from the next request on.")
}

// Validate rejects flag values the manager-controller can't run with. The files the flags name are read by Complete.
func (o *ManagerControllerOptions) Validate() error {
	errs := o.ControllerProgramOptions.Validate()
	errs = append(errs, validateScyllaDBManagerURL(o.ScyllaDBManagerURL))
	if len(o.ScyllaDBManagerCAFile) != 0 {
		if u, err := url.Parse(o.ScyllaDBManagerURL); err == nil && u.Scheme != "https" {
			errs = append(errs, fmt.Errorf("--scylladb-manager-ca-file is only used with an https --scylladb-manager-url, got scheme %q", u.Scheme))
		}
	}
	return errors.Join(errs...)
}

// validateScyllaDBManagerURL rejects a URL ScyllaDB Manager can't be reached at. Credentials in it are refused, as
// they would end up in logs; the token file is the way to authenticate.
func validateScyllaDBManagerURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("--scylladb-manager-url %q is not a URL: %w", raw, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("--scylladb-manager-url %q must use http or https", raw)
	case len(u.Host) == 0:
		return fmt.Errorf("--scylladb-manager-url %q has no host", raw)
	case u.User != nil:
		return fmt.Errorf("--scylladb-manager-url %q must not carry credentials; use --scylladb-manager-auth-token-file", u.Redacted())
	case len(u.RawQuery) != 0 || len(u.Fragment) != 0:
		return fmt.Errorf("--scylladb-manager-url %q must not have a query or fragment", raw)
	}
	return nil
}

// Complete reads the token and CA files, loads the client configuration and builds the clients.
func (o *ManagerControllerOptions) Complete() error {
	if err := o.completeScyllaDBManager(); err != nil {
		return err
	}
	return o.ControllerProgramOptions.Complete()
}

// completeScyllaDBManager reads the files the ScyllaDB Manager flags name and builds the ScyllaDB Manager client. Both
// files are read before a problem with either is returned, so that every problem is reported at once. The client
// follows both files afterwards (a mounted Secret is updated in place), reading each again at most once per
// scyllaDBManagerFileCheckInterval, from the request path: there is no goroutine to stop.
func (o *ManagerControllerOptions) completeScyllaDBManager() error {
	tokenSource, tokenErr := o.newScyllaDBManagerTokenSource()
	transport, caErr := o.newScyllaDBManagerCATransport()
	if err := errors.Join(tokenErr, caErr); err != nil {
		return err
	}

	opts := managerclient.Options{
		URL:        o.ScyllaDBManagerURL,
		HTTPClient: &http.Client{Transport: metrics.InstrumentScyllaDBManagerTransport(transport)},
		UserAgent:  naming.ManagerControllerUserAgent(version.Get().GitVersion),
	}
	if tokenSource != nil {
		opts.TokenSource = tokenSource
	}
	var err error
	o.managerClient, err = managerclient.New(opts)
	if err != nil {
		// The error names neither the token nor its file's content.
		return fmt.Errorf("can't build the ScyllaDB Manager client: %w", err)
	}
	return nil
}

// scyllaDBManagerFileOptions says how the file a flag names is followed. Problems with a changed file are logged
// once each and leave the last good content in use; the messages never quote the file's content.
func (o *ManagerControllerOptions) scyllaDBManagerFileOptions(flag, what string) managerclient.FileOptions {
	return managerclient.FileOptions{
		CheckInterval: o.scyllaDBManagerFileCheckInterval,
		OnError: func(err error) {
			klog.ErrorS(err, "Can't load the changed file; the last good one stays in use", "flag", flag, "content", what)
		},
		OnReload: func() {
			klog.InfoS("Loaded the changed file", "flag", flag, "content", what)
		},
	}
}

// newScyllaDBManagerTokenSource reads the token --scylladb-manager-auth-token-file names, if any, and returns a
// source that follows the file. The errors never quote the file's content.
func (o *ManagerControllerOptions) newScyllaDBManagerTokenSource() (*managerclient.FileTokenSource, error) {
	if len(o.ScyllaDBManagerAuthTokenFile) == 0 {
		return nil, nil
	}
	s, err := managerclient.NewFileTokenSource(o.ScyllaDBManagerAuthTokenFile, o.scyllaDBManagerFileOptions("--scylladb-manager-auth-token-file", "ScyllaDB Manager API token"))
	if err != nil {
		return nil, fmt.Errorf("--scylladb-manager-auth-token-file %q: %w", o.ScyllaDBManagerAuthTokenFile, err)
	}
	return s, nil
}

// newScyllaDBManagerCATransport returns the transport to ScyllaDB Manager: one that trusts the certificate
// authorities --scylladb-manager-ca-file names and follows the file, or, without the flag, one that trusts the
// system's.
func (o *ManagerControllerOptions) newScyllaDBManagerCATransport() (http.RoundTripper, error) {
	if len(o.ScyllaDBManagerCAFile) == 0 {
		return newScyllaDBManagerTransport(nil), nil
	}
	t, err := managerclient.NewCAFileTransport(o.ScyllaDBManagerCAFile, &tls.Config{MinVersion: tls.VersionTLS12}, newScyllaDBManagerTransport,
		o.scyllaDBManagerFileOptions("--scylladb-manager-ca-file", "ScyllaDB Manager CA bundle"))
	if err != nil {
		return nil, fmt.Errorf("--scylladb-manager-ca-file %q: %w", o.ScyllaDBManagerCAFile, err)
	}
	return t, nil
}

// newScyllaDBManagerTransport returns a transport with bounded connection set-up; the client bounds each call.
func newScyllaDBManagerTransport(tlsConfig *tls.Config) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 10 * time.Second
	if tlsConfig != nil {
		t.TLSClientConfig = tlsConfig
	}
	return t
}

// Run serves health and metrics, then reconciles once this replica leads, until ctx is done.
func (o *ManagerControllerOptions) Run(ctx context.Context) error {
	klog.InfoS("Starting the manager-controller", "scyllaDBManagerURL", o.managerClient.URL(), "concurrentSyncs", o.ConcurrentSyncs)

	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		logScyllaDBManagerReachability(ctx, o.managerClient)
	}()

	p := &controllerProgram{
		serving:        &o.Serving,
		leaderElection: &o.LeaderElection,
		kubeClient:     o.kubeClient,
		newControllers: o.newControllers,
	}
	return p.run(ctx)
}

// logScyllaDBManagerReachability logs whether ScyllaDB Manager answers. An unreachable ScyllaDB Manager is not fatal:
// the controllers report it in their objects' conditions and retry with backoff.
func logScyllaDBManagerReachability(ctx context.Context, c *managerclient.Client) {
	ctx, cancel := context.WithTimeout(ctx, scyllaDBManagerPingTimeout)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		klog.ErrorS(err, "ScyllaDB Manager is not reachable yet; the controllers keep retrying", "url", c.URL())
		return
	}
	v, err := c.Version(ctx)
	if err != nil {
		klog.ErrorS(err, "ScyllaDB Manager answers ping but not its version", "url", c.URL())
		return
	}
	klog.InfoS("ScyllaDB Manager is reachable", "url", c.URL(), "version", v)
}

// newControllers builds the manager-controller's controllers on informers of its own factories.
func (o *ManagerControllerOptions) newControllers() (*controllerSet, error) {
	scyllaInformers := newScyllaInformerFactory(o.scyllaClient, o.ResyncPeriod)
	// The agent auth-token Secrets the operator creates carry its managed-by label; users' Secrets are never cached.
	kubeInformers := newManagedObjectsInformerFactory(o.kubeClient, o.ResyncPeriod)

	registrationController, err := managerregistration.NewScyllaDBDatacenterController(
		o.kubeClient,
		o.scyllaClient,
		o.managerClient,
		scyllaInformers.Scylla().V1alpha1().ScyllaDBDatacenters(),
		kubeInformers.Core().V1().Secrets(),
	)
	if err != nil {
		return nil, fmt.Errorf("can't create the ScyllaDBDatacenter registration controller: %w", err)
	}

	scyllaDBClusterRegistrationController, err := managerregistration.NewScyllaDBClusterController(
		o.kubeClient,
		o.scyllaClient,
		o.managerClient,
		scyllaInformers.Scylla().V1alpha1().ScyllaDBClusters(),
		kubeInformers.Core().V1().Secrets(),
	)
	if err != nil {
		return nil, fmt.Errorf("can't create the ScyllaDBCluster registration controller: %w", err)
	}

	// The task controller is the first to read a cluster ScyllaDB Manager lost (its tasks' list answers 404); it hands
	// the object to its registration controller, which registers it again now rather than at its next resync.
	clusterMissingReporter, err := managerregistration.NewClusterMissingReporter(registrationController, scyllaDBClusterRegistrationController)
	if err != nil {
		return nil, err
	}

	taskController, err := scylladbmanagertask.NewController(
		o.kubeClient,
		o.scyllaClient,
		o.managerClient,
		clusterMissingReporter,
		scyllaInformers.Scylla().V1alpha1().ScyllaDBManagerTasks(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBDatacenters(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBClusters(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBBackupBuckets(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBBackupEntries(),
	)
	if err != nil {
		return nil, fmt.Errorf("can't create the ScyllaDBManagerTask controller: %w", err)
	}

	bucketController, err := scylladbbackupbucket.NewController(
		o.kubeClient,
		o.scyllaClient,
		scyllaInformers.Scylla().V1alpha1().ScyllaDBBackupBuckets(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBBackupEntries(),
		objectstore.New,
	)
	if err != nil {
		return nil, fmt.Errorf("can't create the ScyllaDBBackupBucket controller: %w", err)
	}

	entryController, err := scylladbbackupentry.NewController(
		o.kubeClient,
		o.scyllaClient,
		scyllaInformers.Scylla().V1alpha1().ScyllaDBBackupEntries(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBBackupBuckets(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBDatacenters(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBClusters(),
		objectstore.New,
	)
	if err != nil {
		return nil, fmt.Errorf("can't create the ScyllaDBBackupEntry controller: %w", err)
	}

	return &controllerSet{
		informerFactories: []informerFactory{kubeInformers, scyllaInformers},
		runs: []func(ctx context.Context){
			func(ctx context.Context) { registrationController.Run(ctx, o.ConcurrentSyncs) },
			func(ctx context.Context) { scyllaDBClusterRegistrationController.Run(ctx, o.ConcurrentSyncs) },
			func(ctx context.Context) { taskController.Run(ctx, o.ConcurrentSyncs) },
			func(ctx context.Context) { bucketController.Run(ctx, o.ConcurrentSyncs) },
			func(ctx context.Context) { entryController.Run(ctx, o.ConcurrentSyncs) },
		},
	}, nil
}

// NewManagerControllerCommand returns the manager-controller subcommand.
func NewManagerControllerCommand() *cobra.Command {
	o := NewManagerControllerOptions()
	return newControllerProgramCommand(o, "manager-controller",
		"Register ScyllaDBDatacenters and ScyllaDBClusters with ScyllaDB Manager and schedule ScyllaDBManagerTasks in it.",
		"The manager-controller registers every ScyllaDBDatacenter and ScyllaDBCluster labelled "+naming.RegisterWithScyllaDBManagerLabel+
			" with ScyllaDB Manager once it is rolled out (a ScyllaDBCluster as one cluster), schedules the backup and repair tasks ScyllaDBManagerTasks declare, "+
			"and removes both from ScyllaDB Manager when their objects are deleted. Every flag can also be set through "+
			"SCYLLA_OPERATOR_<FLAG_NAME>.")
}
