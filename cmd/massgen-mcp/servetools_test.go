package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
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
