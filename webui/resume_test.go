package webui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/webui"
)

// A session whose run died (its lease abandoned by a process that is
// gone) shows as interrupted with resume offered; the page's resume, with
// the login's CSRF token and as the session's own tenant, runs it as
// run_team{session_id} does (CreateOrResume, then Start under a run slot):
// the same session goes on to its end, and the stream shows it. An ended
// session has nothing to resume.
func TestThePagesResumeRunsAnInterruptedSessionToItsEnd(t *testing.T) {
	s := serve(t)
	svc := s.service(t, "a")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sess, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: []string{"sim", "sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	// Another process took the run and died without a word.
	ls := svc.Store().(coordination.LeaseStore)
	if _, err := ls.AcquireRun(ctx, sess.ID, coordination.LeaseOwner{ID: "gone", Host: coordination.ThisHost()}, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)

	alice := browser(t)
	csrf := loginWithToken(t, s, alice, tokenA)
	var before pageState
	code, body, _ := get(t, alice, s.url+"/ui/api/sessions/"+sess.ID)
	if err := json.Unmarshal([]byte(body), &before); code != http.StatusOK || err != nil {
		t.Fatalf("the session's state: %d %s", code, body)
	}
	if before.Status != coordination.StatusInterrupted || !before.CanResume || before.Steps != 0 {
		t.Fatalf("the page shows %+v; want interrupted, resumable, no steps", before)
	}
	// The page's own button resumes it; `massgen-mcp run --resume` is a
	// command for the file store on the server's machine.
	if !strings.Contains(before.Outcome, "the Resume button") || strings.Contains(before.Outcome+before.Summary, "run --resume") {
		t.Errorf("the page's outcome advises %q (summary %q); want its Resume button", before.Outcome, before.Summary)
	}
	resume := s.url + "/ui/api/sessions/" + sess.ID + "/resume"
	if code, _ := post(t, alice, resume); code != http.StatusForbidden {
		t.Errorf("a resume without the CSRF token: %d, want 403", code)
	}
	bob := browser(t)
	bobCSRF := loginWithToken(t, s, bob, tokenB)
	if code, body := post(t, bob, resume, "X-CSRF-Token", bobCSRF); code != http.StatusNotFound || strings.Contains(body, "2+2") {
		t.Errorf("another tenant's resume: %d %q, want 404 naming nothing", code, body)
	}

	page := states(t, ctx, s, sess.ID, tokenA)
	<-page
	if code, body := post(t, alice, resume, "X-CSRF-Token", csrf); code != http.StatusOK || !strings.Contains(body, `"started":true`) {
		t.Fatalf("resume from the page: %d %s", code, body)
	}
	end := awaitState(t, page, "the resumed session finished", func(st pageState) bool { return st.Status == coordination.StatusFinished })
	if end.Steps == 0 || end.CanResume {
		t.Errorf("the resumed session ended as %+v; want steps taken and no resume offered", end)
	}
	res, err := svc.Result(ctx, sess.ID)
	if err != nil || res.Status != coordination.StatusFinished || res.Winner == nil {
		t.Fatalf("the service reads the resumed session as %+v, %v", res, err)
	}
	if code, body := post(t, alice, resume, "X-CSRF-Token", csrf); code != http.StatusConflict || !strings.Contains(body, "nothing to resume") {
		t.Errorf("resuming a finished session: %d %s, want 409 nothing to resume", code, body)
	}
}

// A session whose run another replica holds, alive, is running there: the
// page says so, and offers no Resume (the server would refuse it, 409, as
// the run is not this replica's to start) but still offers Cancel, which
// reaches the holder through the store.
func TestAPageOffersNoResumeForARunAnotherReplicaHolds(t *testing.T) {
	s := serve(t)
	svc := s.service(t, "a")
	ctx := context.Background()
	sess, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: []string{"sim", "sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	ls := svc.Store().(coordination.LeaseStore)
	if _, err := ls.AcquireRun(ctx, sess.ID, coordination.LeaseOwner{ID: "replica-b", Host: "another-host"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	alice := browser(t)
	csrf := loginWithToken(t, s, alice, tokenA)
	var st struct {
		pageState
		Running   bool `json:"running"`
		Elsewhere bool `json:"running_elsewhere"`
		CanCancel bool `json:"can_cancel"`
	}
	code, body, _ := get(t, alice, s.url+"/ui/api/sessions/"+sess.ID)
	if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil {
		t.Fatalf("the session's state: %d %s", code, body)
	}
	if st.Status != coordination.StatusRunning || st.CanResume || !st.Elsewhere || st.Running || !st.CanCancel {
		t.Errorf("the page shows status %q, can_resume %v, running_elsewhere %v, running %v, can_cancel %v; want running on another replica, no resume, cancel offered",
			st.Status, st.CanResume, st.Elsewhere, st.Running, st.CanCancel)
	}
	resume := s.url + "/ui/api/sessions/" + sess.ID + "/resume"
	if code, body := post(t, alice, resume, "X-CSRF-Token", csrf); code != http.StatusConflict || !strings.Contains(body, "another replica") {
		t.Errorf("resuming a run another replica holds: %d %s, want 409 saying it runs on another replica", code, body)
	}
}

// A resume refused because the server runs as many teams as it may is
// 429 with Retry-After, as run_team's too_many_runs and the chat
// endpoint's 429 say when to ask again (coordination.RunSlotRetry): a
// client of the page's API had no time to wait by. It says which limit
// and what frees a slot: at the server's (--max-runs) the teams running
// may all be others', so "one of your teams" would send the person to
// wait for nothing; either limit is the operator's to raise.
func TestThePagesResumeAtTheRunLimitSaysWhenToTryAgain(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   mcp.Options
		holder string // the tenant whose team holds the only slot
		flag   string
		yours  bool // the team that holds it is the person's own
	}{
		{"server limit", mcp.Options{MaxRuns: 1}, mcp.DefaultTenant, "--max-runs", false},
		{"limit per client", mcp.Options{MaxRunsPerTenant: 1}, "a", "--max-runs-per-tenant", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serveServer(t, newService, tc.opts, mcp.HTTPOptions{}, webui.Options{})
			svc := s.service(t, "a")
			ctx := context.Background()
			sess, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 2+2?", Models: []string{"sim", "sim", "sim"}})
			if err != nil {
				t.Fatal(err)
			}
			release, err := s.server.RunSlot(tc.holder)(ctx) // another team holds the only slot
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			alice := browser(t)
			csrf := loginWithToken(t, s, alice, tokenA)
			req, err := http.NewRequest(http.MethodPost, s.url+"/ui/api/sessions/"+sess.ID+"/resume", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-CSRF-Token", csrf)
			resp, err := alice.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body := string(b)
			if resp.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("a resume with every run slot taken: %d %s, want 429", resp.StatusCode, body)
			}
			want := strconv.Itoa(int(coordination.RunSlotRetry.Seconds()))
			if got := resp.Header.Get("Retry-After"); got != want {
				t.Errorf("the refused resume's Retry-After is %q, want %q (coordination.RunSlotRetry)", got, want)
			}
			if !strings.Contains(body, "try again in "+want+" s") {
				t.Errorf("the refused resume says %q; want it to say when to try again", body)
			}
			if !strings.Contains(body, tc.flag) || !strings.Contains(body, "operator") {
				t.Errorf("the refused resume says %q; want it to name the limit (%s) and that the server's operator can raise it", body, tc.flag)
			}
			if mentions := strings.Contains(body, "your teams") || strings.Contains(body, "of yours"); mentions != tc.yours {
				t.Errorf("the refused resume says %q; it names the person's own teams as what frees a slot: %v, want %v", body, mentions, tc.yours)
			}
		})
	}
}
