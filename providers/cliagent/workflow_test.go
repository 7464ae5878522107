package cliagent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

func TestCheckShape(t *testing.T) {
	tools := testTools()
	cases := []struct {
		tool, args, want string
	}{
		{"new_answer", `{"content":"x"}`, ""},
		{"new_answer", `{"content":"  "}`, "content is empty"},
		{"new_answer", `{}`, `needs "content"`},
		{"new_answer", `{"content":3}`, "must be a JSON string"},
		{"new_answer", `"x"`, "takes a JSON object"},
		{"vote", `{"agent_id":"agent2","reason":"r"}`, ""},
		{"vote", `{"agent_id":"agent3","reason":"r"}`, `must be one of "agent1", "agent2"`},
		{"vote", `{"agent_id":"agent1"}`, `needs "reason"`},
	}
	for _, c := range cases {
		i := 0
		if c.tool == "vote" {
			i = 1
		}
		got := checkShape(tools[i], json.RawMessage(c.args))
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s %s: %q, want %q", c.tool, c.args, got, c.want)
		}
	}
}

func TestStepSocketIsPrivateAndTakesOneCall(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	w, err := listenWorkflow(base, testTools()[:1], nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if filepath.Dir(w.dir) != base {
		t.Errorf("run directory %s is not under the agent's directory %s", w.dir, base)
	}
	long := filepath.Join(base, strings.Repeat("x", 90))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	w2, err := listenWorkflow(long, testTools()[:1], nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(w2.dir, long) || len(w2.socket) > 104 {
		t.Errorf("a socket path of %d bytes under a long agent directory: %s", len(w2.socket), w2.socket)
	}
	w2.close()
	for path, want := range map[string]os.FileMode{w.dir: 0o700, w.socket: 0o600} {
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != want {
			t.Fatalf("%s: mode %v, %v; want %v", path, st.Mode().Perm(), err, want)
		}
	}
	ctx := t.Context()
	v, err := relay.Ask(ctx, w.socket, relay.Call{Tool: "vote", Arguments: json.RawMessage(`{}`)})
	if err != nil || v.Accepted || !strings.Contains(v.Message, "not offered") {
		t.Fatalf("a tool not offered: %+v %v", v, err)
	}
	v, err = relay.Ask(ctx, w.socket, relay.Call{Tool: "new_answer", Arguments: json.RawMessage(`{"content":"a"}`)})
	if err != nil || !v.Accepted {
		t.Fatalf("%+v %v", v, err)
	}
	v, _ = relay.Ask(ctx, w.socket, relay.Call{Tool: "new_answer", Arguments: json.RawMessage(`{"content":"b"}`)})
	if v.Accepted || !strings.Contains(v.Message, "already submitted") {
		t.Fatalf("a second call: %+v", v)
	}
	if c := w.landedCall(); c == nil || string(c.Args) != `{"content":"a"}` {
		t.Fatalf("landed = %+v", c)
	}
}

func TestChildEnvIsAnAllowList(t *testing.T) {
	p := EnvPolicy{Names: []string{"X_KEY"}, Prefixes: []string{"X_"}, Defaults: map[string]string{"X_TELEMETRY": "0", "X_UPDATE": "off"}}
	got := childEnv([]string{"PATH=/bin", "SECRET=s", "X_KEY=k", "X_UPDATE=on", "HOME=/root", "https_proxy=p"}, p, map[string]string{"HOME": "/agent"})
	want := "PATH=/bin X_KEY=k X_UPDATE=on https_proxy=p X_TELEMETRY=0 HOME=/agent"
	if strings.Join(got, " ") != want {
		t.Fatalf("got %v\nwant %s", got, want)
	}
}
