package coordination

import "sync"

// held is a map whose entries live exactly while someone holds them: acquire
// finds the key's entry (or makes a zero one) and counts its holder,
// release lets one holder go, and the last release removes the entry. It is
// for what must be one per session while in use (a session's start mutex,
// its queue of status.json writes) and must not outlive its use: it holds
// no more entries than there are holders. The zero value is ready to use.
type held[K comparable, T any] struct {
	mu sync.Mutex
	m  map[K]*heldEntry[T]
}

type heldEntry[T any] struct {
	val     T
	holders int
}

// acquire returns the key's entry, made if there is none, and holds it
// until the matching release. The pointer stays valid while held.
func (h *held[K, T]) acquire(k K) *T {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[K]*heldEntry[T]{}
	}
	e := h.m[k]
	if e == nil {
		e = &heldEntry[T]{}
		h.m[k] = e
	}
	e.holders++
	return &e.val
}

// release lets one holder of the key go, removing the entry after the last.
// A release without an acquire is a bug in the caller, and panics rather
// than let a later holder's entry go.
func (h *held[K, T]) release(k K) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.m[k]
	if e == nil {
		panic("coordination: held entry released more times than acquired")
	}
	if e.holders--; e.holders == 0 {
		delete(h.m, k)
	}
}

// len is the number of entries held.
func (h *held[K, T]) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.m)
}
