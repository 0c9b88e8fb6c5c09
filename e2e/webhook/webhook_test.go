//go:build e2e

package webhook

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/crdvalidation"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// scyllaClusterManifest is a valid ScyllaCluster with two racks of three members.
const scyllaClusterManifest = `
apiVersion: scylla.scylladb.com/v1
kind: ScyllaCluster
metadata:
  name: NAME
spec:
  version: 2025.1.2
  agentVersion: 3.5.0
  datacenter:
    name: dc1
    racks:
    - name: a
      members: 3
      storage:
        capacity: 100Gi
      resources:
        limits:
          cpu: "2"
          memory: 8Gi
    - name: b
      members: 3
      storage:
        capacity: 100Gi
      resources:
        limits:
          cpu: "2"
          memory: 8Gi
`

// validScyllaCluster returns a valid ScyllaCluster named name.
func validScyllaCluster(name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(scyllaClusterManifest), &obj.Object); err != nil {
		panic(fmt.Sprintf("can't decode the ScyllaCluster manifest: %v", err))
	}
	obj.SetName(name)
	return obj
}

// TestWebhookAnswersThroughTheAPIServer: invalid objects are refused with the webhook's causes, valid ones are
// created, removing a rack with members is refused, a deprecated field is admitted with a warning, and creates get
// enableParallelNodeOperations defaulted by the mutating webhook.
func TestWebhookAnswersThroughTheAPIServer(t *testing.T) {
	e := newEnv(t)
	w := e.newWebhook("webhook-admission")
	e.pointWebhooksAt(w.port)
	e.start(w)
	e.waitUntilAdmitting(w)

	t.Run("every invalid manifest is refused with the webhook's causes", func(t *testing.T) {
		cases, err := LoadInvalidCases(InvalidCasesDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			t.Run(c.Name, func(t *testing.T) {
				t.Parallel()
				checkRefused(t, e, c)
			})
		}
	})

	t.Run("the webhook runs with its ServiceAccount's permissions only", func(t *testing.T) {
		// A token of its own: the webhook's is checked for refused requests when the suite ends.
		cred, err := e.cluster.ControlPlane.ServiceAccountKubeconfig(t.Context(), w.cred.ServiceAccount)
		if err != nil {
			t.Fatal(err)
		}
		config, err := cred.RESTConfig("e2e-test/" + t.Name())
		if err != nil {
			t.Fatal(err)
		}
		kube, err := kubernetes.NewForConfig(config)
		if err != nil {
			t.Fatal(err)
		}
		// Its Role grants the Secrets of its own namespace only.
		_, err = kube.CoreV1().Secrets(e.f.Namespace()).List(t.Context(), metav1.ListOptions{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("want listing Secrets of namespace %s as %s forbidden, got %v", e.f.Namespace(), cred.ServiceAccount, err)
		}
	})

	t.Run("every example of deploy/examples is admitted", func(t *testing.T) {
		checkExamplesAdmitted(t, e)
	})

	t.Run("a valid ScyllaCluster is created", func(t *testing.T) {
		if _, err := e.create(t.Context(), validScyllaCluster("valid"), nil); err != nil {
			t.Fatalf("can't create a valid ScyllaCluster: %v", err)
		}
	})

	// The CRD schema already refuses removing a rack whose members are not 0; the webhook also refuses removing one
	// whose status still shows nodes, as while the operator scales it down.
	t.Run("removing a rack whose status still shows nodes is refused", func(t *testing.T) {
		scs := e.scyllaClusters()
		sc, err := e.create(t.Context(), validScyllaCluster("removal"), nil)
		if err != nil {
			t.Fatalf("can't create the ScyllaCluster: %v", err)
		}
		racks, _, _ := unstructured.NestedSlice(sc.Object, "spec", "datacenter", "racks")
		if err := unstructured.SetNestedField(racks[1].(map[string]interface{}), int64(0), "members"); err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedSlice(sc.Object, racks, "spec", "datacenter", "racks"); err != nil {
			t.Fatal(err)
		}
		if sc, err = scs.Update(t.Context(), sc, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
			t.Fatalf("can't scale rack b to 0: %v", err)
		}
		// The operator has seen the scale-down, but rack b still runs 3 nodes.
		sc.Object["status"] = map[string]interface{}{
			"observedGeneration": sc.GetGeneration(),
			"racks": map[string]interface{}{
				"a": map[string]interface{}{"version": "2025.1.2", "members": int64(3), "readyMembers": int64(3)},
				"b": map[string]interface{}{"version": "2025.1.2", "members": int64(3), "readyMembers": int64(3)},
			},
		}
		if sc, err = scs.UpdateStatus(t.Context(), sc, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
			t.Fatalf("can't write the status: %v", err)
		}
		if err := unstructured.SetNestedSlice(sc.Object, racks[:1], "spec", "datacenter", "racks"); err != nil {
			t.Fatal(err)
		}
		_, err = scs.Update(t.Context(), sc, metav1.UpdateOptions{FieldManager: fieldManager})
		expectations := []crdvalidation.Expectation{{Path: "spec.datacenter.racks", Message: `rack "b" can't be removed while it still runs 3 nodes`}}
		if err := CheckWebhookRejection(err, expectations, true); err != nil {
			t.Fatalf("removing rack b while its status shows 3 nodes: %v", err)
		}
	})

	t.Run("the mutating webhook defaults enableParallelNodeOperations on create", func(t *testing.T) {
		checkParallelNodeOperationsDefaulted(t, e)
	})

	t.Run("a deprecated field is admitted with a warning", func(t *testing.T) {
		sc := validScyllaCluster("deprecated")
		if err := unstructured.SetNestedStringSlice(sc.Object, []string{"fs.aio-max-nr=30000000"}, "spec", "sysctls"); err != nil {
			t.Fatal(err)
		}
		e.warnings.Take()
		if _, err := e.dryRunCreate(t.Context(), sc); err != nil {
			t.Fatalf("a ScyllaCluster with spec.sysctls is refused: %v", err)
		}
		const want = "spec.sysctls is deprecated"
		if got := e.warnings.Take(); !slices.ContainsFunc(got, func(w string) bool { return strings.Contains(w, want) }) {
			t.Fatalf("want a warning containing %q, got %q", want, got)
		}
	})
}

// taskTargetKinds are the kinds a ScyllaDBManagerTask refers to; the webhook checks that the target exists.
var taskTargetKinds = []string{"ScyllaDBCluster", "ScyllaDBDatacenter"}

// example is an object of a file of deploy/examples.
type example struct {
	file string
	obj  *unstructured.Unstructured
}

// checkExamplesAdmitted sends every scylla.scylladb.com object of deploy/examples through the webhook: the task
// targets are created for real (namespaced objects in the test's namespace, which stands for the examples' own),
// everything else as a dry run after them. None may be refused.
func checkExamplesAdmitted(t *testing.T, e *env) {
	t.Helper()
	paths, err := framework.ManifestFiles(filepath.Join(e.f.Suite().RepoRoot, "deploy", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	var targets, others []example
	for _, path := range paths {
		objs, err := framework.DecodeManifestFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objs {
			ex := example{file: filepath.Base(path), obj: obj}
			switch {
			case obj.GroupVersionKind().Group != scyllav1.SchemeGroupVersion.Group:
			case slices.Contains(taskTargetKinds, obj.GetKind()):
				targets = append(targets, ex)
			default:
				others = append(others, ex)
			}
		}
	}
	if len(targets) == 0 || len(others) == 0 {
		t.Fatalf("deploy/examples has %d task targets and %d other scylla.scylladb.com objects: want some of each", len(targets), len(others))
	}
	for _, ex := range targets {
		if _, err := e.create(t.Context(), ex.obj, nil); err != nil {
			t.Errorf("%s %q of %s is refused: %v", ex.obj.GetKind(), ex.obj.GetName(), ex.file, err)
		}
	}
	for _, ex := range others {
		if _, err := e.dryRunCreate(t.Context(), ex.obj); err != nil {
			t.Errorf("%s %q of %s is refused: %v", ex.obj.GetKind(), ex.obj.GetName(), ex.file, err)
		}
	}
	t.Logf("the webhook admitted %d objects of %d examples (%d created, the rest as dry runs)", len(targets)+len(others), len(paths), len(targets))
}

// checkRefused sends the case's manifest as a dry-run create and checks the webhook refused it as expected.
func checkRefused(t *testing.T, e *env, c crdvalidation.Case) {
	t.Helper()
	path := filepath.Join(InvalidCasesDir, c.Name+".yaml")
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(c.Documents[0], &obj.Object); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	_, err := e.dryRunCreate(t.Context(), obj)
	if err := CheckWebhookRejection(err, c.Expectations, true); err != nil {
		t.Errorf("%s: %v", path, err)
	}
}

// Short serving certificates for TestServingCertificateRotatesWithoutFailedAdmission: one issued at T is renewed at
// T + 0.05×5m = T+15s. The webhook requires --serving-validity × (1 - --refresh-fraction) to be at least twice its
// trust propagation delay of 2 minutes.
const (
	rotationValidity        = 5 * time.Minute
	rotationRefreshFraction = 0.05
	rotationTimeout         = 45 * time.Second
)

// TestServingCertificateRotatesWithoutFailedAdmission keeps admitting objects through the API server while the
// webhook renews its serving certificate: none fails, and the renewed certificate is one the caBundle verifies.
//
// A new CA signs nothing until it has been in the caBundle for the webhook's trust propagation delay (2 minutes),
// so renewing a certificate of a CA the test just made would take that long. The test starts the webhook as if it
// had run for a few minutes instead: it seeds the Secret with a CA and certificate generated minutes ago, which the
// webhook takes over; it reissues the certificate at once (it is due), and again 15s later, under load.
func TestServingCertificateRotatesWithoutFailedAdmission(t *testing.T) {
	e := newEnv(t)
	e.seedServingCertificate(3 * time.Minute)
	w := e.newWebhook("webhook-rotation",
		"--serving-validity="+rotationValidity.String(), fmt.Sprintf("--refresh-fraction=%v", rotationRefreshFraction))
	e.pointWebhooksAt(w.port)
	e.start(w)
	e.waitUntilAdmitting(w)
	first, err := e.servedCertificate(t.Context(), w)
	if err != nil {
		t.Fatal(err)
	}

	invalid, err := LoadInvalidCases(InvalidCasesDir)
	if err != nil {
		t.Fatal(err)
	}
	loop := newAdmissionLoop(e, invalid[0])
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		loop.run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()

	var renewed string
	e.f.WaitFor(rotationTimeout, fmt.Sprintf("webhook %s to serve a certificate other than %s", w.name, first), func(ctx context.Context) (bool, error) {
		serial, err := e.servedCertificate(ctx, w)
		if err != nil {
			return false, err
		}
		renewed = serial
		return serial != first, fmt.Errorf("still serving %s", serial)
	})
	t.Logf("webhook %s renewed its certificate %s as %s", w.name, first, renewed)
	// Admissions must keep succeeding with the renewed certificate, not only up to the renewal.
	atRenewal := loop.count()
	e.f.WaitFor(rotationTimeout, "20 more admissions after the renewal", func(context.Context) (bool, error) {
		n := loop.count()
		return n >= atRenewal+20, fmt.Errorf("%d admissions since the renewal", n-atRenewal)
	})
	cancel()
	<-done

	if failures := loop.failures(); len(failures) != 0 {
		t.Fatalf("%d of %d admissions failed while the certificate rotated:\n%s", len(failures), loop.count(), strings.Join(failures, "\n"))
	}
	t.Logf("%d admissions, none failed, while the certificate rotated", loop.count())
}

// admissionLoop sends admissions through the API server one after another, alternating a valid ScyllaCluster that
// must be admitted with an invalid manifest that the webhook must refuse.
type admissionLoop struct {
	e       *env
	invalid crdvalidation.Case

	mu       sync.Mutex
	n        int
	failed   []string
	finished bool
}

func newAdmissionLoop(e *env, invalid crdvalidation.Case) *admissionLoop {
	return &admissionLoop{e: e, invalid: invalid}
}

// run admits until ctx ends.
func (l *admissionLoop) run(ctx context.Context) {
	valid := validScyllaCluster("rotation")
	invalid := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(l.invalid.Documents[0], &invalid.Object); err != nil {
		l.record(fmt.Errorf("can't decode case %s: %w", l.invalid.Name, err))
		return
	}
	for i := 0; ctx.Err() == nil; i++ {
		var err error
		if i%2 == 0 {
			_, err = l.e.dryRunCreate(ctx, valid)
		} else {
			_, err = l.e.dryRunCreate(ctx, invalid)
			err = CheckWebhookRejection(err, l.invalid.Expectations, true)
		}
		if ctx.Err() != nil {
			return
		}
		l.record(err)
		// A short pause leaves the machine's cores to the API server and the webhook.
		select {
		case <-ctx.Done():
		case <-time.After(admissionPause):
		}
	}
}

// admissionPause separates the admissions of an admissionLoop.
const admissionPause = 20 * time.Millisecond

func (l *admissionLoop) record(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	if err != nil {
		l.failed = append(l.failed, fmt.Sprintf("admission %d at %s: %v", l.n, time.Now().Format(time.RFC3339Nano), err))
	}
}

func (l *admissionLoop) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

func (l *admissionLoop) failures() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.failed)
}

// TestWebhookDownRefusesCreates stops the only webhook process: both configurations fail closed, so the API server
// refuses creates, saying it could not call the mutating webhook (called first), and updates, which only the
// validating webhook sees; once the webhook is back, creates succeed again.
func TestWebhookDownRefusesCreates(t *testing.T) {
	e := newEnv(t)
	w := e.newWebhook("webhook-down")
	e.pointWebhooksAt(w.port)
	e.start(w)
	e.waitUntilAdmitting(w)
	existing, err := e.create(t.Context(), validScyllaCluster("before-down"), nil)
	if err != nil {
		t.Fatalf("can't create a ScyllaCluster: %v", err)
	}

	e.stop(w)
	_, err = e.dryRunCreate(t.Context(), validScyllaCluster("while-down"))
	if err := checkFailedCallingWebhook(err, w, naming.WebhookMutatingName); err != nil {
		t.Fatalf("creating a ScyllaCluster while the webhook is down: %v", err)
	}
	existing.SetLabels(map[string]string{"updated": "while-down"})
	_, err = e.scyllaClusters().Update(t.Context(), existing, metav1.UpdateOptions{FieldManager: fieldManager})
	if err := checkFailedCallingWebhook(err, w, WebhookName); err != nil {
		t.Fatalf("updating a ScyllaCluster while the webhook is down: %v", err)
	}

	e.start(w)
	e.waitUntilAdmitting(w)
	if _, err := e.create(t.Context(), validScyllaCluster("back-up"), nil); err != nil {
		t.Fatalf("can't create a ScyllaCluster once the webhook is back: %v", err)
	}
}

// checkFailedCallingWebhook returns what is wrong with err as the API server's refusal of a request it could not
// send to w: an internal error naming the webhook webhookName and the refused connection.
func checkFailedCallingWebhook(err error, w *webhookProcess, webhookName string) error {
	if err == nil {
		return errors.New("the API server accepted it: the webhook configuration does not fail closed")
	}
	var problems []string
	if !apierrors.IsInternalError(err) {
		problems = append(problems, fmt.Sprintf("want an internal error, got reason %q", apierrors.ReasonForError(err)))
	}
	for _, want := range []string{fmt.Sprintf("failed calling webhook %q", webhookName), w.addr(), "connection refused"} {
		if !strings.Contains(err.Error(), want) {
			problems = append(problems, fmt.Sprintf("the message does not say %q", want))
		}
	}
	if len(problems) != 0 {
		return fmt.Errorf("%s\nerror: %w", strings.Join(problems, "\n"), err)
	}
	return nil
}

// restPeriod is how long settled replicas are watched for writes.
const restPeriod = 10 * time.Second

// TestReplicasShareOneSecret starts as many webhook replicas as the Deployment runs (at least two) at once, from no
// Secret: they end up serving the same certificate from one Secret, which one of them created; the caBundle of each
// webhook configuration is written once; and once settled, none writes anything.
func TestReplicasShareOneSecret(t *testing.T) {
	e := newEnv(t)
	if e.deployment.Replicas < 2 {
		t.Fatalf("the webhook Deployment %s runs %d replicas: want at least 2 for the webhook to stay up while one restarts", e.deployment.Name, e.deployment.Replicas)
	}
	var replicas []*webhookProcess
	for i := range e.deployment.Replicas {
		replicas = append(replicas, e.newWebhook(fmt.Sprintf("webhook-replica-%d", i)))
	}
	e.pointWebhooksAt(replicas[0].port)
	audit := e.cluster.ControlPlane.Audit
	start, err := audit.Mark()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range replicas {
		e.start(w)
	}
	e.waitUntilAdmitting(replicas[0])
	e.f.WaitFor(time.Minute, "every replica to serve the same certificate", func(ctx context.Context) (bool, error) {
		serials := map[string][]string{}
		for _, w := range replicas {
			serial, err := e.servedCertificate(ctx, w)
			if err != nil {
				return false, err
			}
			serials[serial] = append(serials[serial], w.name)
		}
		return len(serials) == 1, fmt.Errorf("the replicas serve different certificates: %v", serials)
	})

	events, err := audit.EventsSince(start)
	if err != nil {
		t.Fatal(err)
	}
	secretWrites := countSucceeded(events, replicas, framework.OnResource("secrets", ""), framework.Writes())
	secretCreates := countSucceeded(events, replicas, framework.OnResource("secrets", ""), verbIs("create"))
	caBundleWrites := countSucceeded(events, replicas, framework.OnResource("validatingwebhookconfigurations", ""), framework.Writes())
	mutatingCABundleWrites := countSucceeded(events, replicas, framework.OnResource("mutatingwebhookconfigurations", ""), framework.Writes())
	if secretWrites.Total() != 1 || secretCreates.Total() != 1 {
		t.Errorf("want the Secret created once by the replicas and not written otherwise, got:\n%s", secretWrites)
	}
	if caBundleWrites.Total() != 1 {
		t.Errorf("want the ValidatingWebhookConfiguration's caBundle written once by the replicas, got:\n%s", caBundleWrites)
	}
	if mutatingCABundleWrites.Total() != 1 {
		t.Errorf("want the MutatingWebhookConfiguration's caBundle written once by the replicas, got:\n%s", mutatingCABundleWrites)
	}
	t.Logf("while starting, the replicas wrote the Secret and the caBundles:\n%s\n%s\n%s", secretWrites, caBundleWrites, mutatingCABundleWrites)
	if failed := countFailedWrites(events, replicas); failed.Total() != 0 {
		// Conflicts are how replicas settle a race; they are not wrong, but each costs a request.
		t.Logf("writes of the replicas the API server refused while they started:\n%s", failed)
	}
	secrets, err := e.f.Clients().Kube.CoreV1().Secrets(e.deployment.ServiceAccount.Namespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range secrets.Items {
		names = append(names, s.Name)
	}
	if len(names) != 1 {
		t.Errorf("want one Secret in namespace %s, the webhook's, got %q", e.deployment.ServiceAccount.Namespace, names)
	}

	rest, err := audit.Mark()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-t.Context().Done():
		t.Fatal(t.Context().Err())
	case <-time.After(restPeriod):
	}
	if err := e.cluster.ControlPlane.CheckProcesses(); err != nil {
		t.Fatal(err)
	}
	events, err = audit.EventsSince(rest)
	if err != nil {
		t.Fatal(err)
	}
	if writes := countSucceeded(events, replicas, framework.Writes()); writes.Total() != 0 {
		t.Errorf("want no writes from settled replicas over %v, got:\n%s", restPeriod, writes)
	}
}

// countSucceeded counts the successful requests of the replicas' credentials that every filter accepts.
func countSucceeded(events []auditv1.Event, replicas []*webhookProcess, filters ...framework.AuditFilter) framework.RequestCounts {
	counts := framework.RequestCounts{}
	for _, w := range replicas {
		for k, n := range framework.CountRequests(events, append([]framework.AuditFilter{framework.Credential(w.cred), framework.Succeeded()}, filters...)...) {
			counts[framework.RequestKey{UserAgent: w.name + " " + k.UserAgent, Verb: k.Verb}] += n
		}
	}
	return counts
}

// countFailedWrites counts the writes of the replicas' credentials that did not succeed, by resource and response
// code.
func countFailedWrites(events []auditv1.Event, replicas []*webhookProcess) framework.RequestCounts {
	counts := framework.RequestCounts{}
	for _, w := range replicas {
		for i := range events {
			ev := &events[i]
			if !framework.Credential(w.cred)(ev) || !framework.IsWriteVerb(ev.Verb) || framework.Succeeded()(ev) || ev.ObjectRef == nil || ev.ResponseStatus == nil {
				continue
			}
			key := framework.RequestKey{UserAgent: fmt.Sprintf("%s %s code %d", w.name, ev.ObjectRef.Resource, ev.ResponseStatus.Code), Verb: ev.Verb}
			counts[key]++
		}
	}
	return counts
}

// verbIs selects requests of one verb.
func verbIs(verb string) framework.AuditFilter {
	return func(e *auditv1.Event) bool { return e.Verb == verb }
}
