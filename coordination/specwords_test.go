package coordination_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
	"github.com/massgen-go/massgen-mcp/providers/keys"
)

// A missing key or an uninstalled CLI reads as what it is, not as "invalid
// model spec: …": the spec is fine, the machine lacks the key or the
// program. The class stays ErrBadSpec (and the cause's), which the CLI's
// exit code and MCP's codes (missing_key before bad_model_spec) read.
func TestAMissingKeyOrCLIIsNotCalledAnInvalidSpec(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CODEX_BIN", "")
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: func(sp providers.Spec) (providers.Provider, error) {
		if sp.Backend == "claude" {
			return nil, keyless("claude")
		}
		return backends.Open(sp)
	}})
	for _, tc := range []struct {
		name   string
		models []string
		start  string
		is     error
	}{
		{"one missing key", []string{"claude/claude-haiku-4-5", "sim"}, "agent agent_a (claude/claude-haiku-4-5): claude needs an API key", keys.ErrMissingKey},
		{"two missing keys", []string{"claude/claude-haiku-4-5", "claude/claude-haiku-4-5", "sim"}, "2 agents have no key here", keys.ErrMissingKey},
		{"an uninstalled CLI", []string{"codex", "sim"}, "agent agent_a (codex/", backends.ErrUnavailable},
	} {
		_, err := svc.Create(t.Context(), coordination.TeamSpec{Task: "x", Models: tc.models})
		if err == nil || !strings.HasPrefix(err.Error(), tc.start) || strings.Contains(err.Error(), "invalid model spec") {
			t.Errorf("%s: got %v, want it to start %q and not call the spec invalid", tc.name, err, tc.start)
		}
		if !errors.Is(err, coordination.ErrBadSpec) || !errors.Is(err, tc.is) {
			t.Errorf("%s: %v is no longer ErrBadSpec and %v", tc.name, err, tc.is)
		}
	}
	_, err := svc.Criteria(t.Context(), coordination.CriteriaRequest{Task: "x", Model: "claude/claude-haiku-4-5"})
	if want := "claude/claude-haiku-4-5 cannot write criteria: claude needs an API key"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("criteria by a keyless model: got %v, want it to start %q", err, want)
	}
	if !errors.Is(err, coordination.ErrBadSpec) || !errors.Is(err, keys.ErrMissingKey) {
		t.Errorf("criteria by a keyless model: %v is no longer ErrBadSpec and ErrMissingKey", err)
	}
}
