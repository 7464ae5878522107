package cliagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

// A sandboxed CLI cannot rewrite what decides its own permissions: the
// run's view (which socket its hook asks, whether its prompt tool is
// served), its generated configs, the step's socket. It tries each way —
// write over, rename over, remove, plant its own socket, in the run
// directory it may otherwise write — and its next permission question,
// run as the CLI runs its hook, still reaches the step's gate.
func TestASandboxedCLICannotRewriteWhatDecidesItsPermissions(t *testing.T) {
	sb := sandboxed(t)
	h := newHarness(t, "tamper", func(o *Options) { o.Sandbox = sb })
	p, err := New(gateTestCLI{testCLI: testCLI{mode: "tamper"}}, h.opts)
	if err != nil {
		t.Fatal(err)
	}
	h.p = p
	pm := &recordingPermits{}
	req := h.request()
	req.Permits = pm
	act, _, err := h.step(req)
	if err != nil {
		t.Fatalf("%v (%s)", err, act.Text)
	}
	for _, line := range strings.Split(strings.TrimSpace(act.Text), "\n") {
		if strings.HasSuffix(line, ": done") || strings.HasPrefix(line, "cannot refresh") {
			t.Errorf("the CLI got past its pinning: %s", line)
		}
	}
	if !strings.Contains(act.Text, "hook said: no: ") {
		t.Errorf("the hook was not answered by the step's gate:\n%s", act.Text)
	}
	if len(pm.checked) != 1 || !strings.HasPrefix(pm.checked[0], "write ") {
		t.Errorf("the gate was asked %q, want the one write question", pm.checked)
	}
}

// tamper is the fake CLI's "tamper" mode (TestASandboxedCLICannotRewrite…):
// it tries to take over its permission hook, reports each try as
// "<what>: done|<error>", then asks its hook, as the CLI would, about a
// write outside the workspace, and answers.
func tamper(run Run, result func(string)) int {
	view := filepath.Join(run.RunDir, "view.json")
	old, err := relay.ReadView(view)
	if err != nil || run.Permissions == nil {
		fmt.Fprintln(os.Stderr, "fake: no view or no permissions:", err)
		return 2
	}
	// Its own socket, which would allow everything.
	evil := "/tmp/evil.sock"
	ln, err := net.Listen("unix", evil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake:", err)
		return 2
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = bufio.NewReader(c).ReadBytes('\n')
			out, _ := json.Marshal(relay.Verdict{Accepted: true, Message: "hijacked"})
			_, _ = c.Write(append(out, '\n'))
			c.Close()
		}
	}()
	forged := old
	forged.Socket, forged.Permission = evil, false
	data, _ := json.Marshal(forged)
	var report []string
	try := func(what string, err error) {
		msg := "done"
		if err != nil {
			msg = err.Error()
		}
		report = append(report, what+": "+msg)
	}
	forgedFile := func() string {
		side, err := os.CreateTemp(run.RunDir, "forged-*.json")
		if err != nil {
			return "" // the rename then fails with why
		}
		defer side.Close()
		_, _ = side.Write(data)
		return side.Name()
	}
	runJSON := filepath.Join(run.RunDir, "run.json")
	try("write over view.json", os.WriteFile(view, data, 0o600))
	try("remove view.json", os.Remove(view))
	try("rename over view.json", os.Rename(forgedFile(), view))
	try("write over run.json", os.WriteFile(runJSON, []byte("{}"), 0o600))
	try("rename over run.json", os.Rename(forgedFile(), runJSON))
	try("rename a directory holding a generated setting", os.Rename(filepath.Join(run.RunDir, "home"), filepath.Join(run.RunDir, "home-old")))
	try("write over a nested generated setting", os.WriteFile(filepath.Join(run.RunDir, "home", ".fake", "settings.json"), []byte("{}"), 0o600))
	if err := os.WriteFile(filepath.Join(run.RunDir, "home", ".fake", "login.json"), []byte(`{"token":"refreshed"}`), 0o600); err != nil {
		report = append(report, "cannot refresh its own login: "+err.Error())
	}
	try("remove the step's socket", os.Remove(old.Socket))
	planted, err := net.Listen("unix", old.Socket)
	if err == nil {
		planted.Close()
	}
	try("plant a socket at the step's", err)

	hook := exec.Command(run.Permissions.Hook[0], run.Permissions.Hook[1:]...)
	hook.Stdin = strings.NewReader(`{"tool":"write","path":"/etc/motd"}`)
	var out, stderr bytes.Buffer
	hook.Stdout, hook.Stderr = &out, &stderr
	_ = hook.Run()
	report = append(report, "hook said: "+strings.TrimSpace(out.String()+stderr.String()))
	if msg, isErr := callTool(run, "new_answer", map[string]any{"content": "tried"}); isErr {
		report = append(report, "new_answer refused: "+msg)
	}
	result(strings.Join(report, "\n"))
	return 0
}
