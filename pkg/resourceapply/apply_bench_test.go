package resourceapply

import (
	"testing"

	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"k8s.io/client-go/tools/record"
)

// benchmarkApplyUpToDate measures the path every steady-state sync takes: hash the required object, read the
// existing one from the cache and compare.
func benchmarkApplyUpToDate[T kubeinterfaces.ObjectInterface](b *testing.B, kind kindClient[T], newRequired func() T) {
	f := newApplyFixture(kind)
	if _, _, err := f.apply(b, newRequired(), ApplyOptions{}); err != nil {
		b.Fatal(err)
	}
	f.takeActions()
	client := f.client
	lister := f.lister(b)
	recorder := record.NewFakeRecorder(1)
	required := newRequired()
	ctx := b.Context()

	b.ReportAllocs()
	for b.Loop() {
		_, changed, err := Apply(ctx, client, lister, recorder, required, ApplyOptions{})
		if err != nil || changed {
			b.Fatalf("expected no change and no error, got changed=%v, err=%v", changed, err)
		}
	}
	b.StopTimer()

	if actions := f.takeActions(); len(actions) != 0 {
		b.Fatalf("expected no writes, got %q", actions)
	}
}

func BenchmarkApplyUpToDate(b *testing.B) {
	b.Run("Service", func(b *testing.B) { benchmarkApplyUpToDate(b, serviceKind, newTestService) })
	b.Run("StatefulSet", func(b *testing.B) { benchmarkApplyUpToDate(b, statefulSetKind, newTestStatefulSet) })
}

func BenchmarkHash(b *testing.B) {
	sts := newTestStatefulSet()

	b.ReportAllocs()
	for b.Loop() {
		if _, err := Hash(sts); err != nil {
			b.Fatal(err)
		}
	}
}
