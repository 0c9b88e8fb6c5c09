package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestByKeyMergesMatchingItemsInBaseOrderAndAppendsTheRest(t *testing.T) {
	t.Parallel()

	type item struct{ key, value string }
	key := func(i item) string { return i.key }
	got := ByKey([]item{{"a", "base"}, {"b", "base"}}, []item{{"c", "override"}, {"a", "override"}}, key, Replace)
	want := []item{{"a", "override"}, {"b", "base"}, {"c", "override"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(item{})); diff != "" {
		t.Errorf("unexpected items (-want +got):\n%s", diff)
	}
	if got := ByKey[item](nil, nil, key, Replace); got != nil {
		t.Errorf("expected nil for two empty lists, got %v", got)
	}
}

func TestMapsLetsOverrideWinAndCopies(t *testing.T) {
	t.Parallel()

	base := map[string]string{"a": "base", "b": "base"}
	got := Maps(base, map[string]string{"b": "override"})
	if diff := cmp.Diff(map[string]string{"a": "base", "b": "override"}, got); diff != "" {
		t.Errorf("unexpected map (-want +got):\n%s", diff)
	}
	got["a"] = "changed"
	if base["a"] != "base" {
		t.Error("the result shares memory with base")
	}
	if got := Maps(nil, map[string]string{}); got != nil {
		t.Errorf("expected nil for two empty maps, got %v", got)
	}
}

func TestPick(t *testing.T) {
	t.Parallel()

	one, two := 1, 2
	if got := Pick(&one, &two); got != &one {
		t.Errorf("expected override, got %v", *got)
	}
	if got := Pick(nil, &two); got != &two {
		t.Errorf("expected base, got %v", *got)
	}
}
