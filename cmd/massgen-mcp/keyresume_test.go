package main

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// sessionIDIn is the session id a tool's result names.
func sessionIDIn(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`"session_id":\s*"([A-Za-z0-9_-]+)"`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no session id in %.600s", out)
	}
	return m[1]
}

// servedWithAClientsURL is serve --http --state-dir DIR --allow-base-url
// PROVIDER/client with every key planted: the operator allowing a client's
// server, which the design says is reached without the server's key.
func servedWithAClientsURL(t *testing.T) (log *keyLog, dir, model string, call func(token, tool, args string) string) {
	dir = t.TempDir()
	log, prov, call := servedForKeysWith(t, nil, serveFlags{stateDir: dir, allowURLs: []string{"PROVIDER/client"}})
	return log, dir, "openai/gpt-5-mini@" + prov + "/client/v1", call
}

// TestTheCLIsResumeSendsNoKeyToAClientsBaseURL is the red-team finding of
// the CLI resume: a client runs a team at a base URL the operator allowed
// (reached without any key); the run is cancelled; the operator resumes it
// with run --resume, as the product suggests. The resumed steps reach the
// client's URL, still without the operator's OPENAI_API_KEY. (Before, the
// CLI's Config, which has no allow-list, took every @base_url for its own
// command line's and sent the backend's key.)
func TestTheCLIsResumeSendsNoKeyToAClientsBaseURL(t *testing.T) {
	log, dir, model, call := servedWithAClientsURL(t)
	gate := make(chan struct{})
	log.mu.Lock()
	log.hold = func(r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/client/") {
			select {
			case <-gate:
			case <-r.Context().Done():
			}
		}
	}
	log.mu.Unlock()
	id := sessionIDIn(t, call("default", "run_team", `{"task":"What is 6 * 7?","models":["`+model+`","sim"],"wait":false,"max_rounds":2}`))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, n := log.under("/client"); n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the client's agent never reached its base URL")
		}
	}
	if out := call("default", "cancel_team", `{"session_id":"`+id+`"}`); !strings.Contains(out, `"status":"cancelled"`) {
		t.Fatalf("cancel_team: %.600s", out)
	}
	close(gate)
	if keys, n := log.under("/client"); len(keys) > 0 {
		t.Fatalf("the served run sent %v to the client's URL in %d requests", keys, n)
	}
	_, before := log.under("/client")

	res := resumeByCLI(t, dir, id)
	if res.Status != coordination.StatusFinished {
		t.Errorf("the resumed run ended %s (%s), want finished", res.Status, coordination.Deref(res.StopReason))
	}
	keys, n := log.under("/client")
	if n == before {
		t.Fatal("the resumed run never reached the client's URL")
	}
	if len(keys) > 0 {
		t.Errorf("run --resume sent %v to the client's base URL in %d requests; a client's URL gets no key of the operator's", keys, n-before)
	}
}

// resumeByCLI runs `massgen-mcp run --resume ID` on the state directory as
// the operator would: newService, the CLI's Config without an allow-list,
// then Run. The served run's end may still be being recorded: a resume
// told that the session is running asks again.
func resumeByCLI(t *testing.T, dir, id string) *coordination.TeamResult {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res, err := newService(dir, 1).Run(context.Background(), id, nil)
		if err == nil {
			return res
		}
		if !strings.Contains(err.Error(), "running") || time.Now().After(deadline) {
			t.Fatalf("run --resume %s: %v", id, err)
		}
	}
}

// TestTheCLIsContinueSendsNoKeyToAClientsBaseURL: the same client's team
// finishes on the server; the operator runs the next turn with run
// --continue, which keeps the previous turn's agents. Neither the models
// list the CLI checks before the turn nor its steps carry the operator's
// key to the client's URL.
func TestTheCLIsContinueSendsNoKeyToAClientsBaseURL(t *testing.T) {
	log, dir, model, call := servedWithAClientsURL(t)
	out := call("default", "run_team", `{"task":"What is 6 * 7?","models":["`+model+`","sim"],"wait":true,"max_rounds":2}`)
	if !strings.Contains(out, `"status":"finished"`) {
		t.Fatalf("the client's team did not finish: %.600s", out)
	}
	id := sessionIDIn(t, out)
	if s := readSession(t, dir, id); len(s.Agents) == 0 || s.Agents[0].BaseURLBy != coordination.BaseURLByClient {
		t.Errorf("session.json says the base URL is %q's, want %q", s.Agents[0].BaseURLBy, coordination.BaseURLByClient)
	}
	if keys, n := log.under("/client"); n == 0 || len(keys) > 0 {
		t.Fatalf("the served run sent %v to the client's URL in %d requests, want no key", keys, n)
	}
	_, before := log.under("/client")

	// Whether the turn's votes agree (exit 0) or split (7) is the fakes'
	// business; what reached the URL is this test's.
	text, _ := cli(t, "run", "--state-dir", dir, "--plain", "--max-rounds", "2", "--continue", id, "Now what is 6 * 8?")
	keys, n := log.under("/client")
	if n == before {
		t.Fatalf("the next turn never reached the client's URL:\n%s", text)
	}
	if len(keys) > 0 {
		t.Errorf("run --continue sent %v to the client's base URL in %d requests; a client's URL gets no key of the operator's", keys, n-before)
	}
}

// TestTheCommandLinesBaseURLKeepsItsKey is the other side: a base URL the
// operator wrote in run --models is the operator's for the session, so the
// backend's key goes with it — at its run, and at the next turn run
// --continue makes of it — and session.json says whose it is.
func TestTheCommandLinesBaseURLKeepsItsKey(t *testing.T) {
	log, dir, client, _ := servedWithAClientsURL(t)
	model := strings.Replace(client, "/client/v1", "/operator/v1", 1)
	text, _ := cli(t, "run", "--json", "--state-dir", dir, "--max-rounds", "2", "--models", model+",sim", "What is 6 * 7?")
	id := sessionIDIn(t, text)
	if s := readSession(t, dir, id); len(s.Agents) == 0 || s.Agents[0].BaseURLBy != coordination.BaseURLByCommandLine {
		t.Errorf("session.json says the base URL is %q's, want %q", s.Agents[0].BaseURLBy, coordination.BaseURLByCommandLine)
	}
	if keys, n := log.under("/operator"); n == 0 || !slices.Equal(keys, []string{"OPENAI_API_KEY"}) {
		t.Errorf("the command line's base URL got %v in %d requests, want OPENAI_API_KEY", keys, n)
	}
	_, before := log.under("/operator")
	text, _ = cli(t, "run", "--state-dir", dir, "--plain", "--max-rounds", "2", "--continue", id, "Now what is 6 * 8?")
	if keys, n := log.under("/operator"); n == before || !slices.Equal(keys, []string{"OPENAI_API_KEY"}) {
		t.Errorf("the next turn's requests to the command line's base URL carried %v (%d of them), want OPENAI_API_KEY:\n%s", keys, n-before, text)
	}
}
