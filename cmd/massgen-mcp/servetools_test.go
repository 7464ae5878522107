package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/mcp"
)

func TestServeRefusesAnUnknownToolSelection(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		from string
	}{
		{[]string{"serve", "--memory", "--tools", "run,review_team"}, "", "--tools"},
		{[]string{"serve", "--memory"}, "host,nope", "MASSGEN_MCP_TOOLS"},
	} {
		t.Setenv("MASSGEN_MCP_TOOLS", tc.env)
		out, code := cli(t, tc.args...)
		if code != exitBadInput || !strings.Contains(out, tc.from) || !strings.Contains(out, "groups: run (run_team, team_status, cancel_team, apply_changes)") {
			t.Errorf("%v with MASSGEN_MCP_TOOLS=%q: exit %d: %s", tc.args, tc.env, code, out)
		}
	}
}

// TestServeOffersOnlyTheSelectedTools: serve --tools, over stdio as a
// client starts it; the flag wins over the environment.
func TestServeOffersOnlyTheSelectedTools(t *testing.T) {
	t.Parallel() // a process-level test: it waits on processes, beside the others (Makefile unit)
	bin := serveBinary(t)
	cmd := exec.Command(bin, "serve", "--memory", "--tools", "run_team,team_status")
	cmd.Env = append(cmd.Environ(), "MASSGEN_MCP_TOOLS=host")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m struct {
			ID     int `json:"id"`
			Result struct {
				Tools []struct{ Name string }
			}
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID != 2 {
			continue
		}
		var names []string
		for _, tool := range m.Result.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"run_team", "team_status"}) {
			t.Errorf("tools/list: %v, want run_team and team_status", names)
		}
		stdin.Close()
		_ = cmd.Wait()
		return
	}
	t.Fatal("no tools/list result")
}

// TestServeHelpSaysWhatTheServerOffers: serve --help names each tool group
// with the tools the selection gives it (made from the same table, so
// run's apply_changes, or any tool added later, is there) and every
// endpoint --http serves: /mcp, /healthz, /metrics, the web view at /ui/
// and the OpenAI-compatible /v1.
func TestServeHelpSaysWhatTheServerOffers(t *testing.T) {
	out, code := cli(t, "serve", "--help")
	if code != 0 {
		t.Fatalf("serve --help: exit %d\n%s", code, out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{mcp.ToolGroups(), "run (run_team, team_status, cancel_team, apply_changes)", "/mcp", "/healthz", "/metrics", "/ui/", "/v1/chat/completions"} {
		if !strings.Contains(flat, want) {
			t.Errorf("serve --help lacks %q:\n%s", want, out)
		}
	}
	for _, group := range []string{"run", "host", "review", "info"} {
		set, err := mcp.SelectTools([]string{group})
		if err != nil {
			t.Fatal(err)
		}
		_, listed, _ := strings.Cut(flat, " "+group+" (")
		listed, _, _ = strings.Cut(listed, ")")
		got := strings.Split(listed, ", ")
		slices.Sort(got)
		want := set.Names()
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("serve --help lists group %s as %v; the selection gives it %v:\n%s", group, got, want, out)
		}
	}
}
