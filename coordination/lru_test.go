package coordination

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
)

// keys lists the cache's keys, most recently used first.
func (c *lru[K, V]) keys() []K {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []K
	for it := c.ring.next; it != &c.ring; it = it.next {
		out = append(out, it.key)
	}
	return out
}

func TestLRULetsTheLeastRecentlyUsedGo(t *testing.T) {
	c := newLRU[string, int](3)
	c.Put("a", 1)
	c.Put("b", 2)
	c.Put("c", 3)
	if v, ok := c.Get("a"); !ok || v != 1 { // a is now the most recent
		t.Fatalf("Get(a) = %d, %t", v, ok)
	}
	c.Put("b", 20) // so is b, with its new value, and nothing goes
	c.Put("d", 4)  // full: c, the least recently used, goes
	if got, want := c.keys(), []string{"d", "b", "a"}; !slices.Equal(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	if _, ok := c.Get("c"); ok {
		t.Fatal("c was let go, yet found")
	}
	if v, _ := c.Get("b"); v != 20 {
		t.Fatalf("b = %d, want 20", v)
	}
	if c.Len() != 3 {
		t.Fatalf("Len %d, want 3", c.Len())
	}
}

func TestLRUDeletes(t *testing.T) {
	c := newLRU[string, int](8)
	for i := range 6 {
		c.Put(fmt.Sprint(i), i)
	}
	c.Delete("0")
	c.Delete("missing")
	if c.DeleteIf("1", func(v int) bool { return v == 99 }) {
		t.Fatal("DeleteIf removed a value it was told to keep")
	}
	if !c.DeleteIf("1", func(v int) bool { return v == 1 }) {
		t.Fatal("DeleteIf kept a value it was told to remove")
	}
	c.DeleteFunc(func(_ string, v int) bool { return v%2 == 0 })
	if got, want := c.keys(), []string{"5", "3"}; !slices.Equal(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	if c.Len() != 2 {
		t.Fatalf("Len %d, want 2", c.Len())
	}
}

func TestLRUHoldsAtLeastOne(t *testing.T) {
	c := newLRU[int, int](0)
	c.Put(1, 1)
	c.Put(2, 2)
	if got := c.keys(); !slices.Equal(got, []int{2}) {
		t.Fatalf("keys %v, want [2]", got)
	}
}

// TestLRUUnderConcurrentUseStaysWithinItsCap: many goroutines at once
// never take it past its cap, and what it holds is in its list (run with
// -race).
func TestLRUUnderConcurrentUseStaysWithinItsCap(t *testing.T) {
	const size = 16
	c := newLRU[int, int](size)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := (g*7 + i) % 40
				switch i % 4 {
				case 0, 1:
					c.Put(k, i)
				case 2:
					c.Get(k)
				default:
					c.Delete(k)
				}
				if n := c.Len(); n > size {
					t.Errorf("Len %d past the cap %d", n, size)
					return
				}
			}
		})
	}
	wg.Wait()
	c.mu.Lock()
	inMap := slices.Sorted(maps.Keys(c.items))
	c.mu.Unlock()
	if inList := c.keys(); !slices.Equal(inMap, slices.Sorted(slices.Values(inList))) {
		t.Fatalf("the map holds %v but the list %v", inMap, inList)
	}
}
