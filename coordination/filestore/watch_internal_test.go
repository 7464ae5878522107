package filestore

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// TestWatchPollsWhenInotifyIsUnavailable runs the watch cases on a store
// that cannot use inotify (none on the system, or its limit reached): the
// watch looks at the session's files instead, and keeps the same contract.
// It runs on one processor: there a poll that took its first look in the
// background would look only after the step written at once, so such a miss
// shows on every run, not only on a loaded machine.
func TestWatchPollsWhenInotifyIsUnavailable(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	storetest.RunWatch(t, func(t *testing.T) coordination.Store {
		s := New(t.TempDir())
		s.notifyFailed = true
		return s
	})
}

// TestWatchSeesAsksRaisedAnsweredAndDecided pins what the web view's
// pending approvals rely on: an agent's ask (requests/), a person's answer
// (responses/) and the recorded decision (permissions.jsonl) each reach a
// watcher, through inotify and through the poll alike.
func TestWatchSeesAsksRaisedAnsweredAndDecided(t *testing.T) {
	for _, polls := range []bool{false, true} {
		t.Run(map[bool]string{false: "inotify", true: "poll"}[polls], func(t *testing.T) {
			s := New(t.TempDir())
			s.notifyFailed = polls
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := s.Create(ctx, storetest.NewSession("asks")); err != nil {
				t.Fatal(err)
			}
			ch, err := s.Watch(ctx, "asks")
			if err != nil {
				t.Fatal(err)
			}
			// quiet drops what earlier writes reported, so each wait below
			// hears only the write before it.
			quiet := func() {
				time.Sleep(2 * pollEvery)
				for len(ch) > 0 {
					<-ch
				}
			}
			now := time.Now()
			req := permissions.ApprovalRequest{ID: "ask1", Session: "asks", Agent: "agent_a", Tool: "run_command",
				Action: permissions.Action{Kind: permissions.Git, Target: "push origin main"}, Asked: now, Expires: now.Add(time.Minute)}
			answered := make(chan permissions.ApprovalResponse, 1)
			go func() {
				r, _ := permissions.AskFile(ctx, s.Dir("asks"), req)
				answered <- r
			}()
			storetest.AwaitChange(t, ch, coordination.Change{Permissions: true})
			quiet()
			if err := permissions.Answer(s.Dir("asks"), "ask1", true, "web", "", time.Now()); err != nil {
				t.Fatal(err)
			}
			storetest.AwaitChange(t, ch, coordination.Change{Permissions: true})
			if r := <-answered; !r.Approve || r.By != "web" {
				t.Fatalf("the ask was answered %+v", r)
			}
			quiet()
			if err := s.AppendPermission(ctx, "asks", permissions.Record{Time: now, Agent: "agent_a", Tool: "run_command", Outcome: permissions.Approved, By: "file handshake (web)"}); err != nil {
				t.Fatal(err)
			}
			storetest.AwaitChange(t, ch, coordination.Change{Permissions: true})
		})
	}
}
