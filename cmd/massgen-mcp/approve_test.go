package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// A headless run's ask, as the file handshake leaves it, is listed by
// status with the command that answers it, answered by approve, and
// counted by status and fsck with the session's permissions.jsonl.
func TestApproveAnswersAPendingAskThatStatusAndFsckShow(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	svc := newService(dir, 1)
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "Write a haiku about Go", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	log := svc.Store().(coordination.PermissionLog)
	now := time.Now().UTC()
	for _, r := range []permissions.Record{
		{Time: now, Agent: "agent_a", Step: 1, Tool: "run_command", Action: permissions.Action{Kind: permissions.Exec, Target: "ls"}, Verdict: permissions.Allow, Outcome: permissions.Allowed, Rule: "role workspace"},
		{Time: now, Agent: "agent_a", Step: 1, Tool: "run_command", Action: permissions.Action{Kind: permissions.Exec, Target: "rm -rf /"}, Verdict: permissions.Deny, Outcome: permissions.Denied, Floor: true, Rule: "floor: recursive removal"},
		{Time: now, Agent: "agent_b", Step: 1, Tool: "run_command", Action: permissions.Action{Kind: permissions.Net, Target: "example.com"}, Verdict: permissions.Ask, Outcome: permissions.Refused, Rule: "role workspace", By: "policy deny-all"},
	} {
		if err := log.AppendPermission(ctx, s.ID, r); err != nil {
			t.Fatal(err)
		}
	}
	req := permissions.ApprovalRequest{ID: "abc123", Session: s.ID, Agent: "agent_b", Tool: "run_command",
		Action: permissions.Action{Kind: permissions.Git, Target: "push origin main"}, Risk: permissions.RiskExternal, Rule: "role workspace", Asked: now, Expires: now.Add(time.Minute)}
	b, _ := json.Marshal(req)
	sdir := coordination.DirOf(svc.Store(), s.ID)
	if err := os.MkdirAll(filepath.Join(sdir, "requests"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sdir, "requests", "abc123.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := cliSplit(t, "status", "--state-dir", dir, s.ID)
	for _, want := range []string{"## Permissions", "3 decisions: 1 allowed, 1 denied (1 floor), 0 approved, 1 refused; 1 pending",
		"agent_b asks to git(push origin main)", "massgen-mcp approve --state-dir " + shellQuote(dir) + " abc123", "refused: net(example.com) (role workspace; policy deny-all)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("status (exit %d) lacks %q:\n%s%s", code, want, out, errOut)
		}
	}
	// status --json carries the same section as data.
	out, errOut, code = cliSplit(t, "status", "--json", "--state-dir", dir, s.ID)
	var js struct {
		SessionID   string `json:"session_id"`
		Permissions struct {
			Counts  coordination.PermissionCounts
			Pending []struct{ ID, Agent, Approve, Deny string }
			Recent  []permissions.Record
		}
	}
	if err := json.Unmarshal([]byte(out), &js); code != 0 || err != nil {
		t.Fatalf("status --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	p := js.Permissions
	if c := p.Counts; c.Decisions != 3 || c.Allowed != 1 || c.Denied != 1 || c.Floor != 1 || c.Refused != 1 || c.Pending != 1 {
		t.Errorf("status --json counts %+v", c)
	}
	if len(p.Pending) != 1 || p.Pending[0].ID != "abc123" || p.Pending[0].Agent != "agent_b" || p.Pending[0].Approve != "massgen-mcp approve --state-dir "+shellQuote(dir)+" abc123" || p.Pending[0].Deny != "massgen-mcp deny --state-dir "+shellQuote(dir)+" abc123" {
		t.Errorf("status --json pending %+v", p.Pending)
	}
	if len(p.Recent) != 2 || p.Recent[0].Outcome != permissions.Denied || !p.Recent[0].Floor || p.Recent[1].Outcome != permissions.Refused || p.Recent[1].By != "policy deny-all" {
		t.Errorf("status --json recent non-allows %+v", p.Recent)
	}
	out, errOut, code = cliSplit(t, "fsck", "--state-dir", dir, s.ID)
	if !strings.Contains(out, "permissions.jsonl: 3 decisions") {
		t.Errorf("fsck (exit %d) does not count the decisions:\n%s%s", code, out, errOut)
	}
	out, errOut, code = cliSplit(t, "approve", "--state-dir", dir, "abc123")
	if code != 0 || !strings.Contains(out, "approved abc123 in session "+s.ID) {
		t.Fatalf("approve: exit %d\n%s%s", code, out, errOut)
	}
	var resp permissions.ApprovalResponse
	if data, err := os.ReadFile(filepath.Join(sdir, "responses", "abc123.json")); err != nil || json.Unmarshal(data, &resp) != nil || !resp.Approve || !strings.HasPrefix(resp.By, "massgen-mcp approve") {
		t.Fatalf("responses/abc123.json: %s, %v", data, err)
	}
	if _, errOut, code = cliSplit(t, "deny", "--state-dir", dir, "--session", s.ID, "abc123"); code == 0 || !strings.Contains(errOut, "already answered") {
		t.Errorf("denying an answered ask: exit %d %s", code, errOut)
	}
	if _, errOut, code = cliSplit(t, "approve", "--state-dir", dir, "nosuch"); code == 0 || !strings.Contains(errOut, "no session has a pending ask") {
		t.Errorf("approving an unknown ask: exit %d %s", code, errOut)
	}
}

// TestApproveAnswersAnAskKeptInPostgreSQL: on a server whose store is
// PostgreSQL the ask is a row; approve --store postgres://… answers it
// from any machine that reaches the database, the tenant's alone.
func TestApproveAnswersAnAskKeptInPostgreSQL(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	st := pgTenant(t, dsn, "acme")
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open})
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "x", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	var box coordination.ApprovalBox = st
	if err := box.RequestApproval(ctx, s.ID, permissions.ApprovalRequest{ID: "abc123", Session: s.ID, Agent: "agent_b", Tool: "run_command",
		Action: permissions.Action{Kind: permissions.Git, Target: "push origin main"}, Risk: permissions.RiskExternal, Rule: "role workspace", Asked: now, Expires: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := cliSplit(t, "approve", "--store", dsn, "abc123"); code == 0 || !strings.Contains(errOut, "no session has a pending ask") {
		t.Errorf("the default tenant answered acme's ask: exit %d %s", code, errOut)
	}
	// status reads the same rows, and its commands reach the same store.
	js, errOut, code := cliSplit(t, "status", "--json", "--store", dsn, "--tenant", "acme", s.ID)
	if code != 0 {
		t.Fatalf("status --store --json: exit %d\n%s%s", code, js, errOut)
	}
	var sj struct {
		Permissions struct {
			Pending []struct{ ID, Approve, Deny string } `json:"pending"`
		} `json:"permissions"`
	}
	if err := json.Unmarshal([]byte(js), &sj); err != nil || len(sj.Permissions.Pending) != 1 {
		t.Fatalf("status --store --json's permissions: %v\n%s", err, js)
	}
	if p := sj.Permissions.Pending[0]; p.ID != "abc123" || !strings.HasPrefix(p.Deny, "massgen-mcp deny --store '") || !strings.HasSuffix(p.Deny, "' --tenant acme abc123") {
		t.Errorf("the pending ask's commands: %+v; want them to name the store and the tenant", p)
	}
	if plain, _, code := cliSplit(t, "status", "--store", dsn, "--tenant", "acme", s.ID); code != 0 || !strings.Contains(plain, "--tenant acme abc123") {
		t.Errorf("plain status --store: exit %d\n%s", code, plain)
	}
	out, errOut, code := cliSplit(t, "deny", "--store", dsn, "--tenant", "acme", "abc123")
	if code != 0 || !strings.Contains(out, "refused abc123 in session "+s.ID) {
		t.Fatalf("deny --store: exit %d\n%s%s", code, out, errOut)
	}
	resp, ok, err := box.ApprovalAnswer(ctx, s.ID, "abc123")
	if !ok || err != nil || resp.Approve || !strings.HasPrefix(resp.By, "massgen-mcp deny") {
		t.Fatalf("the stored answer is %+v (%v, %v)", resp, ok, err)
	}
	if _, errOut, code := cliSplit(t, "approve", "--store", dsn, "--tenant", "acme", "--session", s.ID, "abc123"); code == 0 || !strings.Contains(errOut, "already answered") {
		t.Errorf("approving an answered ask: exit %d %s", code, errOut)
	}
}

// TestStoreFlagsMaskTheDatabasePassword: the commands status prints for a
// PostgreSQL store name it without its password.
func TestStoreFlagsMaskTheDatabasePassword(t *testing.T) {
	got := storeFlags("postgres://massgen:hunter2-not-a-key-0000@db:5432/massgen", "acme")
	if strings.Contains(got, "hunter2") || !strings.Contains(got, "--store 'postgres://massgen:xxxxx@db:5432/massgen'") || !strings.HasSuffix(got, " --tenant acme") {
		t.Errorf("storeFlags = %q", got)
	}
	if got := storeFlags("postgres://massgen@db/massgen?password=hunter2-not-a-key-0000&sslmode=disable", ""); strings.Contains(got, "hunter2") || !strings.Contains(got, "password=xxxxx") {
		t.Errorf("storeFlags with a password in the query = %q", got)
	}
	t.Setenv("MASSGEN_STORE", "postgres://massgen:hunter2-not-a-key-0000@db/massgen")
	if got := storeFlags("", "acme"); got != ` --store "$MASSGEN_STORE" --tenant acme` {
		t.Errorf("a store from $MASSGEN_STORE prints as %q; want the variable", got)
	}
	if got := storeFlags("file", ""); got != "" {
		t.Errorf("the file store's default tenant needs no flags; got %q", got)
	}
}

// TestAnAskWhoseServerDiedIsRefusedWithWhatToDo: a server killed while
// its step asked leaves the request unanswered. Past its expiry status
// lists it no more but shows it refused by its timeout, its asker gone,
// and answering it says it expired and what to do instead.
func TestAnAskWhoseServerDiedIsRefusedWithWhatToDo(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	svc := newService(dir, 1)
	s, err := svc.Create(ctx, coordination.TeamSpec{Task: "x", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	asked := time.Now().Add(-time.Minute).UTC()
	req := permissions.ApprovalRequest{ID: "dead12", Session: s.ID, Agent: "agent_b", Tool: "run_command", Step: 1,
		Action: permissions.Action{Kind: permissions.Git, Target: "push origin main"}, Risk: permissions.RiskExternal, Rule: "role workspace", Asked: asked, Expires: asked.Add(30 * time.Second)}
	b, _ := json.Marshal(req)
	sdir := coordination.DirOf(svc.Store(), s.ID)
	if err := os.MkdirAll(filepath.Join(sdir, "requests"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sdir, "requests", "dead12.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := cliSplit(t, "status", "--state-dir", dir, s.ID)
	if code != 0 || strings.Contains(out, "waiting:") || !strings.Contains(out, "0 approved, 1 refused") ||
		!strings.Contains(out, "refused: git(push origin main) (role workspace; file handshake (timeout: the asking step was gone))") {
		t.Errorf("status (exit %d) of a dead asker's ask:\n%s%s", code, out, errOut)
	}
	out, code = cli(t, "approve", "--state-dir", dir, "--session", s.ID, "dead12")
	if code != exitBadInput || !strings.Contains(out, "refused at its timeout") || !strings.Contains(out, "no longer waits") ||
		!strings.Contains(out, "To fix: nothing waits for this answer any more") || !strings.Contains(out, "massgen-mcp status --state-dir "+shellQuote(dir)+" "+s.ID) {
		t.Errorf("approving a dead asker's ask: exit %d\n%s", code, out)
	}
}
