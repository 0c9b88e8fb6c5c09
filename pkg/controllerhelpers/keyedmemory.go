package controllerhelpers

import (
	"maps"
	"sync"
)

// KeyedMemory is what a controller remembers between the syncs of each of its objects, by the object's queue key and
// then by a name within it: for each key, what the last sync found, which the next sync reads and replaces whole. It
// lives in memory only, so a restarted controller starts without it. It is safe for concurrent use.
type KeyedMemory[V any] struct {
	lock  sync.Mutex
	byKey map[string]map[string]V
}

// NewKeyedMemory returns an empty KeyedMemory.
func NewKeyedMemory[V any]() *KeyedMemory[V] {
	return &KeyedMemory[V]{byKey: map[string]map[string]V{}}
}

// Get returns a copy of what is remembered of key.
func (m *KeyedMemory[V]) Get(key string) map[string]V {
	m.lock.Lock()
	defer m.lock.Unlock()
	return maps.Clone(m.byKey[key])
}

// Lookup returns what is remembered of name under key.
func (m *KeyedMemory[V]) Lookup(key, name string) (V, bool) {
	m.lock.Lock()
	defer m.lock.Unlock()
	v, ok := m.byKey[key][name]
	return v, ok
}

// Set replaces what is remembered of key with values, which the caller must not change afterwards; nothing is
// remembered of key when values is empty.
func (m *KeyedMemory[V]) Set(key string, values map[string]V) {
	m.lock.Lock()
	defer m.lock.Unlock()
	if len(values) == 0 {
		delete(m.byKey, key)
		return
	}
	m.byKey[key] = values
}

// Forget drops what is remembered of key, whose object is gone.
func (m *KeyedMemory[V]) Forget(key string) {
	m.Set(key, nil)
}
