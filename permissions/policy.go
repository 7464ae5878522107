package permissions

import "time"

// Policy is the automation that answers an ask when no person does.
type Policy string

// The policies.
const (
	// RiskBased (the default) approves an asked action of local risk or
	// less and puts anything riskier to a person (elicitation, the file
	// handshake); with nobody to ask it refuses.
	RiskBased Policy = "risk-based"
	// DenyAll refuses every ask.
	DenyAll Policy = "deny-all"
	// AllowAll approves every ask (never the floor, never a deny). Only an
	// operator can choose it.
	AllowAll Policy = "allow-all"
)

func (p Policy) valid() bool { return p == RiskBased || p == DenyAll || p == AllowAll }

// Or is the policy, or RiskBased when none was set.
func (p Policy) Or() Policy {
	if p == "" {
		return RiskBased
	}
	return p
}

// DefaultApprovalTimeout is how long an ask waits for a person, and
// MaxApprovalTimeout the longest the rules may set
// (approval_timeout_seconds).
const (
	DefaultApprovalTimeout = 5 * time.Minute
	MaxApprovalTimeout     = 24 * time.Hour
)

// Timeout is the rules' approval timeout, or the default.
func (r Rules) Timeout() time.Duration {
	if r.ApprovalTimeoutSeconds > 0 {
		return time.Duration(r.ApprovalTimeoutSeconds) * time.Second
	}
	return DefaultApprovalTimeout
}

// Automatic is the policy's own answer to an ask: approved, refused, or
// (human) to be put to a person.
func (p Policy) Automatic(d Decision) (approved, human bool) {
	switch p.Or() {
	case AllowAll:
		return true, false
	case DenyAll:
		return false, false
	}
	if d.Risk.rank() <= RiskLocal.rank() {
		return true, false
	}
	return false, true
}
