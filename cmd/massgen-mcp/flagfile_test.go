package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAFlagsFileThatCannotBeReadSaysWhichFlagPathAndWhatToDo: a file a
// flag names that is missing (or a directory) is refused naming the flag
// and the path, where a relative path was looked for, and what to give
// instead, never the bare "open x: no such file or directory".
func TestAFlagsFileThatCannotBeReadSaysWhichFlagPathAndWhatToDo(t *testing.T) {
	isolateBackends(t, "")
	state := t.TempDir()
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	missing := "no-such-file.json"
	for _, tc := range []struct {
		flag string
		args []string
	}{
		{"--draft", []string{"checkpoint", "--state-dir", state, "--models", "sim,sim", "--draft", missing, "Drop the table"}},
		{"--goals", []string{"checkpoint", "--state-dir", state, "--models", "sim,sim", "--goals", missing, "Drop the table"}},
		{"--from", []string{"criteria", "--from", missing, "Review this API"}},
		{"--criteria", []string{"run", "--state-dir", state, "--models", "sim,sim", "--criteria", missing, "What is 2 + 2?"}},
		{"--task-file", []string{"run", "--state-dir", state, "--models", "sim,sim", "--task-file", missing}},
		{"--image", []string{"run", "--state-dir", state, "--models", "sim,sim", "--image", missing, "Build this page"}},
		{"--script", []string{"fake-providers", "--script", missing}},
		{"--config", []string{"run", "--state-dir", state, "--config", missing, "What is 2 + 2?"}},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			out, code := cli(t, tc.args...)
			if code != exitBadInput {
				t.Fatalf("exit %d, want %d:\n%s", code, exitBadInput, out)
			}
			for _, want := range []string{tc.flag + " " + missing, "no such file", filepath.Join(cwd, missing), "\nTo fix: "} {
				if !strings.Contains(out, want) {
					t.Errorf("lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "open "+missing) {
				t.Errorf("repeats the bare open error:\n%s", out)
			}
		})
	}
	// A directory where a file was wanted says so.
	out, code := cli(t, "checkpoint", "--state-dir", state, "--models", "sim,sim", "--draft", state, "Drop the table")
	if code != exitBadInput || !strings.Contains(out, "--draft "+state+" is a directory") || !strings.Contains(out, "To fix: ") {
		t.Errorf("--draft of a directory: exit %d:\n%s", code, out)
	}
}
