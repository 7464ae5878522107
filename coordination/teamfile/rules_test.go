package teamfile

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// ruleSamples holds a valid value for every rule, as a team file writes it.
var ruleSamples = map[string]string{
	"consensus": "majority", "max_rounds": "4", "max_answers_per_agent": "2", "timeout_seconds": "600",
	"step_timeout_seconds": "120", "cost_budget_usd": "0.5", "token_budget": "100000", "max_agent_failures": "2",
	"final": "winner", "answer_format": "short", "early_stop": "true\n  answer_format: short", "aliases": "alphabetical",
	"rotate_own_last": "false", "blind_first": "true", "peer_answer_token_cap": "2000",
	"max_tool_calls_per_step": "5", "strict": "true",
	"weights":       "\n    - agent_id: agent_a\n      weight: 1.5\n  consensus: weighted\n  answer_format: short",
	"dominant_stop": "true\n  consensus: weighted\n  answer_format: short",
}

// TestEveryRuleIsSettableInATeamFile pins that each rule of
// coordination.Rules, and each one README lists as settable under rules:,
// is read from a team file rather than refused as unknown.
func TestEveryRuleIsSettableInATeamFile(t *testing.T) {
	names := map[string]bool{}
	rt := reflect.TypeFor[coordination.Rules]()
	for i := range rt.NumField() {
		names[strings.Split(rt.Field(i).Tag.Get("yaml"), ",")[0]] = true
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	para := regexp.MustCompile("(?s)Every rule of the protocol \\((.*?)\\) can be set under `rules:`").FindSubmatch(readme)
	if para == nil {
		t.Fatal("README no longer lists the rules settable under rules:; update this test with it")
	}
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllSubmatch(para[1], -1) {
		names[string(m[1])] = true
	}
	for name := range names {
		value, ok := ruleSamples[name]
		if name == "labels" {
			value, ok = "random", true // the old name of aliases
		}
		if !ok {
			t.Errorf("rule %s has no sample value in this test", name)
			continue
		}
		if _, err := parse(t, "agents:\n  - model: sim\nrules:\n  "+name+": "+value+"\n", Options{}); err != nil {
			t.Errorf("rules: %s: %s is refused: %v", name, value, err)
		}
	}
}

// TestMaxToolCallsPerStepReachesTheRules pins README's example: a team
// file's max_tool_calls_per_step is the session's rule.
func TestMaxToolCallsPerStepReachesTheRules(t *testing.T) {
	team := mustParse(t, "agents:\n  - model: sim\nrules:\n  max_tool_calls_per_step: 5\n")
	if team.Rules.MaxToolCallsPerStep != 5 {
		t.Fatalf("max_tool_calls_per_step = %d, want 5", team.Rules.MaxToolCallsPerStep)
	}
}
