package sidecar

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"k8s.io/klog/v2"
)

// JoinedMarker is the record, on the node's volume, that the node has joined the ring: a file in ScyllaDB's data
// directory holding the host ID under which the sidecar first saw the node Up and Normal. A node that has joined
// needs no seed to come back (external-seeds.md), so after a full outage it seeds from itself instead of waiting
// for another node's address. The record is made only from ScyllaDB's own word (Up and Normal in the ring, operation
// mode NORMAL), never because ScyllaDB started: a node whose bootstrap failed half-way and seeded from itself could
// found a second ring.
type JoinedMarker struct {
	path string
	// recorded is set once this process has written the marker, or found it at start.
	recorded atomic.Bool
}

// NewJoinedMarker returns the marker kept in dataDir.
func NewJoinedMarker(dataDir string) *JoinedMarker {
	return &JoinedMarker{path: filepath.Join(dataDir, joinedMarkerFileName)}
}

// Path is the marker file's path.
func (m *JoinedMarker) Path() string {
	return m.path
}

// read reports whether the marker says the node joined the ring. A marker that can't be read or doesn't hold a
// host ID (a write cut short) is an error: the caller must take the node as not joined.
func (m *JoinedMarker) read() (bool, error) {
	data, err := os.ReadFile(m.path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("can't read the joined marker %q: %w", m.path, err)
	}
	if _, err := ParseHostID(strings.TrimSpace(string(data))); err != nil {
		return false, fmt.Errorf("the joined marker %q doesn't hold a host ID: %w", m.path, err)
	}
	return true, nil
}

// Recorded reports whether this process has written the marker, or found it at start.
func (m *JoinedMarker) Recorded() bool {
	return m.recorded.Load()
}

// Joined reports whether the node joined the ring, as the marker says. Any trouble with the marker is logged and
// reads as not joined: waiting for another node's address is the safe choice.
func (m *JoinedMarker) Joined(ctx context.Context) bool {
	joined, err := m.read()
	if err != nil {
		klog.FromContext(ctx).Info("Taking the node as not yet joined to the ring", "err", err.Error())
		return false
	}
	m.recorded.Store(joined)
	return joined
}

// Record writes the marker, with hostID, the first time it is called in this process, and again on the next call
// after a failure. A failure is logged and never returned: readiness must not depend on the marker.
func (m *JoinedMarker) Record(ctx context.Context, hostID string) {
	if m.recorded.Load() {
		return
	}
	logger := klog.FromContext(ctx)
	hostID, err := ParseHostID(hostID)
	if err != nil {
		logger.Info("Can't record that the node joined the ring", "err", err.Error())
		return
	}
	if err := writeFileDurably(m.path, []byte(hostID+"\n")); err != nil {
		logger.Info("Can't record that the node joined the ring; retrying at the next readiness check", "marker", m.path, "err", err.Error())
		return
	}
	m.recorded.Store(true)
	logger.Info("Recorded that the node joined the ring", "marker", m.path, "hostID", hostID)
}

// Remove deletes the marker: a node about to replace another has not joined the ring as itself yet. A failure is
// logged: the marker is ignored while the node replaces another, and once the replacement is done it is true.
func (m *JoinedMarker) Remove(ctx context.Context) {
	m.recorded.Store(false)
	err := os.Remove(m.path)
	switch {
	case err == nil:
		klog.FromContext(ctx).Info("Removed the joined marker: the node replaces another", "marker", m.path)
	case !errors.Is(err, os.ErrNotExist):
		klog.FromContext(ctx).Info("Can't remove the joined marker; it is ignored while the node replaces another", "marker", m.path, "err", err.Error())
	}
}
