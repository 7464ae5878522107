package coordtest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/coordination/tooling"
	"github.com/massgen-go/massgen-mcp/providers"
)

// Harness is a Service over a memory store whose agents use the providers in
// Providers, keyed by model spec. Its fields are open: a test that needs other
// Options builds its own Service over Store with Open and puts it in Service,
// and the helpers then use that one.
type Harness struct {
	T         testing.TB
	Store     *memstore.Store
	Service   *coordination.Service
	Providers map[string]providers.Provider
}

// New returns a harness over a fresh memory store, its Service running up to
// eight steps at once with the built-in tools, as the binary's services do.
func New(t testing.TB, provs map[string]providers.Provider) *Harness {
	return NewWith(t, provs, coordination.Options{Parallel: 8, Tooling: tooling.Builtin{}})
}

// NewWith returns a harness over a fresh memory store whose Service has opts;
// without an opts.Open, agents open the providers given here.
func NewWith(t testing.TB, provs map[string]providers.Provider, opts coordination.Options) *Harness {
	h := &Harness{T: t, Store: memstore.New(), Providers: provs}
	if opts.Open == nil {
		opts.Open = h.Open
	}
	h.Service = coordination.NewService(h.Store, opts)
	return h
}

// Open is the harness's coordination.Opener: the provider given for the
// spec, or an error naming a spec the test gave none for.
func (h *Harness) Open(sp providers.Spec) (providers.Provider, error) {
	if p, ok := h.Providers[sp.String()]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("no test provider for %s", sp.String())
}

// Create creates a team, asking "What is 2+2?" with seed 1 unless the spec
// says otherwise, and fails the test on an error.
func (h *Harness) Create(spec coordination.TeamSpec) *coordination.Session {
	h.T.Helper()
	if spec.Task == "" {
		spec.Task = "What is 2+2?"
	}
	if spec.Seed == nil {
		seed := int64(1)
		spec.Seed = &seed
	}
	s, err := h.Service.Create(context.Background(), spec)
	if err != nil {
		h.T.Fatal(err)
	}
	return s
}

// Run runs a session to its end and fails the test on an error.
func (h *Harness) Run(id string) *coordination.TeamResult {
	h.T.Helper()
	res, err := h.Service.Run(context.Background(), id, nil)
	if err != nil {
		h.T.Fatal(err)
	}
	return res
}

// Ledger reads a session's ledger from the store and fails the test on an
// error.
func (h *Harness) Ledger(id string) *coordination.Ledger {
	h.T.Helper()
	l, err := h.Store.Ledger(context.Background(), id)
	if err != nil {
		h.T.Fatal(err)
	}
	return l
}

// Alias returns an agent's alias in a session, as its peers' views name it.
func Alias(s *coordination.Session, id string) string { return coordination.Alias(s.Aliases[id]) }

// JSON is v as JSON, for comparing results and printing them in failures.
func JSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
