package codex

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

func TestTheRulesPickCodexsSandboxNetworkAndHook(t *testing.T) {
	cases := []struct {
		rules permissions.Rules
		want  string
	}{
		{permissions.Rules{Role: permissions.ReadOnly}, "--sandbox read-only -c sandbox_workspace_write.network_access=false"},
		{permissions.Rules{Role: permissions.Workspace}, "--sandbox workspace-write -c sandbox_workspace_write.network_access=false"},
		{permissions.Rules{Role: permissions.Builder}, "--sandbox workspace-write -c sandbox_workspace_write.network_access=true"},
		{permissions.Rules{Role: permissions.Builder, Deny: []string{"net(evil.example)"}}, "network_access=false"}, // a partial rule: per call only with no net
	}
	for _, c := range cases {
		r := run()
		r.Permissions = &cliagent.Permissions{Mode: permissions.Coarse(c.rules), Hook: []string{"/opt/m g/massgen-mcp", "workflow-server", "--view", "/w/run/view.json", "--hook"}}
		inv, err := CLI{}.Invocation(r)
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Join(inv.Args, " ")
		if !strings.Contains(args, c.want) || strings.Count(args, "--sandbox") != 1 {
			t.Errorf("%+v: args %q lack %q", c.rules, args, c.want)
		}
		m := regexp.MustCompile(`--dangerously-bypass-hook-trust -c features.codex_hooks=true -c hooks.PreToolUse=\[\{hooks=\[\{type="command",timeout=(\d+),command="'/opt/m g/massgen-mcp' 'workflow-server' '--view' '/w/run/view.json' '--hook'"\}\]\}\]`).FindStringSubmatch(args)
		if m == nil {
			t.Fatalf("no hook: %q", args)
		}
		// Codex runs a call whose hook timed out: the hook must answer
		// first, after the longest approval a person may be given.
		secs, _ := strconv.Atoi(m[1])
		if hook := time.Duration(secs) * time.Second; hook <= relay.GateTimeout || relay.GateTimeout <= permissions.MaxApprovalTimeout {
			t.Errorf("the hook's timeout %v is not longer than the relay's wait %v, longer than the longest approval %v", hook, relay.GateTimeout, permissions.MaxApprovalTimeout)
		}
	}
	inv, _ := CLI{}.Invocation(run())
	if args := strings.Join(inv.Args, " "); !strings.Contains(args, "--sandbox workspace-write") || strings.Contains(args, "hook") {
		t.Errorf("without rules: %q", args)
	}
}

func TestTheHooksQuestionsAndAnswers(t *testing.T) {
	cases := []struct{ payload, want string }{
		{`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"curl https://example.com"}}`, "exec(curl https://example.com) net(example.com)"},
		{`{"tool_name":"shell","tool_input":{"command":["bash","-lc","npm publish"]}}`, "exec(npm publish) publish(npm)"},
		{`{"tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: /w/ws/a.txt\n+x\n*** Update File: /etc/hosts\n*** End Patch"}}`, "write(a.txt) write(/etc/hosts)"},
		{`{"tool_name":"mcp__fs__write","tool_input":{}}`, "mcp(fs/write)"},
		{`{"tool_name":"mcp__workflow__vote","tool_input":{}}`, ""},
	}
	for _, c := range cases {
		_, acts, err := CLI{}.Question(json.RawMessage(c.payload), "/w/ws")
		var got []string
		for _, a := range acts {
			got = append(got, a.String())
		}
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("%s: %v %v, want %s", c.payload, got, err, c.want)
		}
	}
	if got := (CLI{}).Answer(nil, true, ""); got != "" {
		t.Errorf("allow = %q; Codex takes no allow", got)
	}
	if got := (CLI{}).Answer(nil, false, "no"); got != `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}` {
		t.Errorf("deny = %s", got)
	}
}
