package main

import (
	"context"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestServeResumesNoMoreRunsThanItsCap: serve --resume-interrupted
// --max-runs 1 finds two runs a dead server left and takes up one: the
// runs it resumes count against its cap as its clients' runs do, and the
// other stays interrupted, for another replica or a later look.
func TestServeResumesNoMoreRunsThanItsCap(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	raw := filestore.New(dir)
	creator := coordination.NewService(raw, coordination.Options{Open: backends.Open})
	dead := coordination.LeaseOwner{ID: "killed", Host: "another-host.invalid", PID: 4242}
	var ids []string
	for range 2 {
		// Slow enough models that the first run is still going when
		// the second is looked at.
		s, err := creator.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim:latency=30s", "sim:latency=30s"}})
		if err != nil {
			t.Fatal(err)
		}
		l, err := raw.AcquireRun(ctx, s.ID, dead, 10*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(l.Expires.Add(coordination.MaxClockSkew + 50*time.Millisecond)))
		ids = append(ids, s.ID)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv, err := servedServer(sctx, serveFlags{stateDir: dir, resumeIntr: true, maxRuns: 1}, nil, nil, "", mcp.ToolSet{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.close)
	svc := srv.Service()
	running := func() (n int) {
		for _, id := range ids {
			if _, ok := svc.Running(id); ok {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(10 * time.Second); running() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			for _, id := range ids {
				v, err := svc.Status(ctx, id)
				t.Logf("%s: %+v %v", id, v, err)
			}
			t.Fatal("serve --resume-interrupted took up neither run a dead server left")
		}
	}
	time.Sleep(500 * time.Millisecond) // the first look is over by now
	if n := running(); n != 1 {
		t.Errorf("serve --max-runs 1 runs %d of the dead server's runs; want 1", n)
	}
	for _, id := range ids {
		if r, ok := svc.Running(id); ok {
			r.Cancel()
			<-r.Done()
		}
	}
}
