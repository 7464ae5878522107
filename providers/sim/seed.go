package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// key accumulates the inputs of a decision and hashes them (SHA-256). Every
// field is length- or width-prefixed, so ("ab","c") and ("a","bc") never
// collide. The inputs are gathered in one buffer and hashed once, on the
// first draw: a step key takes in every answer shown, and writing each to a
// streaming hash copied it first.
type key struct {
	buf    []byte
	sum    [sha256.Size]byte
	summed bool
}

func newKey(purpose string) *key { return newSizedKey(purpose, 256) }

// newSizedKey is newKey with room for size bytes of inputs, so a key that
// takes in long texts is not copied as its buffer grows.
func newSizedKey(purpose string, size int) *key {
	k := &key{buf: make([]byte, 0, size)}
	k.str(purpose)
	return k
}

func (k *key) str(s string) *key {
	k.buf = binary.LittleEndian.AppendUint64(k.buf, uint64(len(s)))
	k.buf = append(k.buf, s...)
	k.summed = false
	return k
}

func (k *key) int(v int64) *key {
	k.buf = binary.LittleEndian.AppendUint64(k.buf, uint64(v))
	k.summed = false
	return k
}

func (k *key) digest() [sha256.Size]byte {
	if !k.summed {
		k.sum, k.summed = sha256.Sum256(k.buf), true
	}
	return k.sum
}

func (k *key) bool(b bool) *key {
	if b {
		return k.int(1)
	}
	return k.int(0)
}

// rand derives an independent generator for one named decision: the same key
// and name always give the same stream, and different names never share one,
// so adding a draw to one decision never shifts another.
func (k *key) rand(name string) *rand.Rand {
	d := k.digest()
	var in [sha256.Size + 32]byte
	sum := sha256.Sum256(append(append(in[:0], d[:]...), name...))
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[0:8]), binary.LittleEndian.Uint64(sum[8:16])))
}

func hashString(parts ...string) uint64 {
	k := newKey("string")
	for _, p := range parts {
		k.str(p)
	}
	sum := k.digest()
	return binary.LittleEndian.Uint64(sum[:8])
}

// stepKey is everything a step's decision may depend on (docs/DESIGN.md, "Backends and the simulated agents"): the
// session seed, the spec seed, who acts and when, the attempt, what it is
// shown and what it may do. The same view always gives the same decision.
func stepKey(req *providers.Request, specSeed int64) *key {
	size := 256 + len(req.Task) + len(req.VoteEnum)*12
	for _, a := range req.Shown {
		size += 24 + len(a.Alias) + len(a.Label) + len(a.Content)
	}
	k := newSizedKey("step", size).int(req.SessionSeed).int(specSeed).str(req.AgentID).str(req.Self).
		int(int64(req.StepNumber)).int(int64(req.Attempt)).str(string(req.Purpose)).bool(req.Revote).str(req.Task)
	tools := make([]string, len(req.Tools))
	for i, t := range req.Tools {
		tools[i] = t.Name
	}
	slices.Sort(tools)
	k.str(strings.Join(tools, ","))
	k.int(int64(len(req.Shown)))
	for _, a := range req.Shown {
		k.str(a.Alias).str(a.Label).str(a.Content)
	}
	k.str(strings.Join(req.VoteEnum, ","))
	return k
}

// itemKey fixes an agent's first answer to a task for a session: a blind step
// retried after an error, or asked again, gives the same value.
func itemKey(req *providers.Request, specSeed int64) *key {
	return newKey("item").int(req.SessionSeed).int(specSeed).str(req.AgentID).str(strings.TrimSpace(req.Task))
}
