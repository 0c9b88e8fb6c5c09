package nodesim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/sidecar"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
)

// imageScyllaYAML stands in for the scylla.yaml of the ScyllaDB image, which the sidecar reads as its base config.
const imageScyllaYAML = `# The ScyllaDB image's scylla.yaml, as far as the node simulator needs it.
num_tokens: 256
commitlog_sync: periodic
commitlog_sync_period_in_ms: 10000
commitlog_segment_size_in_mb: 32
listen_address: localhost
rpc_address: localhost
native_transport_port: 9042
api_port: 10000
api_address: 127.0.0.1
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "127.0.0.1"
`

// serviceAccountTokenLifetime is the lifetime of the tokens the sidecars get; they aren't refreshed.
const serviceAccountTokenLifetime = 7 * 24 * time.Hour

// node is the simulated container of one Pod incarnation (one UID). Fields below mu are guarded by Simulator.mu.
type node struct {
	key           string
	namespace     string
	name          string
	uid           types.UID
	dirs          volumeDirs
	containerName string

	proc          runningProcess
	stopProbe     context.CancelFunc
	args          []string
	probesAddress string
	apiAddress    string
	dataDir       string
	ready         bool
	readyMessage  string
	started       bool
	restarts      int32
	lastExit      *exitInfo
	backoff       time.Duration
	nextStart     time.Time
	waiting       string
	waitingMsg    string
}

func (n *node) recordPath() string { return filepath.Join(n.dirs.Pod, "records.json") }
func (n *node) logPath() string    { return filepath.Join(n.dirs.Pod, "container.log") }

func (n *node) snapshotLocked() Node {
	out := Node{
		Namespace: n.namespace, Name: n.name, UID: n.uid,
		Ready: n.proc != nil && n.ready, ReadinessMessage: n.readyMessage, Restarts: n.restarts,
		ProbesAddress: n.probesAddress, APIAddress: n.apiAddress,
		Dir: n.dirs.Pod, DataDir: n.dataDir, LogPath: n.logPath(), RecordPath: n.recordPath(),
		Args: slices.Clone(n.args),
	}
	if n.proc != nil {
		out.PID = n.proc.PID()
	}
	return out
}

func (n *node) containerStateLocked() containerState {
	cs := containerState{Name: n.containerName, Restarts: n.restarts, LastExit: n.lastExit, WaitingReason: n.waiting, WaitingMessage: n.waitingMsg}
	if n.proc != nil {
		cs.Running = true
		cs.StartedAt = n.proc.StartedAt()
		cs.Ready = n.ready
		cs.WaitingReason, cs.WaitingMessage = "", ""
	}
	return cs
}

// sync runs, restarts or stops the simulated container of the Pod named by key and writes the Pod's status. It
// returns when to look again, if it needs to.
func (s *Simulator) sync(ctx context.Context, key string) (time.Duration, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	pod, err := s.podLister.Pods(namespace).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	if apierrors.IsNotFound(err) {
		pod = nil
	}

	s.mu.Lock()
	n := s.nodes[key]
	if n != nil && (pod == nil || pod.UID != n.uid || pod.DeletionTimestamp != nil || podFinished(pod)) {
		delete(s.nodes, key)
	} else {
		n = nil
	}
	s.mu.Unlock()
	if n != nil {
		reason := "its Pod was deleted"
		switch {
		case pod != nil && pod.UID != n.uid:
			reason = "its Pod was replaced"
		case pod != nil && podFinished(pod):
			reason = "its Pod is " + string(pod.Status.Phase)
		}
		if err := s.stopNode(n, s.gracePeriod(pod), reason); err != nil {
			return 0, err
		}
	}
	if pod == nil || pod.DeletionTimestamp != nil {
		return 0, nil
	}
	runnable, after := s.runnable(pod)
	if !runnable {
		return after, nil
	}

	s.mu.Lock()
	n = s.nodes[key]
	if n == nil {
		n = &node{
			key: key, namespace: pod.Namespace, name: pod.Name, uid: pod.UID, containerName: naming.ScyllaDBContainerName,
			dirs: volumeDirs{Pod: filepath.Join(s.opts.Dir, "pods", pod.Namespace, dirName(pod.Name, pod.UID)), Claims: filepath.Join(s.opts.Dir, "claims")},
		}
		s.nodes[key] = n
	}
	s.mu.Unlock()
	return s.syncNode(ctx, pod, n)
}

