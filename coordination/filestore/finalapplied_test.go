package filestore_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// TestFinalFilesShowAnApplyAndTidyRebuildsOneMissed: final/result.json, the
// finished result as MassGen's readers see it, shows an apply recorded
// after the finish (an applied entry) as the session's result does; a
// process that stopped between the entry and that rewrite left it saying
// the changes are pending, and Tidy rebuilds it from the log.
func TestFinalFilesShowAnApplyAndTidyRebuildsOneMissed(t *testing.T) {
	state := t.TempDir()
	st := filestore.New(state)
	ctx := context.Background()
	writeSession(t, st, "team_x")
	final := filepath.Join(state, "sessions", "team_x", "final", "result.json")
	fin := &coordination.TeamResult{SessionID: "team_x", Status: coordination.StatusFinished, ChangesPending: true}
	if _, err := st.AppendSession(ctx, "team_x", coordination.SessionEntry{Kind: coordination.SessionFinished, Time: time.Now(), Result: fin}); err != nil {
		t.Fatal(err)
	}
	pending, err := os.ReadFile(final)
	if err != nil {
		t.Fatal(err)
	}
	applied := &workspace.Applied{Context: "site", Written: []workspace.Change{{Path: "index.html", Op: workspace.OpChanged}}, Conflicts: []workspace.Change{}, Skipped: []workspace.Change{}}
	if _, err := st.AppendSession(ctx, "team_x", coordination.SessionEntry{Kind: coordination.SessionApplied, Time: time.Now(), Applied: applied}); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		var got coordination.TeamResult
		data, err := os.ReadFile(final)
		if err == nil {
			err = json.Unmarshal(data, &got)
		}
		if err != nil || got.ChangesPending || got.Applied == nil || len(got.Applied.Written) != 1 {
			t.Errorf("%s, final/result.json says pending %v, applied %+v (%v); want the apply", when, got.ChangesPending, got.Applied, err)
		}
	}
	check("after the apply's entry")
	if err := os.WriteFile(final, pending, 0o644); err != nil { // as a process stopped before the rewrite left it
		t.Fatal(err)
	}
	tidied, err := st.Tidy(ctx, "team_x")
	if err != nil {
		t.Fatal(err)
	}
	check("after Tidy")
	if len(tidied.Rebuilt) == 0 {
		t.Errorf("Tidy does not say it rebuilt final/: %+v", tidied)
	}
}
