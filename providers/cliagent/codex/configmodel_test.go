package codex

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

const thread = "0199aaaa-bbbb-cccc-dddd-eeeeeeeeeeee"

// codexHome is a CODEX_HOME whose config.toml is config.
func codexHome(t *testing.T, config string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// TestARunWithNoModelConfiguredIsPricedByTheModelItsConfigNames: codex
// exec's stream names no model, so a run of an agent given none (Codex's
// config.toml chooses it) was priced with no model: no price, and the cost
// budget did not bind on it. It is priced by the model config.toml names;
// with none named its cost stays unknown, never a known $0.
func TestARunWithNoModelConfiguredIsPricedByTheModelItsConfigNames(t *testing.T) {
	stream := clitest.Stream(
		`{"type":"thread.started","thread_id":"`+thread+`"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"`+answer+`"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":10329,"cached_input_tokens":2000,"output_tokens":538,"reasoning_output_tokens":100}}`,
	)
	// A table's model (a profile's) is not the one the run uses.
	home := codexHome(t, "# mine\nmodel = \"gpt-5.4\" # the default\n[profiles.cheap]\nmodel = \"gpt-5-mini\"\n")
	_, _, u, err := clitest.ReplayedScript(t, CLI{}, []string{"CODEX_HOME=" + home}, nil, stream)
	if err != nil {
		t.Fatal(err)
	}
	want := pricing.Cost("openai", "gpt-5.4", u)
	if want == nil {
		t.Fatal("gpt-5.4 has no price")
	}
	if u.CostUSD == nil || math.Abs(*u.CostUSD-*want) > 1e-9 {
		t.Fatalf("charged %+v (cost %s); want its usage priced as gpt-5.4, the model config.toml names: $%.4f", u, clitest.Cost(u), *want)
	}

	home = codexHome(t, "[profiles.cheap]\nmodel = \"gpt-5-mini\"\n")
	_, _, u, err = clitest.ReplayedScript(t, CLI{}, []string{"CODEX_HOME=" + home}, nil, stream)
	if err != nil {
		t.Fatal(err)
	}
	if u.Tokens() == 0 || u.CostUSD != nil {
		t.Fatalf("with no model in config.toml charged %+v (cost %s); want its usage at an unknown cost", u, clitest.Cost(u))
	}
}

// TestTheCostBudgetBindsMidRunOnTheModelItsConfigNames: a run of an agent
// given no model, stopped by its cost budget as its rollout reports its
// first model call, where the rollout's usage was priced with no model, so
// the budget bound only when the turn ended.
func TestTheCostBudgetBindsMidRunOnTheModelItsConfigNames(t *testing.T) {
	home := codexHome(t, "model = \"gpt-5.4\"\n")
	day := filepath.Join(home, "sessions", "2026", "12", "07")
	rollout := `{"timestamp":"2026-12-07T05:54:20.191Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":10329,"cached_input_tokens":0,"output_tokens":38,"reasoning_output_tokens":0,"total_tokens":10367},"last_token_usage":{"input_tokens":10329,"cached_input_tokens":0,"output_tokens":38,"reasoning_output_tokens":0,"total_tokens":10367}}}}`
	script := clitest.Stream(`{"type":"thread.started","thread_id":"`+thread+`"}`, `{"type":"turn.started"}`) +
		"mkdir -p " + day + "\necho '" + rollout + "' > " + filepath.Join(day, "rollout-2026-12-07T05-54-19-"+thread+".jsonl") + "\n" +
		"sleep 15\n" + clitest.Stream(
		`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"`+answer+`"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":10329,"cached_input_tokens":0,"output_tokens":38,"reasoning_output_tokens":0}}`)
	// The turn ends 15 s in and the budget must bind within 10 s of the
	// step's start, which includes the script's: a margin a loaded machine
	// (CI's realclis lane beside race builds) needs, within ReplayedScript's
	// 20 s.
	start := time.Now()
	_, _, u, err := clitest.ReplayedScript(t, CLI{}, []string{"CODEX_HOME=" + home}, func(r *providers.Request) {
		r.Spend = &clitest.Budget{Left: 0.001}
	}, script)
	took := time.Since(start)
	t.Logf("took %v, charged %+v (%s), err %v", took, u, clitest.Cost(u), err)
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.ClassBudget || took > 10*time.Second {
		t.Fatalf("after %v: err = %v; want the run stopped by its cost budget as its rollout reported its first call, priced as gpt-5.4, not when its turn ended (15 s)", took, err)
	}
}
