package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// run --criteria FILE with no task on a terminal prompts turn after turn
// (interactive): each turn is a session the criteria must reach, as they
// reach the one session of run --criteria FILE "task" — not a flag the
// prompt silently drops.
func TestEachPromptedTurnTakesRunCriteria(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.json")
	os.WriteFile(file, []byte(`[{"text":"Merges in linear time","category":"must"},{"text":"Has tests"}]`), 0o644)
	cmd := runCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	f := runFlags{models: "sim/strong,sim/strong", seed: 1, plain: true, stateDir: dir, criteria: file, parallel: 1}
	svc := newService(dir, 1)
	id, err := oneTurn(context.Background(), cmd, f, svc, "", "Write a Python function that merges two sorted lists", &out)
	if id == "" {
		t.Fatalf("no turn was created: %v\n%s", err, out.String())
	}
	if s := readSession(t, dir, id); len(s.Criteria) != 2 || s.Criteria[0].Text != "Merges in linear time" {
		t.Fatalf("the prompted turn's session has criteria %+v; --criteria %s was dropped\n%s", s.Criteria, file, out.String())
	}
}