// podFinished reports whether the Pod reached a phase in which its containers no longer run.
func podFinished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// runnable reports whether the Pod's container should run: the Pod is Running with an IP on a kwok node.
func (s *Simulator) runnable(pod *corev1.Pod) (bool, time.Duration) {
	if pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" || pod.Spec.NodeName == "" {
		return false, 0
	}
	node, err := s.nodeLister.Get(pod.Spec.NodeName)
	if err != nil {
		// A Node the cache doesn't know yet.
		return false, time.Second
	}
	if node.Annotations[naming.KwokNodeAnnotation] != naming.KwokNodeAnnotationValue {
		return false, 0
	}
	return slices.ContainsFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == naming.ScyllaDBContainerName }), 0
}

func (s *Simulator) gracePeriod(pod *corev1.Pod) time.Duration {
	grace := s.opts.StopGracePeriod
	if pod != nil && pod.Spec.TerminationGracePeriodSeconds != nil {
		if d := time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second; d < grace {
			grace = d
		}
	}
	return grace
}

func (s *Simulator) syncNode(ctx context.Context, pod *corev1.Pod, n *node) (time.Duration, error) {
	now := s.now()
	var after time.Duration
	s.mu.Lock()
	if n.proc != nil {
		select {
		case <-n.proc.Done():
			exit := n.proc.Exit()
			n.stopProbe()
			n.proc, n.ready, n.lastExit = nil, false, &exit
			if exit.FinishedAt.Sub(exit.StartedAt) > 2*s.opts.MaxRestartBackoff {
				n.backoff = 0
			}
			n.backoff = nextBackoff(n.backoff, s.opts.RestartBackoff, s.opts.MaxRestartBackoff)
			n.nextStart = now.Add(n.backoff)
			n.waiting = "CrashLoopBackOff"
			n.waitingMsg = fmt.Sprintf("back-off %v restarting failed container=%s pod=%s", n.backoff, n.containerName, pod.Name)
			backoff := n.backoff
			s.mu.Unlock()
			s.logger.Info("Sidecar exited", "pod", n.key, "code", exit.Code, "restartIn", backoff)
			s.recorder.Eventf(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting the sidecar, which exited with code %d", exit.Code)
			s.mu.Lock()
		default:
		}
	}
	needsStart := n.proc == nil
	wait := n.nextStart.Sub(now)
	s.mu.Unlock()

	switch {
	case needsStart && wait > 0:
		after = wait
	case needsStart:
		if err := s.startContainer(ctx, pod, n); err != nil {
			if ctx.Err() != nil {
				return 0, nil
			}
			s.mu.Lock()
			n.waitingMsg = err.Error()
			if errors.Is(err, errNotYetAvailable) {
				n.waiting = "ContainerCreating"
				after = 500 * time.Millisecond
			} else {
				n.waiting = "CreateContainerConfigError"
				n.backoff = nextBackoff(n.backoff, s.opts.RestartBackoff, s.opts.MaxRestartBackoff)
				n.nextStart = now.Add(n.backoff)
				after = n.backoff
			}
			s.mu.Unlock()
			s.logger.Info("Can't start the sidecar yet", "pod", n.key, "reason", err.Error())
			if !errors.Is(err, errNotYetAvailable) {
				s.recorder.Eventf(pod, corev1.EventTypeWarning, "Failed", "Can't start the sidecar: %v", err)
			}
		}
	}

	s.mu.Lock()
	cs := n.containerStateLocked()
	s.mu.Unlock()
	patch, err := podStatusPatch(pod, cs, now)
	if err != nil {
		return 0, err
	}
	if patch == nil {
		return after, nil
	}
	// The Pod's UID in the patch makes it fail rather than change another Pod of the same name.
	patch, err = withUID(patch, pod.UID)
	if err != nil {
		return 0, err
	}
	if _, err := s.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		if apierrors.IsNotFound(err) {
			return after, nil
		}
		return 0, fmt.Errorf("can't patch the status of Pod %q: %w", n.key, err)
	}
	s.logger.V(2).Info("Patched the Pod's status", "pod", n.key, "ready", cs.Running && cs.Ready)
	return after, nil
}

func nextBackoff(current, initial, maximum time.Duration) time.Duration {
	if current == 0 {
		return initial
	}
	return min(2*current, maximum)
}

func withUID(patch []byte, uid types.UID) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil {
		return nil, err
	}
	m["metadata"] = map[string]any{"uid": uid}
	return json.Marshal(m)
}

