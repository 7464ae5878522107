package chatapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
)

// The chat endpoint's model names a team (the default, of API models, or an
// operator's team file), never a model spec: a client naming a coding-agent
// CLI there, which would run a shell holding the operator's key and login,
// is refused as a model this server does not have, and no CLI runs.
func TestAChatClientCannotNameACLIAgent(t *testing.T) {
	ran := clitest.CallingCLIs(t)
	c := serve(t).client(tokenA)
	for _, model := range []string{"codex/gpt-5.4", "claude_code", "gemini_cli", "massgen/codex", "codex,sim"} {
		_, err := c.Chat.Completions.New(context.Background(), ask(model, "What is 6 * 7?"))
		e := wantAPIError(t, model, err, http.StatusNotFound, "model_not_found")
		if !strings.Contains(e.Message, "a model names a team") || !strings.Contains(e.Message, "--teams-dir") {
			t.Errorf("%s: the refusal says %q", model, e.Message)
		}
	}
	if ran() {
		t.Fatal("a CLI agent named by a chat client ran")
	}
}
