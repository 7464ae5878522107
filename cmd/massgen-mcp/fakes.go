package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// fakeProvidersCommand serves the fake provider APIs on loopback, so that
// massgen-mcp itself (or any client) can be run against them through the
// base-URL variables — a full offline rehearsal with the real SDKs.
func fakeProvidersCommand() *cobra.Command {
	var listen, script string
	cmd := &cobra.Command{
		Use:   "fake-providers [--listen 127.0.0.1:0] [--script replies.json]",
		Short: "Serve fake OpenAI, Anthropic and Gemini APIs on loopback for offline runs and tests",
		Long: `Serve protocol-faithful fakes of the OpenAI (Chat Completions, Responses),
Anthropic Messages and Gemini generateContent APIs, streaming included, and of the
same APIs as the coding CLIs (codex, claude_code, gemini_cli) meet them. It prints
shell exports: every backend's base-URL variable pointed at it, a dummy key for
every key variable, and CODEX_HOME holding a Codex config whose model provider is
the fake; Gemini CLI's API-key auth is in the printed temporary HOME. Eval them,
then 'massgen-mcp run --models openai/gpt-5-mini,claude/claude-haiku-4-5,…' runs
offline through the real SDKs and CLIs ('massgen-mcp run --rehearse' does all of
this in one process). Unscripted, each CLI writes rehearsal.md and answers, API
agents answer, and all vote for the first answer. A script file scripts replies
per model:
{"models": {"gpt-5-mini": [{"kind": "new_answer", "content": "…"}]},
 "always": {"grok-4": {"kind": "status", "status": 500}}}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s := rehearsalScript()
			if script != "" {
				data, err := os.ReadFile(script)
				if err != nil {
					return fmt.Errorf("%w: cannot read the script: %w", coordination.ErrBadInput, err)
				}
				var f fake.ScriptFile
				if err := json.Unmarshal(data, &f); err != nil {
					return fmt.Errorf("%w: %s is not a script ({\"models\": {…}, \"always\": {…}}): %w", coordination.ErrBadInput, script, err)
				}
				s.Load(f)
			}
			r, err := startRehearsal(listen, s, nil)
			if err != nil {
				return err
			}
			printRehearsalEnv(cmd.OutOrStdout(), r)
			<-cmd.Context().Done()
			return r.Close()
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "loopback address to serve on")
	cmd.Flags().StringVar(&script, "script", "", "JSON file of scripted replies per model")
	return cmd
}
