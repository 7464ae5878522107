package sandbox

import (
	"fmt"
	"strings"
	"sync"
)

// capped keeps the first and last halves of what is written past its cap.
type capped struct {
	mu      sync.Mutex
	cap     int
	head    []byte
	tail    []byte // a ring of cap-len(head) bytes once head is full
	pos     int    // next write position in tail once it is full
	dropped int64
}

func newCapped(n int) *capped { return &capped{cap: n} }

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	headCap := c.cap / 2
	if room := headCap - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	tailCap := c.cap - headCap
	for len(p) > 0 {
		if len(c.tail) < tailCap {
			k := min(tailCap-len(c.tail), len(p))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := min(tailCap-c.pos, len(p))
		copy(c.tail[c.pos:], p[:k])
		c.dropped += int64(k)
		c.pos = (c.pos + k) % tailCap
		p = p[k:]
	}
	return n, nil
}

// String is what was kept, with a marker where bytes were dropped.
func (c *capped) String() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := append(append([]byte{}, c.tail[c.pos:]...), c.tail[:c.pos]...)
	if c.dropped == 0 {
		return strings.ToValidUTF8(string(c.head)+string(tail), "\uFFFD"), false
	}
	return strings.ToValidUTF8(fmt.Sprintf("%s\n[… %d bytes of output cut here …]\n%s", c.head, c.dropped, tail), "\uFFFD"), true
}
