package cliagent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

func TestSweepRemovesOnlyAgentsIdleForLong(t *testing.T) {
	dir := t.TempDir()
	old, fresh, other := filepath.Join(dir, "0123456789abcdef"), filepath.Join(dir, "fedcba9876543210"), filepath.Join(dir, "keep")
	for _, d := range []string{old, fresh, other} {
		os.MkdirAll(filepath.Join(d, "home"), 0o700)
	}
	long := time.Now().Add(-40 * 24 * time.Hour)
	os.Chtimes(old, long, long)
	os.Chtimes(other, long, long)
	sweep(dir, time.Now().Add(-agentIdle))
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Error("an agent idle for 40 days is kept")
	}
	for _, d := range []string{fresh, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed", d)
		}
	}
}

// TestASessionMadeAgainUnderItsIDDoesNotResumeTheOldConversation: a
// session deleted and made again under its id gives its agents the same
// workspace path; its own seed keeps them from resuming the deleted
// session's CLI conversation, where the workspace alone named the old
// agent's directories (found by review). The same session's steps keep
// theirs.
func TestASessionMadeAgainUnderItsIDDoesNotResumeTheOldConversation(t *testing.T) {
	p := &Provider{dir: t.TempDir()}
	ws := filepath.Join(t.TempDir(), "sessions", "reused", "agents", "agent_a", "workspace")
	old, err := p.agentFor(providers.Request{Workspace: ws, AgentID: "agent_a", SessionSeed: 11})
	if err != nil {
		t.Fatal(err)
	}
	old.saveSession("the-deleted-sessions-cli-conversation")
	again, err := p.agentFor(providers.Request{Workspace: ws, AgentID: "agent_a", SessionSeed: 11})
	if err != nil || again.session() != "the-deleted-sessions-cli-conversation" {
		t.Fatalf("the same session's next step resumes %q (%v); want its conversation", again.session(), err)
	}
	fresh, err := p.agentFor(providers.Request{Workspace: ws, AgentID: "agent_a", SessionSeed: 12})
	if err != nil {
		t.Fatal(err)
	}
	if got := fresh.session(); got != "" {
		t.Fatalf("a session made again under the id resumes %q; want a fresh conversation", got)
	}
}

// TestASessionMadeAgainWithTheSameSeedDoesNotResumeTheOldConversation: a
// session made again under a deleted one's id with the same explicit seed
// (run --seed 7 twice) is told apart by its creation time; the same
// session, its time read back from a store to the millisecond after a
// restart, keeps its conversation.
func TestASessionMadeAgainWithTheSameSeedDoesNotResumeTheOldConversation(t *testing.T) {
	p := &Provider{dir: t.TempDir()}
	ws := filepath.Join(t.TempDir(), "sessions", "reused", "agents", "agent_a", "workspace")
	created := time.Date(2026, 12, 6, 1, 2, 3, 456789123, time.UTC)
	req := func(at time.Time) providers.Request {
		return providers.Request{Workspace: ws, AgentID: "agent_a", SessionSeed: 7, SessionCreated: at}
	}
	old, err := p.agentFor(req(created))
	if err != nil {
		t.Fatal(err)
	}
	old.saveSession("the-deleted-sessions-cli-conversation")
	stored, err := p.agentFor(req(created.Truncate(time.Millisecond).In(time.FixedZone("x", 3600))))
	if err != nil || stored.session() != "the-deleted-sessions-cli-conversation" {
		t.Fatalf("the same session read back from a store resumes %q (%v); want its conversation", stored.session(), err)
	}
	again, err := p.agentFor(req(created.Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if got := again.session(); got != "" {
		t.Fatalf("a session made again with the same seed resumes %q; want a fresh conversation", got)
	}
}

// TestAgentsWithoutAWorkspaceAreToldApartBySession: two sessions that keep
// no files, made with the same seed in the same millisecond, give their
// agent_a separate conversations (keyed by the session's id), where the
// agent's id alone named one directory for both.
func TestAgentsWithoutAWorkspaceAreToldApartBySession(t *testing.T) {
	p := &Provider{dir: t.TempDir()}
	at := time.Date(2026, 12, 6, 1, 2, 3, 0, time.UTC)
	one, err := p.agentFor(providers.Request{SessionID: "one", AgentID: "agent_a", SessionSeed: 7, SessionCreated: at})
	if err != nil {
		t.Fatal(err)
	}
	one.saveSession("session-ones-conversation")
	two, err := p.agentFor(providers.Request{SessionID: "two", AgentID: "agent_a", SessionSeed: 7, SessionCreated: at})
	if err != nil {
		t.Fatal(err)
	}
	if got := two.session(); got != "" {
		t.Fatalf("another session's agent_a resumes %q; want a fresh conversation", got)
	}
}
