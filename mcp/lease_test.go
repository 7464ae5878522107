package mcp

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestAnInterruptedSessionSaysSoAndRunTeamResumesIt: a session whose run
// died (its lease held by a process of this host that no longer exists)
// reads interrupted in team_status, with when it was last alive, and
// run_team{session_id} claims it and runs it to its end.
func TestAnInterruptedSessionSaysSoAndRunTeamResumesIt(t *testing.T) {
	store := filestore.New(t.TempDir())
	svc := coordination.NewService(store, coordination.Options{Open: backends.Open, Backends: backends.Config{}.Report, Logger: zerolog.Nop()})
	c := inProcess(t, New(svc, Options{ValidateOutput: true}), false)
	ctx := context.Background()
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	dead := coordination.LeaseOwner{ID: "dead", Host: coordination.ThisHost(), PID: 1<<22 + 7} // above pid_max: no process has it
	if _, err := store.AcquireRun(ctx, s.ID, dead, time.Minute); err != nil {
		t.Fatal(err)
	}
	var v coordination.StatusView
	status := callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": s.ID}))
	decode(t, status, &v)
	if v.Result.Status != coordination.StatusInterrupted || v.Result.LastAlive == nil {
		t.Fatalf("team_status of a session whose run died: %q, last alive %v; want interrupted with a time", v.Result.Status, v.Result.LastAlive)
	}
	// The client is told what it can call: massgen-mcp run --resume is a
	// command on the server's machine, for its file store only.
	if txt := text(status); !strings.Contains(txt, fmt.Sprintf("resume it with run_team{session_id: %q}", s.ID)) || strings.Contains(txt, "run --resume") {
		t.Errorf("team_status's text does not advise run_team{session_id} alone:\n%s", txt)
	}
	var res coordination.TeamResult
	decode(t, callTool(t, c, "run_team", mustJSON(map[string]any{"session_id": s.ID, "wait": true})), &res)
	if res.Status != coordination.StatusFinished {
		t.Fatalf("run_team{session_id} of an interrupted session ended %q, want finished", res.Status)
	}
	if l, err := store.ReadRun(ctx, s.ID); err != nil || l.Version != 2 || !l.Released {
		t.Errorf("lease after the resumed run = %+v, %v; want claim 2, released", l, err)
	}
}
