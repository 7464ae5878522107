package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"time"

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
Anthropic Messages and Gemini generateContent APIs, streaming included. It prints
shell exports pointing every backend's base-URL variable at it; with dummy keys
set, 'massgen-mcp run --models openai/gpt-5-mini,claude/claude-haiku-4-5,…' then
runs offline through the real SDKs. A script file scripts replies per model:
{"models": {"gpt-5-mini": [{"kind": "new_answer", "content": "…"}]},
 "always": {"grok-4": {"kind": "status", "status": 500}}}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s := fake.NewScript()
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
			host, _, err := net.SplitHostPort(listen)
			if err != nil || !net.ParseIP(host).IsLoopback() {
				return fmt.Errorf("%w: --listen %q must be a loopback address such as 127.0.0.1:0", coordination.ErrBadInput, listen)
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			root := "http://" + ln.Addr().String()
			env := fake.BaseURLs(root)
			names := make([]string, 0, len(env))
			for k := range env {
				names = append(names, k)
			}
			sort.Strings(names)
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "# fake provider APIs at %s; paste these into your shell, plus dummy keys (e.g. OPENAI_API_KEY=sk-fake)\n", root)
			for _, k := range names {
				fmt.Fprintf(out, "export %s=%s\n", k, env[k])
			}
			srv := &http.Server{Handler: fake.NewAll(s), ReadHeaderTimeout: 10 * time.Second}
			go func() {
				<-cmd.Context().Done()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				_ = srv.Shutdown(ctx)
			}()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "loopback address to serve on")
	cmd.Flags().StringVar(&script, "script", "", "JSON file of scripted replies per model")
	return cmd
}
