package coordination

import "sync"

// lru is a map of at most max entries that lets the least recently used one
// go to make room: the service's caches, which a server running for weeks
// must not let grow with every session it ever saw. Each cache says in
// Service why its cap is what it is. Safe for concurrent use; make one with
// newLRU.
type lru[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	items map[K]*lruItem[K, V]
	ring  lruItem[K, V] // sentinel: ring.next is the most recently used, ring.prev the least
}

type lruItem[K comparable, V any] struct {
	key        K
	val        V
	prev, next *lruItem[K, V]
}

// newLRU returns an empty cache of at most size entries (at least one).
func newLRU[K comparable, V any](size int) *lru[K, V] {
	c := &lru[K, V]{max: max(size, 1), items: map[K]*lruItem[K, V]{}}
	c.ring.prev, c.ring.next = &c.ring, &c.ring
	return c
}

// Get returns the key's value and marks it used.
func (c *lru[K, V]) Get(k K) (v V, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[k]
	if !ok {
		return v, false
	}
	c.unlink(it)
	c.pushFront(it)
	return it.val, true
}

// Put sets the key's value and marks it used, letting the least recently
// used entry go when the cache is full.
func (c *lru[K, V]) Put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if it, ok := c.items[k]; ok {
		it.val = v
		c.unlink(it)
		c.pushFront(it)
		return
	}
	if len(c.items) >= c.max {
		oldest := c.ring.prev
		c.unlink(oldest)
		delete(c.items, oldest.key)
	}
	it := &lruItem[K, V]{key: k, val: v}
	c.items[k] = it
	c.pushFront(it)
}

// Delete removes the key.
func (c *lru[K, V]) Delete(k K) { c.DeleteIf(k, func(V) bool { return true }) }

// DeleteIf removes the key if drop says so of its value (a compare and
// delete), and tells whether it did.
func (c *lru[K, V]) DeleteIf(k K, drop func(V) bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[k]
	if !ok || !drop(it.val) {
		return false
	}
	c.unlink(it)
	delete(c.items, k)
	return true
}

// DeleteFunc removes every entry drop says so of.
func (c *lru[K, V]) DeleteFunc(drop func(K, V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, it := range c.items {
		if drop(k, it.val) {
			c.unlink(it)
			delete(c.items, k)
		}
	}
}

// Len is the number of entries.
func (c *lru[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

func (c *lru[K, V]) unlink(it *lruItem[K, V]) {
	it.prev.next, it.next.prev = it.next, it.prev
	it.prev, it.next = nil, nil
}

func (c *lru[K, V]) pushFront(it *lruItem[K, V]) {
	it.prev, it.next = &c.ring, c.ring.next
	c.ring.next.prev = it
	c.ring.next = it
}
