package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// fakeProvidersCommand serves the fake provider APIs on loopback, so that
// massgen-mcp itself (or any client) can be run against them through the
// base-URL variables — a full offline rehearsal with the real SDKs.
func fakeProvidersCommand() *cobra.Command {
	var listen, script string
	var printEnv bool
	cmd := &cobra.Command{
		Use:   "fake-providers [--print-env] [--listen 127.0.0.1:0] [--script replies.json]",
		Short: "Serve fake OpenAI, Anthropic and Gemini APIs on loopback for offline runs and tests",
		Long: `Serve protocol-faithful fakes of the OpenAI (Chat Completions, Responses),
Anthropic Messages and Gemini generateContent APIs, streaming included, and of the
same APIs as the coding CLIs (codex, claude_code, gemini_cli) meet them. It prints
shell exports: every backend's base-URL variable pointed at it, a dummy key for
every key variable, and CODEX_HOME holding a Codex config whose model provider is
the fake; Gemini CLI's API-key auth is in the printed temporary HOME. Eval them,
then 'massgen-mcp run --models openai/gpt-5-mini,claude/claude-haiku-4-5,…' runs
offline through the real SDKs and CLIs ('massgen-mcp run --rehearse' does all of
this in one process). With --print-env it serves in the background and exits once
the exports are printed: eval "$(massgen-mcp fake-providers --print-env)", and
kill $MASSGEN_FAKES_PID when done (its temporary HOME goes with it). Unscripted, each CLI writes rehearsal.md and answers, API
agents answer, and all vote for the first answer. A script file scripts replies
per model:
{"models": {"gpt-5-mini": [{"kind": "new_answer", "content": "…"}]},
 "always": {"grok-4": {"kind": "status", "status": 500}}}.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s := rehearsalScript()
			if script != "" {
				data, err := flagFile("--script", script, `a JSON file of scripted replies ({"models": {…}, "always": {…}})`)
				if err != nil {
					return err
				}
				var f fake.ScriptFile
				if err := json.Unmarshal(data, &f); err != nil {
					return fmt.Errorf("%w: %s is not a script ({\"models\": {…}, \"always\": {…}}): %w", coordination.ErrBadInput, script, err)
				}
				s.Load(f)
			}
			if printEnv {
				return fakesInBackground(cmd.OutOrStdout(), listen, script)
			}
			r, err := startRehearsal(listen, s, nil)
			if err != nil {
				return err
			}
			printRehearsalEnv(cmd.OutOrStdout(), r)
			fmt.Fprintln(cmd.OutOrStdout(), envEnd)
			<-cmd.Context().Done()
			return r.Close()
		},
	}
	cmd.Flags().BoolVar(&printEnv, "print-env", false, "serve in the background and print only the exports (and MASSGEN_FAKES_PID), for eval \"$(massgen-mcp fake-providers --print-env)\"")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "loopback address to serve on")
	cmd.Flags().StringVar(&script, "script", "", "JSON file of scripted replies per model")
	return cmd
}

// envEnd ends the exports fake-providers prints, so that --print-env knows
// the server is up.
const envEnd = "# end of exports"

// fakesInBackground starts this binary's fake-providers as a process of its
// own session (it outlives this one and the shell's $(…)), copies its
// exports to out once it serves, adds its pid, and returns.
func fakesInBackground(out io.Writer, listen, script string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find this binary to serve the fakes in the background: %w", err)
	}
	args := []string{"fake-providers", "--listen", listen}
	if script != "" {
		abs, err := filepath.Abs(script)
		if err != nil {
			return fmt.Errorf("%w: %w", coordination.ErrBadInput, err)
		}
		args = append(args, "--script", abs)
	}
	child := exec.Command(self, args...)
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stdout, err := child.StdoutPipe()
	if err != nil {
		return err
	}
	// Its stderr is a file, not a pipe: a pipe would break when this process
	// exits, and a write to it would then kill the server.
	stderr, err := os.CreateTemp("", "massgen-fakes-*.log")
	if err != nil {
		return err
	}
	defer os.Remove(stderr.Name())
	defer stderr.Close()
	child.Stderr = stderr
	if err := child.Start(); err != nil {
		return fmt.Errorf("cannot start the fakes in the background: %w", err)
	}
	var exports strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if sc.Text() == envEnd {
			fmt.Fprint(out, exports.String())
			fmt.Fprintf(out, "export MASSGEN_FAKES_PID=%d  # kill $MASSGEN_FAKES_PID stops the fakes and removes their temporary HOME\n", child.Process.Pid)
			return child.Process.Release()
		}
		exports.WriteString(sc.Text() + "\n")
	}
	err = child.Wait()
	msg, _ := os.ReadFile(stderr.Name())
	return fmt.Errorf("the fakes did not start (%v): %s", err, strings.TrimSpace(string(msg)))
}
