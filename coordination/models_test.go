package coordination

import (
	"errors"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/sim"
)

// TestModelsOpenOnceBySpecAndKeepTheGrantApart: an agent's provider is
// found again without parsing its spec (byAgent), yet two model texts of
// one spec still share one opened provider, another key grant never does,
// and a spec that does not parse is refused every time, never kept.
func TestModelsOpenOnceBySpecAndKeepTheGrantApart(t *testing.T) {
	opens := map[string]int{}
	ms := newModels(func(sp providers.Spec) (providers.Provider, error) {
		opens[sp.String()]++
		return sim.New(sp)
	})
	plain := Agent{Model: "sim"}
	sameSpec := Agent{Model: " sim "} // parses to the same spec as "sim"
	granted := Agent{Model: "sim", Operator: true, KeyEnv: "DUMMY_KEY_ENV"}
	p1, err := ms.agent(plain)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if p, err := ms.agent(plain); err != nil || p != p1 {
			t.Fatalf("the same agent found another provider (%v)", err)
		}
	}
	if p, err := ms.agent(sameSpec); err != nil || p != p1 {
		t.Errorf("a model text of the same spec opened another provider (%v)", err)
	}
	if p, err := ms.agent(granted); err != nil || p == p1 {
		t.Errorf("an agent with a key grant shares the provider of one without (%v)", err)
	}
	if got := opens[providers.Spec{Backend: "sim", Model: providers.SimProfileDefault}.String()]; got != 2 {
		t.Errorf("the sim spec was opened %d times; want 2 (once per grant): %v", got, opens)
	}
	for range 2 {
		if _, err := ms.agent(Agent{Model: "nosuchbackend/x"}); !errors.Is(err, ErrBadSpec) {
			t.Errorf("an unknown backend gave %v; want ErrBadSpec", err)
		}
	}
	if n := ms.byAgent.Len(); n != 3 {
		t.Errorf("byAgent keeps %d agents; want the 3 that opened", n)
	}
}
