package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
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
	ids := deadServersRuns(t, dir, 2)
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

// TestAFileStoreServerAtItsCapLooksAgainForTheRunsItLeft: on a store not
// shared by replicas nobody else takes up what a server at its cap left,
// so it looks again every limitLook until every interrupted session has
// had its slot; before, its two looks at the start were all, and the rest
// stayed interrupted until someone asked for them.
func TestAFileStoreServerAtItsCapLooksAgainForTheRunsItLeft(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ids := deadServersRuns(t, dir, 2)
	svc := coordination.NewService(filestore.New(dir), coordination.Options{Open: backends.Open})
	t.Cleanup(func() { _ = svc.Shutdown(context.Background()) })
	one := make(chan struct{}, 1)
	slot := func(context.Context) (func(), error) {
		select {
		case one <- struct{}{}:
			return func() { <-one }, nil
		default:
			return nil, errors.New("this server runs 1 team already, its limit (--max-runs)")
		}
	}
	waits, fire, done := resumeLooks(ctx, svc, mcp.DefaultTenant, slot, always)
	running := func() (n int, id string) {
		for _, s := range ids {
			if _, ok := svc.Running(s); ok {
				n, id = n+1, s
			}
		}
		return n, id
	}
	wait := func(want time.Duration) {
		t.Helper()
		select {
		case got := <-waits:
			if got != want {
				t.Fatalf("the next look is %v away; want %v", got, want)
			}
		case <-done:
			t.Fatalf("the server stopped looking with a session left at its cap (%d running)", func() int { n, _ := running(); return n }())
		case <-time.After(10 * time.Second):
			t.Fatal("the server arranged no next look")
		}
	}
	wait(secondLook)
	if n, _ := running(); n != 1 {
		t.Fatalf("the first look runs %d sessions at a cap of 1", n)
	}
	fire <- time.Now()
	wait(limitLook)
	_, first := running()
	r, _ := svc.Running(first)
	r.Cancel()
	<-r.Done()
	for deadline := time.Now().Add(10 * time.Second); len(one) > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) { // given back just after the run's end
			t.Fatal("the run that ended kept its slot")
		}
	}
	fire <- time.Now()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, id := running()
		if n == 1 && id != first {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the look after a slot came free did not take up the session left")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-done: // every session has had its slot: no more looks
	case d := <-waits:
		if d == limitLook {
			// The second session's start took the slot; a look while it
			// runs finds nothing left, and then the looks end.
			fire <- time.Now()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the looks did not end once nothing was left")
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the looks did not end once nothing was left")
	}
	if _, id := running(); id != "" {
		r, _ := svc.Running(id)
		r.Cancel()
		<-r.Done()
	}
}

// deadServersRuns is n sessions on the file store in dir whose runs a
// server on another host held and stopped renewing: each reads
// interrupted. Their models are slow enough that a run taken up is still
// going when the next session is looked at.
func deadServersRuns(t *testing.T, dir string, n int) []string {
	t.Helper()
	ctx := context.Background()
	raw := filestore.New(dir)
	creator := coordination.NewService(raw, coordination.Options{Open: backends.Open})
	var ids []string
	for range n {
		s, err := creator.Create(ctx, coordination.TeamSpec{Task: "What is 2 + 2?", Models: []string{"sim:latency=30s", "sim:latency=30s"}})
		if err != nil {
			t.Fatal(err)
		}
		coordtest.RunDied(t, raw, s.ID)
		ids = append(ids, s.ID)
	}
	return ids
}

// always is a tenant the tokens file always names.
func always() bool { return true }

// resumeLooks runs a resume loop (resumeInterruptedAfter) whose waits for
// its next look are the test's: each wait's length is sent on waits, and
// the look is made when the test sends on fire; done closes as the loop
// ends.
func resumeLooks(ctx context.Context, svc *coordination.Service, tenant string, slot coordination.RunSlot, named func() bool) (waits <-chan time.Duration, fire chan<- time.Time, done <-chan struct{}) {
	w, f, d := make(chan time.Duration, 1), make(chan time.Time, 1), make(chan struct{})
	after := func(dur time.Duration) <-chan time.Time {
		w <- dur
		return f
	}
	go func() {
		defer close(d)
		resumeInterruptedAfter(ctx, svc, tenant, slot, named, after)
	}()
	return w, f, d
}

// TestARemovedTenantsRunsAreNotTakenUp: a tenant the operator took out of
// the tokens file (revoked) has no interrupted run taken up on its behalf,
// at the operator's expense, by --resume-interrupted; named again, it has.
// Before, its service's resume loop went on until the server restarted.
func TestARemovedTenantsRunsAreNotTakenUp(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ids := deadServersRuns(t, dir, 1)
	svc := coordination.NewService(filestore.New(dir), coordination.Options{Open: backends.Open})
	t.Cleanup(func() { _ = svc.Shutdown(context.Background()) })
	var named atomic.Bool
	waits, fire, done := resumeLooks(ctx, svc, "alice", nil, named.Load)
	select {
	case <-waits:
	case <-time.After(10 * time.Second):
		t.Fatal("the server arranged no second look")
	}
	if _, ok := svc.Running(ids[0]); ok {
		t.Fatal("the run of a tenant the tokens file no longer names was taken up")
	}
	named.Store(true)
	fire <- time.Now()
	<-done
	r, ok := svc.Running(ids[0])
	if !ok {
		t.Fatal("named again, the tenant's interrupted run was not taken up")
	}
	r.Cancel()
	<-r.Done()
}

// TestServedTenantsAreTheTokensFiles: with a tokens file, the tenants the
// server takes runs up for are the default and those the file names as
// last reloaded; without one, every tenant.
func TestServedTenantsAreTheTokensFiles(t *testing.T) {
	var s served
	if !s.named("alice") {
		t.Error("without a tokens file, alice is not served")
	}
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("alice dummy-token-alice-not-a-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := mcp.LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	s.tokens.Store(tokens)
	if !s.named("alice") || !s.named(mcp.DefaultTenant) || s.named("bob") {
		t.Errorf("named alice %v, default %v, bob %v; want alice and the default", s.named("alice"), s.named(mcp.DefaultTenant), s.named("bob"))
	}
	if err := os.WriteFile(path, []byte("bob dummy-token-bob-not-a-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tokens.Reload(); err != nil {
		t.Fatal(err)
	}
	if s.named("alice") || !s.named("bob") {
		t.Errorf("after the reload, named alice %v, bob %v; want bob alone", s.named("alice"), s.named("bob"))
	}
}
