package sidecar

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corev1listers "k8s.io/client-go/listers/core/v1"

	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// DecommissionRefusal is what ScyllaDB writes when it refuses to start because the node was decommissioned ("This
// node was decommissioned and will not rejoin the ring unless override_decommission=true has been set...").
const DecommissionRefusal = "was decommissioned and will not rejoin the ring"

// refusalConfirmsDecommission reports whether ScyllaDB's refusal to start a decommissioned node confirms that the
// decommission this node's sidecar started has finished: the in-progress marker is on the volume, written just
// before the sidecar called decommission, and the member Service still asks for the decommission. Anything else
// (someone decommissioned the node by hand, the operator no longer asks) is left for a human to look at.
func refusalConfirmsDecommission(dataDir string, lister corev1listers.ServiceLister, namespace, name string) (bool, error) {
	started, err := markerExists(filepath.Join(dataDir, decommissioningMarkerFileName))
	if err != nil || !started {
		return false, err
	}
	svc, err := lister.Services(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return svc.Labels[naming.DecommissionedLabel] == naming.DecommissionedLabelFalse, nil
}

// outputWatcher is an io.Writer that calls found, once, when what is written to it contains phrase, even split
// across writes. It is safe for concurrent writers, such as a process's stdout and stderr.
type outputWatcher struct {
	phrase []byte
	found  func()

	lock sync.Mutex
	tail []byte
	seen bool
}

func newOutputWatcher(phrase string, found func()) *outputWatcher {
	return &outputWatcher{phrase: []byte(phrase), found: found}
}

// Write implements io.Writer.
func (w *outputWatcher) Write(p []byte) (int, error) {
	w.lock.Lock()
	defer w.lock.Unlock()
	if w.seen {
		return len(p), nil
	}
	buf := append(w.tail, p...)
	if bytes.Contains(buf, w.phrase) {
		w.seen = true
		w.tail = nil
		w.found()
		return len(p), nil
	}
	keep := min(len(buf), len(w.phrase)-1)
	w.tail = append(w.tail[:0], buf[len(buf)-keep:]...)
	return len(p), nil
}

// teeTo writes to out, if set, and to watcher.
func teeTo(out *os.File, watcher io.Writer) io.Writer {
	if out == nil {
		return watcher
	}
	return io.MultiWriter(out, watcher)
}
