package permissions

import "testing"

// In the sandbox /workspace is the workspace and /tmp is scratch that
// vanishes with it (TMPDIR=/tmp), so a command's writes there are local;
// unconfined (sandbox: none) both are the host's and stay asked.
func TestASandboxedCommandsWorkspaceAndScratchWritesAreLocal(t *testing.T) {
	for _, c := range []string{
		"echo x > /workspace/notes.md", "mkdir -p /workspace/out", "rm -rf /workspace/build", "sed -i s/a/b/ /workspace/x.go",
		"cat > /workspace/x.py <<'EOF'\nprint(1)\nEOF", "go test ./... > /tmp/test.log 2>&1", "rm -f /tmp/x", "mkdir -p /tmp/build",
		"cp -r . /tmp/copy", "touch /tmp/stamp", "rm -rf /tmp", "rm -rf /tmp/*",
	} {
		if d := Decide(Rules{}, Sandboxed(ForCommand(c))...); d.Verdict != Allow {
			t.Errorf("%q in the sandbox under the workspace role: %s (%s: %s)", c, d.Verdict, d.Rule, d.Action)
		}
		if d := Decide(Rules{}, ForCommand(c)...); d.Verdict != Ask {
			t.Errorf("%q unconfined under the workspace role: %s (%s: %s); want asked", c, d.Verdict, d.Rule, d.Action)
		}
	}
	rules := Rules{Deny: []string{"write(secrets/*)"}}
	for _, c := range []string{"echo x > /workspace/secrets/k", "rm -rf /workspace/secrets", "echo x > /tmp/../workspace/secrets/k"} {
		if d := Decide(rules, Sandboxed(ForCommand(c))...); d.Verdict != Deny {
			t.Errorf("%q in the sandbox under deny write(secrets/*): %s (%s)", c, d.Verdict, d.Rule)
		}
	}
	for _, c := range []string{"echo x > /etc/x", "rm -rf /tmp/../home/u", "cp x /var/tmp/y", "echo x > /tmpfoo/x"} {
		if d := Decide(Rules{}, Sandboxed(ForCommand(c))...); d.Verdict == Allow {
			t.Errorf("%q in the sandbox: %s (%s); want asked or denied, it is outside", c, d.Verdict, d.Rule)
		}
	}
}
