package controllerhelpers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKeyedMemory(t *testing.T) {
	t.Parallel()
	m := NewKeyedMemory[int]()
	if got := m.Get("ns/a"); len(got) != 0 {
		t.Fatalf("want nothing remembered, got %v", got)
	}
	m.Set("ns/a", map[string]int{"x": 1, "y": 2})
	m.Set("ns/b", map[string]int{"x": 3})

	got := m.Get("ns/a")
	got["z"] = 9 // A copy: the memory does not change.
	if diff := cmp.Diff(map[string]int{"x": 1, "y": 2}, m.Get("ns/a")); diff != "" {
		t.Errorf("unexpected memory of ns/a (-want +got):\n%s", diff)
	}
	if v, ok := m.Lookup("ns/b", "x"); !ok || v != 3 {
		t.Errorf("Lookup(ns/b, x) = %d, %v; want 3, true", v, ok)
	}
	if _, ok := m.Lookup("ns/b", "y"); ok {
		t.Error("Lookup found a name never remembered")
	}

	// A sync that met nothing replaces what was remembered with nothing.
	m.Set("ns/a", map[string]int{})
	if _, ok := m.Lookup("ns/a", "x"); ok {
		t.Error("an empty Set kept the earlier memory")
	}
	m.Forget("ns/b")
	if got := m.Get("ns/b"); len(got) != 0 {
		t.Errorf("want ns/b forgotten, got %v", got)
	}
	if len(m.byKey) != 0 {
		t.Errorf("want no key left, got %v", m.byKey)
	}
}
