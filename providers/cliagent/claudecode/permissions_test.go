package claudecode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

func withRules(r cliagent.Run, role permissions.Role) cliagent.Run {
	r.Permissions = &cliagent.Permissions{Mode: permissions.Coarse(permissions.Rules{Role: role}), PromptTool: "permission_prompt"}
	return r
}

func TestWithRulesEveryToolCallAsksThePromptToolAndNoShellOutsideTheSandbox(t *testing.T) {
	inv, _ := CLI{}.Invocation(withRules(run(), permissions.ReadOnly))
	args := strings.Join(inv.Args, " ")
	for _, want := range []string{"--permission-mode default --permission-prompt-tool mcp__workflow__permission_prompt --disallowedTools Bash",
		"--allowedTools mcp__workflow__new_answer,mcp__workflow__vote "} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	r := withRules(run(), permissions.Workspace)
	r.Sandboxed = true
	args = strings.Join(invocationArgs(t, r), " ")
	if strings.Contains(args, "acceptEdits") || strings.Contains(args, "Bash") {
		t.Errorf("in the sandbox with rules the shell is the prompt tool's to decide: %q", args)
	}
}

func invocationArgs(t *testing.T, r cliagent.Run) []string {
	inv, err := CLI{}.Invocation(r)
	if err != nil {
		t.Fatal(err)
	}
	return inv.Args
}

func TestThePromptToolsQuestionsAndAnswers(t *testing.T) {
	cases := []struct{ payload, want string }{
		{`{"tool_name":"Bash","input":{"command":"git push origin main"},"tool_use_id":"t1"}`, "exec(git push origin main) git(push origin main)"},
		{`{"tool_name":"Edit","input":{"file_path":"/workspace/a.go","old_string":"","new_string":"x"}}`, "write(a.go)"},
		{`{"tool_name":"Read","input":{"file_path":"/home/agent/.ssh/id_rsa"}}`, "read(/home/agent/.ssh/id_rsa)"},
		{`{"tool_name":"WebFetch","input":{"url":"https://pkg.go.dev/x","prompt":"p"}}`, "net(pkg.go.dev)"},
		{`{"tool_name":"mcp__fs__read","input":{}}`, "mcp(fs/read)"},
		{`{"tool_name":"mcp__workflow__new_answer","input":{"content":"x"}}`, ""},
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
	if _, _, err := (CLI{}).Question(json.RawMessage(`{"input":{}}`), "/workspace"); err == nil {
		t.Error("a question without a tool must be refused")
	}
	q := json.RawMessage(`{"tool_name":"Edit","input":{"file_path":"a"}}`)
	if got := (CLI{}).Answer(q, true, ""); got != `{"behavior":"allow","updatedInput":{"file_path":"a"}}` {
		t.Errorf("allow = %s", got)
	}
	if got := (CLI{}).Answer(q, false, "no writes"); got != `{"behavior":"deny","message":"no writes"}` {
		t.Errorf("deny = %s", got)
	}
}
