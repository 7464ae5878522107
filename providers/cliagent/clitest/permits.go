package clitest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
)

// Permits is a step's permission engine for the CLI tests: the rules'
// decision (permissions.Decide), an ask answered by the risk-based policy
// with nobody to ask, and the audit kept in memory, as coordination keeps
// it in permissions.jsonl.
type Permits struct {
	R permissions.Rules

	mu      sync.Mutex
	records []permissions.Record
}

// ReadOnly is the engine for an agent of the read-only role.
func ReadOnly() *Permits { return &Permits{R: permissions.Rules{Role: permissions.ReadOnly}} }

func (p *Permits) Rules() permissions.Rules { return p.R }

func (p *Permits) Check(_ context.Context, tool string, actions []permissions.Action) (bool, string) {
	d := permissions.Decide(p.R, actions...)
	rec := permissions.Record{Time: time.Now(), Agent: "agent_a", Tool: tool, Action: d.Action, Risk: d.Risk,
		Verdict: d.Verdict, Rule: d.Rule, Floor: d.Floor}
	switch d.Verdict {
	case permissions.Allow:
		rec.Outcome = permissions.Allowed
	case permissions.Deny:
		rec.Outcome = permissions.Denied
	default:
		approved, _ := permissions.Policy("").Automatic(d)
		rec.Outcome, rec.By = permissions.Refused, "nobody to ask"
		if approved {
			rec.Outcome, rec.By = permissions.Approved, "policy risk-based"
		}
	}
	p.mu.Lock()
	p.records = append(p.records, rec)
	p.mu.Unlock()
	if rec.Outcome.Ran() {
		return true, ""
	}
	return false, d.Refusal("")
}

func (p *Permits) Note(rec permissions.Record) {
	rec.Time, rec.Agent = time.Now(), "agent_a"
	p.mu.Lock()
	p.records = append(p.records, rec)
	p.mu.Unlock()
}

// Records is the audit so far.
func (p *Permits) Records() []permissions.Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]permissions.Record(nil), p.records...)
}

// Lines is the audit as one line a record, for a failing test's log.
func (p *Permits) Lines() string {
	var b strings.Builder
	for _, r := range p.Records() {
		fmt.Fprintf(&b, "%s %s %s %s [%s] %s\n", r.Tool, r.Action, r.Verdict, r.Outcome, r.Rule, r.By)
	}
	return b.String()
}

// AssertRefused checks that the audit holds a call of tool refused (by
// the rules or the floor, or its ask refused) whose action is of kind, and
// at least one coarse line; it returns that record.
func (p *Permits) AssertRefused(t testing.TB, tool string, kind permissions.Kind) permissions.Record {
	t.Helper()
	coarse := 0
	for _, r := range p.Records() {
		if !r.IsCall() {
			coarse++
		}
	}
	if coarse == 0 {
		t.Errorf("the audit has no line of the run's settings:\n%s", p.Lines())
	}
	for _, r := range p.Records() {
		if r.Tool == tool && r.Action.Kind == kind && !r.Outcome.Ran() {
			return r
		}
	}
	t.Fatalf("the audit has no refused %s call of kind %s:\n%s", tool, kind, p.Lines())
	return permissions.Record{}
}
