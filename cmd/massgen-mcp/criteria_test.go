package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
)

// cliSplit runs the command in-process with stdout and stderr apart.
func cliSplit(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	root := rootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		errOut.WriteString("error: " + err.Error())
	}
	return out.String(), errOut.String(), exitCode(err)
}

// hideBackends hides every key and local server, so no default model can
// be found on whatever machine runs the test.
func hideBackends(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()
	for _, b := range providers.Backends() {
		for _, v := range b.KeyEnv {
			t.Setenv(v, "")
		}
		if b.BaseURLEnv != "" && len(b.KeyEnv) == 0 {
			t.Setenv(b.BaseURLEnv, closed)
		}
	}
}

func TestCriteriaCommandGeneratesWithANamedSim(t *testing.T) {
	out, errOut, code := cliSplit(t, "criteria", "--state-dir", t.TempDir(), "--model", "sim", "--count", "3", "--kind", "plan", "Move the office to Lisbon")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Evaluation criteria (generated, plan task, by sim)", "- E1 [must] [simulated]", "- E3 ", "verify by:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestCriteriaCommandWithoutKeysPrintsTheDefaultsAndWhy(t *testing.T) {
	hideBackends(t)
	out, errOut, code := cliSplit(t, "criteria", "--json", "--state-dir", t.TempDir(), "Fix the bug in this Python script")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep criteriaReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.Source != criteria.SourceDefault || rep.Kind != criteria.KindCode || len(rep.Items) != 5 ||
		!strings.Contains(rep.Note, "OPENAI_API_KEY") || len(rep.MassGen.Criteria) != 5 {
		t.Errorf("report = %+v", rep)
	}
}

func TestCriteriaCommandConvertsAFileToMassGensShape(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mine.json")
	os.WriteFile(file, []byte(`[{"name": "Exact", "description": "The product is exact", "weight": 0.7}, {"text": "One line", "category": "could"}]`), 0o644)
	out, errOut, code := cliSplit(t, "criteria", "--state-dir", t.TempDir(), "--from", file, "--massgen", "What is 17 * 23?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var f criteria.MassGenFile
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("not MassGen's JSON: %v\n%s", err, out)
	}
	if len(f.Criteria) != 2 || f.Criteria[0].Category != "primary" || f.Criteria[0].Text != "The product is exact" || f.Criteria[1].Category != "stretch" {
		t.Errorf("file = %+v", f)
	}

	// No must given: stdout stays the file, the note goes to stderr.
	os.WriteFile(file, []byte(`{"criteria": [{"text": "a"}, {"text": "b"}]}`), 0o644)
	out, errOut, code = cliSplit(t, "criteria", "--state-dir", t.TempDir(), "--from", file, "--massgen", "t")
	if code != 0 || !strings.Contains(errOut, "E1 is the primary focus") || json.Unmarshal([]byte(out), &f) != nil {
		t.Errorf("exit %d stdout %q stderr %q", code, out, errOut)
	}
}

func TestCriteriaCommandAttachesToASessionBeforeItsFirstStep(t *testing.T) {
	dir := t.TempDir()
	s, err := newService(dir, 1).Create(context.Background(), coordination.TeamSpec{
		Task: "Write a haiku about Go", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := cliSplit(t, "criteria", "--state-dir", dir, "--session", s.ID, "--model", "sim")
	if code != 0 || !strings.Contains(out, "Attached to "+s.ID) || !strings.Contains(out, "haiku about Go") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	status, _, code := cliSplit(t, "status", "--json", "--state-dir", dir, s.ID)
	var v coordination.StatusView
	if code != 0 || json.Unmarshal([]byte(status), &v) != nil || len(v.Criteria) != 5 {
		t.Errorf("status after attaching: exit %d criteria %+v", code, v.Criteria)
	}
}

func TestCriteriaCommandRefusesWhatCannotWork(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mine.json")
	os.WriteFile(file, []byte(`[{"text": "a", "category": "must"}, {"text": "b", "category": "must"}]`), 0o644)
	for name, args := range map[string][]string{
		"two musts":        {"criteria", "--from", file, "t"},
		"a file and count": {"criteria", "--from", file, "--count", "4", "t"},
		"missing file":     {"criteria", "--from", file + ".nope", "t"},
		"bad count":        {"criteria", "--model", "sim", "--count", "20", "t"},
		"no task":          {"criteria", "--model", "sim"},
	} {
		_, errOut, code := cliSplit(t, append(args, "--state-dir", t.TempDir())...)
		if code != exitBadInput || !strings.Contains(errOut, "error: ") {
			t.Errorf("%s: exit %d, want %d; stderr %q", name, code, exitBadInput, errOut)
		}
	}
}
