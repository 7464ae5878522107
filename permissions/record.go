package permissions

import (
	"strings"
	"time"
)

// Record is one decision as the session's permissions.jsonl keeps it: what
// was about to happen, what the rules said, how an ask was answered, by
// whom and when. Its strings are masked of secrets before it is written.
type Record struct {
	Time    time.Time `json:"time"`
	Agent   string    `json:"agent"`
	Step    int       `json:"step,omitempty"`
	Tool    string    `json:"tool"`
	Action  Action    `json:"action"`
	Risk    Risk      `json:"risk"`
	Verdict Verdict   `json:"verdict"`
	Rule    string    `json:"rule"`
	Floor   bool      `json:"floor,omitempty"`
	// Outcome is what happened to the call: allowed (the rules, or a
	// CLI's own settings for a call it ran unasked), denied (the rules or
	// the floor), approved or refused (an ask's answer), failed (a call a
	// CLI ran unasked that its stream reported as an error).
	Outcome Outcome `json:"outcome"`
	// By is who answered an ask: "policy risk-based", "policy allow-all",
	// "policy deny-all", "elicitation", "file handshake (<who>)",
	// "timeout", "nobody to ask". Empty when the rules decided.
	By string `json:"by,omitempty"`
	// Request is the id of the ask's request, when one was made.
	Request string `json:"request,omitempty"`
	// Lease is the version of the step's lease (its claim) the call was
	// made under: a step taken over counts the calls of the claims it
	// carries on from. 0 for a step without one.
	Lease int64 `json:"lease,omitempty"`
}

// Outcome is what became of a call the rules decided.
type Outcome string

// The outcomes.
const (
	Allowed  Outcome = "allowed"
	Denied   Outcome = "denied"
	Approved Outcome = "approved"
	Refused  Outcome = "refused"
	// Failed is a call its CLI ran without asking that its stream reported
	// as an error: it may not have run at all (Claude Code checks an
	// edit's input before it would ask, and reports the refusal so).
	Failed Outcome = "failed"
)

// runSettings ends the Tool of a line a CLI agent's step notes up front,
// of what its CLI's run settings decide (RunSettingsTool).
const runSettings = " (run settings)"

// RunSettingsTool is the Tool of a backend's run-settings lines: not a
// call, what the CLI's one-per-run settings let or refuse.
func RunSettingsTool(backend string) string { return backend + runSettings }

// IsCall tells whether the record decided one tool call, not a line of a
// CLI's run settings noted before any call.
func (r Record) IsCall() bool { return !strings.HasSuffix(r.Tool, runSettings) }

// Notable tells whether a person reading the trail should see the
// record: a call the rules or an ask stopped, one approved, or one that
// went ahead against the rules' verdict (a call its CLI ran without asking
// that the rules would have refused or asked about). Not a call its CLI
// reported failed unasked, which did nothing the rules stop, nor a
// run-settings line letting calls go on to be asked.
func (r Record) Notable() bool {
	switch r.Outcome {
	case Allowed:
		return r.IsCall() && r.Verdict != Allow
	case Failed:
		return false
	}
	return true
}

// Ran tells whether the call went ahead.
func (o Outcome) Ran() bool { return o == Allowed || o == Approved }
