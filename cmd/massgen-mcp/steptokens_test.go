package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/tooling"
	"github.com/massgen-go/massgen-mcp/providers/backends"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/keys"
)

// peerInput is the peer consensus server's input tokens for a three-model
// team answering a three-sentence question on the same fakes: issue 29's
// measurement (item 6), not one made here. The goals are 0.8× of it with
// the default rules and 0.3× with short answers and early stop.
const peerInput = 5149

// threeSentences is the question of the comparison: three
// sentences, no file to read or write.
const threeSentences = "A farmer has 17 sheep. All but 9 run away. How many sheep does the farmer have left?"

// teamInput runs a three-agent team (OpenAI, Anthropic, Gemini fakes, each
// counting a request's input tokens from its body as the real APIs would
// bill it) on a file store with the built-in tooling, and returns the input
// tokens the team sent and the result.
func teamInput(t *testing.T, task string, rules coordination.Rules, opts coordination.Options) (int64, *coordination.TeamResult) {
	t.Helper()
	srv := httptest.NewServer(fake.NewAll(fake.NewScript()))
	defer srv.Close()
	vars := map[string]string{}
	for k, v := range plantedKeys {
		vars[k] = v
	}
	for k, v := range fake.BaseURLs(srv.URL) {
		vars[k] = v
	}
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	cfg := backends.Config{Env: func() *keys.Env { return keys.FromMap(vars) }, HTTPClient: &http.Client{Transport: transport}}
	opts.Open, opts.Parallel, opts.Tooling = cfg.Open, 3, tooling.Builtin{}
	svc := coordination.NewService(filestore.New(t.TempDir()), opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	seed := int64(1)
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: task, Models: []string{"openai/gpt-5-mini", "claude/claude-haiku-4-5", "gemini/gemini-2.5-flash"}, Seed: &seed, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != coordination.StatusFinished {
		t.Fatalf("the team ended %s", res.Status)
	}
	return res.Usage.Input, res
}

// TestStepInputTokensAgainstThePeer measures what a three-agent team sends
// for a three-sentence question, and holds it to issue 29's goals against
// the peer's figure: the default rules at most 0.8× the peer's input
// tokens, short answers with early stop at most 0.3×. A build task, which
// is offered the workspace tools, is measured and logged beside them (with
// run_command only where bubblewrap runs: some 240 tokens a call more).
func TestStepInputTokensAgainstThePeer(t *testing.T) {
	shortEarly := coordination.Rules{AnswerFormat: coordination.FormatShort, EarlyStop: true}
	for _, c := range []struct {
		name  string
		task  string
		rules coordination.Rules
		limit float64 // × peerInput; 0: measured only
		tools string  // how the result's workspace_tools starts
	}{
		{"default", threeSentences, coordination.Rules{}, 0.8, "off (a question with no context)"},
		{"short+early", threeSentences, shortEarly, 0.3, "off (a question with no context)"},
		{"build task", "Build a small landing page for my bakery, with the opening hours and a contact form. Keep it to one HTML file. Make it look warm.", coordination.Rules{}, 0, "on (a build task"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, res := teamInput(t, c.task, c.rules, coordination.Options{})
			t.Logf("%s: %d input tokens in %d steps (%.2f× the peer's %d); workspace_tools: %s", c.name, in, res.Steps, float64(in)/peerInput, peerInput, res.WorkspaceTools)
			if !strings.HasPrefix(res.WorkspaceTools, c.tools) {
				t.Errorf("workspace_tools %q; want %s…", res.WorkspaceTools, c.tools)
			}
			if c.limit > 0 && float64(in) > c.limit*peerInput {
				t.Errorf("%s sent %d input tokens, above %.1f× the peer's %d (%.0f)", c.name, in, c.limit, peerInput, c.limit*peerInput)
			}
		})
	}
}