// startContainer prepares the container as a kubelet would (environment, volumes, credentials) and starts the
// sidecar.
func (s *Simulator) startContainer(ctx context.Context, pod *corev1.Pod, n *node) error {
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == n.containerName })
	c := &pod.Spec.Containers[i]
	objects := &apiObjects{ctx: ctx, s: s}
	env, err := containerEnv(pod, c, objects)
	if err != nil {
		return err
	}
	envMap := map[string]string{}
	for _, e := range env {
		envMap[e.Name] = e.Value
	}
	// A container starts from its image: the writable layer of an earlier run is gone.
	rootfs := n.dirs.rootfsDir()
	if err := os.RemoveAll(rootfs); err != nil {
		return fmt.Errorf("can't clear the container's root directory: %w", err)
	}
	imageConfig := filepath.Join(rootfs, filepath.FromSlash(sidecar.DefaultScyllaDBBaseConfigPath))
	if err := os.MkdirAll(filepath.Dir(imageConfig), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(imageConfig, []byte(imageScyllaYAML), 0o644); err != nil {
		return err
	}
	fs, err := mountVolumes(pod, c, envMap, n.dirs, objects)
	if err != nil {
		return err
	}
	kubeconfig, err := s.kubeconfigFor(ctx, pod, n.dirs.Pod)
	if err != nil {
		return err
	}
	addrs, err := freeLoopbackAddresses(2)
	if err != nil {
		return err
	}
	cmd, err := buildSidecarCommand(commandInput{
		Command: c.Command, Args: c.Args, Env: env, FS: fs,
		SidecarBinary: s.opts.SidecarBinary, FakeScyllaDBBinary: s.opts.FakeScyllaDBBinary,
		Kubeconfig: kubeconfig, ProbesAddress: addrs[0], APIAddress: addrs[1],
	})
	if err != nil {
		return err
	}
	svc, err := s.client.CoreV1().Services(pod.Namespace).Get(ctx, cmd.MemberServiceName, metav1.GetOptions{})
	if err != nil {
		return missingOrError(err, false, "member Service", pod.Namespace, cmd.MemberServiceName)
	}

	processEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + rootfs, "HOSTNAME=" + pod.Name}
	processEnv = append(processEnv, joinEnv(env)...)
	processEnv = append(processEnv,
		fakescylladb.EnvRegistryURL+"="+s.registryURL,
		fakescylladb.EnvResolverURL+"="+s.ResolverURL(pod.Namespace),
		fakescylladb.EnvRecordPath+"="+n.recordPath(),
		fakescylladb.EnvAliasAddresses+"="+strings.Join(podAddresses(pod, svc), ","),
	)
	if s.opts.FakeEnv != nil {
		processEnv = append(processEnv, s.opts.FakeEnv(pod)...)
	}
	proc, err := s.startProcess(processSpec{Path: cmd.Path, Args: cmd.Args, Env: processEnv, Dir: n.dirs.Pod, LogPath: n.logPath()})
	if err != nil {
		return err
	}

	probeCtx, stopProbe := context.WithCancel(ctx)
	s.mu.Lock()
	if n.started {
		n.restarts++
	}
	n.started = true
	n.proc, n.stopProbe = proc, stopProbe
	n.args = cmd.Args
	n.probesAddress, n.apiAddress = addrs[0], addrs[1]
	n.dataDir = cmd.Overrides["scylladb-data-dir"]
	n.ready, n.readyMessage = false, ""
	n.waiting, n.waitingMsg = "", ""
	s.mu.Unlock()
	go s.probe(probeCtx, n, proc, addrs[0])
	go func() {
		select {
		case <-proc.Done():
			s.queue.Add(n.key)
		case <-probeCtx.Done():
		}
	}()
	s.logger.Info("Started the sidecar", "pod", n.key, "pid", proc.PID(), "probes", addrs[0], "api", addrs[1], "args", cmd.Args)
	s.recorder.Eventf(pod, corev1.EventTypeNormal, "Started", "Started the sidecar (pid %d), probes on %s, ScyllaDB API on %s", proc.PID(), addrs[0], addrs[1])
	return nil
}

// stopNode stops the node's container: SIGTERM, then SIGKILL after grace.
func (s *Simulator) stopNode(n *node, grace time.Duration, reason string) error {
	s.mu.Lock()
	proc, stopProbe := n.proc, n.stopProbe
	n.proc = nil
	s.mu.Unlock()
	if proc == nil {
		return nil
	}
	stopProbe()
	s.logger.Info("Stopping the sidecar", "pod", n.key, "pid", proc.PID(), "reason", reason)
	if err := proc.Stop(grace); err != nil {
		return fmt.Errorf("can't stop the sidecar of Pod %q: %w", n.key, err)
	}
	return nil
}

