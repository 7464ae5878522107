package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// TestAHeldApplySaysTheExactCommands: an apply refused for tool
// configuration says, at the command line, the two commands that go on —
// with the session's --state-dir — and a run's result says them before
// anyone tries the plain apply.
func TestAHeldApplySaysTheExactCommands(t *testing.T) {
	held := &coordination.ConfigHeldError{Session: "site", Held: []workspace.Change{{Path: ".envrc", Op: "added", Reason: workspace.ToolConfig(".envrc")}}}
	msg := errorText(storeOf("/s", "file", "").wrap(held, "site"))
	for _, want := range []string{` .envrc (added: direnv runs it`, "massgen-mcp apply --include-config --state-dir /s site", "massgen-mcp apply --skip-config --state-dir /s site"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, msg)
		}
	}
	if code := exitCode(held); code != exitBadInput {
		t.Errorf("exit %d", code)
	}

	res := &coordination.TeamResult{SessionID: "site", Status: coordination.StatusFinished, ChangesPending: true, FilesDir: "/s/files",
		Changes: &workspace.Preview{Context: "/p", Count: 1, ConfigCount: 1,
			Files:  []workspace.FileChange{{Path: ".envrc", Op: "added", Runs: workspace.ToolConfig(".envrc")}},
			Config: []workspace.FileChange{{Path: ".envrc", Op: "added", Runs: workspace.ToolConfig(".envrc")}}}}
	var b bytes.Buffer
	printResult(&b, res, " --state-dir /s")
	for _, want := range []string{"Tool configuration among them", "added   .envrc: direnv runs it", "`massgen-mcp apply --include-config --state-dir /s site`", "`massgen-mcp apply --skip-config --state-dir /s site`"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the result lacks %q:\n%s", want, b.String())
		}
	}

	// Both flags: cobra's own words ("if any flags in the group […] are
	// set none of the others can be") said neither which to keep nor why.
	if out, code := cli(t, "apply", "--include-config", "--skip-config", "--state-dir", t.TempDir(), "site"); code != exitBadInput || !strings.Contains(out, "give one of --include-config (writes the tool configuration with the rest) and --skip-config (writes the rest without it)") {
		t.Errorf("both flags: exit %d:\n%s", code, out)
	}
}

// TestRunApplysHelpSaysToolConfigurationIsHeld: run --help's --apply said
// only that a file changed meanwhile refuses it; tool configuration among
// the changes refuses it too, and apply's two flags are what goes on.
func TestRunApplysHelpSaysToolConfigurationIsHeld(t *testing.T) {
	out, code := cli(t, "run", "--help")
	if want := "tool configuration among the changes (.github/workflows/, .claude/, .envrc, …) refuses it, until massgen-mcp apply --include-config or --skip-config <session-id>"; code != 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
		t.Errorf("run --help (exit %d) should say %q:\n%s", code, want, out)
	}
}

// TestIncludeConfigAfterSkipSaysWhatIsLeft: apply --include-config after an
// apply --skip-config said only "Already applied … nothing was written
// now", leaving the user to guess that the workflow they now asked for will
// never be written, and where to find it.
func TestIncludeConfigAfterSkipSaysWhatIsLeft(t *testing.T) {
	res := &coordination.ApplyResult{SessionID: "site", AlreadyApplied: true, Applied: &workspace.Applied{Context: "/p",
		Written: []workspace.Change{{Path: "hello.txt", Op: "added"}},
		Skipped: []workspace.Change{{Path: ".github/workflows/ci.yml", Op: "added", Reason: "tool configuration, left out as asked: " + workspace.ToolConfig(".github/workflows/ci.yml")}}}}
	var b bytes.Buffer
	printApplied(&b, res, coordination.ApplyOptions{IncludeConfig: true}, " --state-dir /s")
	if want := "--include-config writes nothing now: the earlier apply left the tool configuration out (--skip-config), and changes are applied once; to have it after all, copy it from the winner's files yourself (massgen-mcp status --state-dir /s site says where they are)"; !strings.Contains(b.String(), want) {
		t.Errorf("the summary lacks %q:\n%s", want, b.String())
	}
	b.Reset()
	printApplied(&b, res, coordination.ApplyOptions{}, " --state-dir /s")
	if strings.Contains(b.String(), "--include-config writes nothing now") {
		t.Errorf("a plain second apply speaks of --include-config:\n%s", b.String())
	}
}

// TestRunsExitCodesSayARefusedApplyIsOne: run --apply whose apply is
// refused (tool configuration held, a file changed) exits 1 after an agreed
// run; the table run --help prints said 1 is only bad arguments or config.
func TestRunsExitCodesSayARefusedApplyIsOne(t *testing.T) {
	out, _ := cli(t, "run", "--help")
	if want := "1  bad arguments or config, or run --apply's apply refused (nothing written; apply <session-id> goes on)"; !strings.Contains(out, want) {
		t.Errorf("run --help should say %q:\n%s", want, out)
	}
}

// TestAnIncludedToolConfigurationIsNamedSoInTheSummary: apply
// --include-config listed a CI workflow it wrote as a plain "added" line,
// like hello.txt beside it; the summary says which written files are tool
// configuration and what they run, as the pending list did before.
func TestAnIncludedToolConfigurationIsNamedSoInTheSummary(t *testing.T) {
	res := &coordination.ApplyResult{SessionID: "site", Applied: &workspace.Applied{Context: "/p",
		Written: []workspace.Change{{Path: "hello.txt", Op: "added"}, {Path: ".github/workflows/ci.yml", Op: "added"}}}}
	var b bytes.Buffer
	printApplied(&b, res, coordination.ApplyOptions{IncludeConfig: true}, "")
	if want := "  added .github/workflows/ci.yml (tool configuration: " + workspace.ToolConfig(".github/workflows/ci.yml") + ")\n"; !strings.Contains(b.String(), want) {
		t.Errorf("the summary lacks %q:\n%s", want, b.String())
	}
	if want := "  added hello.txt\n"; !strings.Contains(b.String(), want) {
		t.Errorf("the summary lacks %q:\n%s", want, b.String())
	}
}
