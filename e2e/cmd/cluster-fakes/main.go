// Command cluster-fakes stands in for the cloud parts a local control plane lacks:
//   - a LoadBalancer controller that fills status.loadBalancer.ingress of LoadBalancer Services with addresses
//     from a documentation range (nothing routes to them; they are only numbers to put in status), and
//   - a volume provisioner that creates a PersistentVolume for each pending claim of its StorageClasses, which it
//     creates (the first one as the default class).
//
// It is started by hack/local-up.sh and by the e2e framework next to the control plane.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// userAgent identifies cluster-fakes in the API server's audit log.
const userAgent = "cluster-fakes"

type options struct {
	kubeconfig       string
	loadBalancerCIDR string
	storageClasses   string
	workers          int
}

func (o *options) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", o.kubeconfig, "Path to the kubeconfig of the cluster.")
	fs.StringVar(&o.loadBalancerCIDR, "load-balancer-cidr", o.loadBalancerCIDR,
		"IPv4 range the LoadBalancer ingress addresses come from. Use a documentation range nothing routes to.")
	fs.StringVar(&o.storageClasses, "storage-classes", o.storageClasses,
		"Comma-separated StorageClasses to create for the fake provisioner, the first one marked default; empty creates none.")
	fs.IntVar(&o.workers, "workers", o.workers, "Number of workers per controller.")
}

func (o *options) validate() (netip.Prefix, error) {
	if o.kubeconfig == "" {
		return netip.Prefix{}, fmt.Errorf("--kubeconfig is required")
	}
	if o.workers < 1 {
		return netip.Prefix{}, fmt.Errorf("--workers must be at least 1, got %d", o.workers)
	}
	prefix, err := netip.ParsePrefix(o.loadBalancerCIDR)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("can't parse --load-balancer-cidr %q: %w", o.loadBalancerCIDR, err)
	}
	if !prefix.Addr().Is4() || prefix.Bits() > 30 {
		return netip.Prefix{}, fmt.Errorf("--load-balancer-cidr %q must be an IPv4 range of at least 4 addresses", o.loadBalancerCIDR)
	}
	if prefix.Addr().IsLoopback() {
		return netip.Prefix{}, fmt.Errorf("--load-balancer-cidr %q must not be a loopback range", o.loadBalancerCIDR)
	}
	return prefix.Masked(), nil
}

func main() {
	klog.InitFlags(nil)
	o := &options{
		loadBalancerCIDR: "192.0.2.0/24",
		storageClasses:   naming.FakeStorageClassName + "," + naming.ExampleStorageClassName,
		workers:          2,
	}
	o.addFlags(flag.CommandLine)
	flag.Parse()

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, o); err != nil {
		klog.ErrorS(err, "cluster-fakes failed")
		os.Exit(1)
	}
}

func run(ctx context.Context, o *options) error {
	prefix, err := o.validate()
	if err != nil {
		return err
	}
	config, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("can't load kubeconfig %q: %w", o.kubeconfig, err)
	}
	config.UserAgent = userAgent
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return fmt.Errorf("can't create Kubernetes client: %w", err)
	}

	if o.storageClasses != "" {
		for i, name := range strings.Split(o.storageClasses, ",") {
			if err := ensureStorageClass(ctx, client, strings.TrimSpace(name), i == 0); err != nil {
				return err
			}
		}
	}

	factory := informers.NewSharedInformerFactory(client, 12*time.Hour)
	lb := newLoadBalancerController(client, factory.Core().V1().Services(), newAddressPool(prefix))
	prov := newProvisioner(
		client,
		naming.FakeVolumeProvisioner,
		factory.Core().V1().PersistentVolumeClaims(),
		factory.Core().V1().PersistentVolumes(),
		factory.Storage().V1().StorageClasses(),
	)
	factory.Start(ctx.Done())
	defer factory.Shutdown()

	done := make(chan struct{}, 2)
	go func() { lb.Run(ctx, o.workers); done <- struct{}{} }()
	go func() { prov.Run(ctx, o.workers); done <- struct{}{} }()
	<-done
	<-done
	return nil
}
