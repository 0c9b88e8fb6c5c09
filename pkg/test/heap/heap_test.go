package heap

import (
	"runtime"
	"testing"
)

func TestLiveCountsWhatIsRetained(t *testing.T) {
	before := Live()
	retained := make([][]byte, 64)
	for i := range retained {
		retained[i] = make([]byte, 64<<10)
	}
	got := Live() - before
	runtime.KeepAlive(retained)
	if want := uint64(len(retained) * 64 << 10); got < want {
		t.Errorf("Live grew by %d bytes while %d were retained", got, want)
	}
}
