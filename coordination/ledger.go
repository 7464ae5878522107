package coordination

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers"
)

// EntryKind is what an agent's ledger entry records.
type EntryKind string

const (
	KindAnswer EntryKind = "answer"
	KindVote   EntryKind = "vote"
	KindError  EntryKind = "error"
)

// Entry is one step of one agent: an answer, a vote, or an error. Entries are
// append-only and numbered per agent from 1.
type Entry struct {
	Agent string    `json:"agent_id"`
	Step  int       `json:"step"`
	Kind  EntryKind `json:"kind"`
	Time  time.Time `json:"timestamp"`

	// answer
	Content   string `json:"content,omitempty"`
	AnswerNum int    `json:"answer_number,omitempty"` // k in agentN.k
	Label     string `json:"label,omitempty"`
	// answer in a review session: the reviewer's plan (canonical JSON of a
	// Plan), verdict and concerns; Content holds the whole review as read.
	Plan     json.RawMessage `json:"plan,omitempty"`
	Verdict  string          `json:"verdict,omitempty"`
	Concerns []string        `json:"concerns,omitempty"`

	// vote
	Target      string `json:"target,omitempty"` // the real agent id voted for
	TargetLabel string `json:"target_label,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Revote      bool   `json:"revote,omitempty"`

	// answer and vote: the latest answer step of every agent as this agent
	// saw it when its step started.
	SeenSteps map[string]int `json:"seen_steps,omitempty"`

	// error
	Class   providers.Class `json:"class,omitempty"`
	Message string          `json:"message,omitempty"`
	// RetryAfterMS is the wait the provider asked for with its failure
	// (providers.Error.RetryAfter), in milliseconds; 0 when it named none.
	// The chat surface passes it on to a client its run's failure is
	// answered to.
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`

	Usage           providers.Usage `json:"usage"`
	DurationSeconds float64         `json:"duration_seconds"`

	// Stage is an answer's workspace snapshot, staged in a directory the
	// store renames into place with the step (files.go); never stored itself.
	Stage string `json:"-"`
}

// SessionEntryKind is a session-level fact.
type SessionEntryKind string

const (
	SessionRevote    SessionEntryKind = "revote"    // the team's votes were split; Agents re-vote once
	SessionDecided   SessionEntryKind = "decided"   // a winner is chosen; the final call is pending
	SessionFinished  SessionEntryKind = "finished"  // the result is final
	SessionCancelled SessionEntryKind = "cancelled" // stopped; resumable
	SessionResumed   SessionEntryKind = "resumed"   // a cancelled session runs again
	// SessionUsage is spend outside any step: a cancelled provider call's
	// reported usage, the final call of present/synthesize. It counts in
	// the session's usage, cost and budget, never as a step or a failure.
	SessionUsage SessionEntryKind = "usage"
	// SessionApplied records that the winner's pending changes were written
	// to the write context (apply.go): Applied says what was written.
	SessionApplied SessionEntryKind = "applied"
)

// SessionEntry is one session-level fact, numbered from 1.
type SessionEntry struct {
	Seq    int              `json:"seq"`
	Kind   SessionEntryKind `json:"kind"`
	Time   time.Time        `json:"timestamp"`
	Agents []string         `json:"agents,omitempty"` // revote: who is asked
	Result *TeamResult      `json:"result,omitempty"` // decided, finished
	Reason string           `json:"reason,omitempty"`
	Usage  *providers.Usage `json:"usage,omitempty"` // usage: what was spent (Agents: by whom)
	// Spender is the key a usage entry's spend was shared under among
	// replicas (SpendSharingStepLock.SpendKey): the step's own late record
	// and the record of a replica that took the step over from it name the
	// same key, and the second counts only what the first did not.
	Spender string `json:"spender,omitempty"`
	// Applied is what an apply wrote (applied).
	Applied *workspace.Applied `json:"applied,omitempty"`
}

// Ledger is everything a session has recorded: each agent's entries in step
// order and the session entries in order.
type Ledger struct {
	Agents  map[string][]Entry `json:"agents"`
	Session []SessionEntry     `json:"session"`
	// Born is when the session this ledger is of was created, as a store
	// shared with other processes reads it with the ledger (zero from a
	// store that does not say): a session deleted there and made again
	// under its id is told from the one whose setup this process keeps
	// (sessions.load).
	Born time.Time `json:"-"`
}

// Event is one line of events.jsonl: a human-readable timeline, never read
// back by the protocol.
type Event struct {
	Time    time.Time      `json:"timestamp"`
	Type    string         `json:"type"`
	Agent   string         `json:"agent_id,omitempty"`
	Step    int            `json:"step,omitempty"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

// IssuedView records the seen_steps last handed to a host agent, so its
// submission can be checked against it.
type IssuedView struct {
	SeenSteps map[string]int `json:"seen_steps"`
	Revote    bool           `json:"revote,omitempty"`
	IssuedAt  time.Time      `json:"issued_at"`
	// Landed is the step the view's one accepted submission landed as (0:
	// none yet), and Submission that submission's fingerprint, so that an
	// identical resubmission (a client's retry) gets the original result
	// and any other is refused.
	Landed     int    `json:"landed_step,omitempty"`
	Submission string `json:"submission,omitempty"`
}

// Clone is a copy of e that shares nothing with it: its maps, slices and
// pointers copied (an empty seen_steps is nil, as every store reads it
// back). A store hands one out so its caller may keep or change it.
func (e Entry) Clone() Entry {
	if len(e.SeenSteps) == 0 {
		e.SeenSteps = nil
	} else {
		e.SeenSteps = maps.Clone(e.SeenSteps)
	}
	if e.Usage.CostUSD != nil {
		c := *e.Usage.CostUSD
		e.Usage.CostUSD = &c
	}
	e.Plan = bytes.Clone(e.Plan)
	e.Concerns = slices.Clone(e.Concerns)
	return e
}

// Kept returns the entry with only the fields an entry of its kind carries:
// what every store keeps and a later read returns (the file store's step
// files have no place for the rest). Maps and slices are shared with e.
func (e Entry) Kept() Entry {
	out := Entry{
		Agent: e.Agent, Step: e.Step, Kind: e.Kind, Time: e.Time,
		Usage: e.Usage, DurationSeconds: e.DurationSeconds,
	}
	switch e.Kind {
	case KindAnswer:
		out.Content, out.AnswerNum, out.Label, out.SeenSteps = e.Content, e.AnswerNum, e.Label, e.SeenSteps
		out.Plan, out.Verdict, out.Concerns = e.Plan, e.Verdict, e.Concerns
	case KindVote:
		out.Target, out.TargetLabel, out.Reason, out.Revote, out.SeenSteps = e.Target, e.TargetLabel, e.Reason, e.Revote, e.SeenSteps
	case KindError:
		out.Class, out.Message, out.RetryAfterMS = e.Class, e.Message, e.RetryAfterMS
	}
	return out
}