// probe polls the sidecar's /readyz until ctx ends and asks for a sync when the result changes.
func (s *Simulator) probe(ctx context.Context, n *node, proc runningProcess, address string) {
	ticker := time.NewTicker(s.opts.ProbeInterval)
	defer ticker.Stop()
	for {
		ready, message := s.readyz(ctx, address)
		s.mu.Lock()
		current := n.proc == proc
		changed := current && n.ready != ready
		if current {
			n.ready, n.readyMessage = ready, message
		}
		s.mu.Unlock()
		if changed {
			s.logger.V(1).Info("Readiness changed", "pod", n.key, "ready", ready, "message", message)
			s.queue.Add(n.key)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// newReadyzProber returns a function that GETs the sidecar's /readyz as a kubelet's HTTP probe would.
func newReadyzProber() func(ctx context.Context, address string) (bool, string) {
	client := &http.Client{Timeout: 2 * time.Second}
	return func(ctx context.Context, address string) (bool, string) {
		return readyz(ctx, client, address)
	}
}

func readyz(ctx context.Context, client *http.Client, address string) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+address+sidecar.ReadyzPath, nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Sprintf("%d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return true, ""
}

// kubeconfigFor returns the kubeconfig the Pod's sidecar uses: the admin one, or one with a token of the Pod's
// ServiceAccount bound to the Pod; empty when the Pod doesn't mount a token.
func (s *Simulator) kubeconfigFor(ctx context.Context, pod *corev1.Pod, dir string) (string, error) {
	if s.opts.Identity == IdentityAdmin {
		return s.opts.AdminKubeconfig, nil
	}
	if pod.Spec.AutomountServiceAccountToken != nil && !*pod.Spec.AutomountServiceAccountToken {
		return "", nil
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	expiration := int64(serviceAccountTokenLifetime / time.Second)
	tr, err := s.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: &expiration,
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("can't get a token of ServiceAccount %q: %w (%w)", pod.Namespace+"/"+sa, err, errNotYetAvailable)
	}
	tokenPath := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenPath, []byte(tr.Status.Token), 0o600); err != nil {
		return "", fmt.Errorf("can't write the token: %w", err)
	}
	caData := s.opts.Config.CAData
	if len(caData) == 0 && s.opts.Config.CAFile != "" {
		if caData, err = os.ReadFile(s.opts.Config.CAFile); err != nil {
			return "", fmt.Errorf("can't read the API server's CA: %w", err)
		}
	}
	config := clientcmdapi.NewConfig()
	config.Clusters["cluster"] = &clientcmdapi.Cluster{Server: s.opts.Config.Host, CertificateAuthorityData: caData}
	config.AuthInfos["pod"] = &clientcmdapi.AuthInfo{TokenFile: tokenPath}
	config.Contexts["pod"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "pod", Namespace: pod.Namespace}
	config.CurrentContext = "pod"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		return "", fmt.Errorf("can't write the sidecar's kubeconfig: %w", err)
	}
	return path, nil
}

// apiObjects reads what containers refer to straight from the API server.
type apiObjects struct {
	ctx context.Context
	s   *Simulator
}

var _ volumeSources = &apiObjects{}

func (a *apiObjects) ConfigMap(namespace, name string) (*corev1.ConfigMap, error) {
	return a.s.client.CoreV1().ConfigMaps(namespace).Get(a.ctx, name, metav1.GetOptions{})
}

func (a *apiObjects) Secret(namespace, name string) (*corev1.Secret, error) {
	return a.s.client.CoreV1().Secrets(namespace).Get(a.ctx, name, metav1.GetOptions{})
}

func (a *apiObjects) ClaimUID(namespace, name string) (string, error) {
	pvc, err := a.s.client.CoreV1().PersistentVolumeClaims(namespace).Get(a.ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return string(pvc.UID), nil
}

// SetKnobs changes the knobs of a Pod's running fake ScyllaDB (see fakescylladb.Knobs): for example Down makes
// the node report itself Down, so its sidecar's /readyz fails.
func (s *Simulator) SetKnobs(ctx context.Context, namespace, name string, knobs fakescylladb.Knobs) error {
	body, err := json.Marshal(knobs)
	if err != nil {
		return err
	}
	return s.knobsRequest(ctx, namespace, name, http.MethodPost, body, nil)
}

// Knobs returns the knobs of a Pod's running fake ScyllaDB.
func (s *Simulator) Knobs(ctx context.Context, namespace, name string) (fakescylladb.Knobs, error) {
	var k fakescylladb.Knobs
	err := s.knobsRequest(ctx, namespace, name, http.MethodGet, nil, &k)
	return k, err
}

func (s *Simulator) knobsRequest(ctx context.Context, namespace, name, method string, body []byte, out any) error {
	n, ok := s.Node(namespace, name)
	if !ok || n.PID == 0 {
		return fmt.Errorf("ScyllaDB of Pod %q doesn't run", namespace+"/"+name)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+n.APIAddress+fakescylladb.PathKnobs, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("can't reach the fake ScyllaDB of Pod %q: %w", namespace+"/"+name, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the fake ScyllaDB of Pod %q answered %d: %s", namespace+"/"+name, resp.StatusCode, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}
