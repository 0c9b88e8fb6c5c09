package framework

import (
	"fmt"
	"sort"
	"sync"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// WarningRecorder collects the warnings an API server sends back: deprecations, and admission webhooks' warnings.
type WarningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

var _ rest.WarningHandler = &WarningRecorder{}

// HandleWarningHeader records a warning.
func (w *WarningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

// Take returns the warnings recorded so far, sorted, and forgets them.
func (w *WarningRecorder) Take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.warnings
	w.warnings = nil
	sort.Strings(out)
	return out
}

// NewWarningRecordingDynamicClient returns a dynamic client with config's identity whose warnings go to a new
// recorder instead of the log.
func NewWarningRecordingDynamicClient(config *rest.Config) (dynamic.Interface, *WarningRecorder, error) {
	recorder := &WarningRecorder{}
	config = rest.CopyConfig(config)
	config.WarningHandler = recorder
	config.WarningHandlerWithContext = nil
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, nil, fmt.Errorf("can't create dynamic client: %w", err)
	}
	return dyn, recorder, nil
}
