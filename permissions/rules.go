package permissions

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Rules are an agent's permissions as the operator wrote them (a team
// file's `permissions:`, the agent's own, the server's config), with what
// a client added to narrow them.
type Rules struct {
	// Role is the preset under the rules: read-only, workspace (the
	// default) or builder.
	Role Role `json:"role,omitempty" yaml:"role,omitempty"`
	// Allow, Ask and Deny are action patterns, kind(glob): exec(go test *),
	// write(docs/**), net(*.github.com), git(push*), mcp(search/*). A glob's
	// * matches any run of characters, / included; a bare kind (net) is
	// kind(*). A deny that matches wins; else the most specific matching
	// allow or ask (the most literal characters; a tie asks); else the role.
	Allow []string `json:"allow,omitempty" yaml:"allow,omitempty"`
	Ask   []string `json:"ask,omitempty" yaml:"ask,omitempty"`
	Deny  []string `json:"deny,omitempty" yaml:"deny,omitempty"`
	// AlwaysAsk patterns ask even where an allow rule or the role would
	// allow (never where a deny or the role denies): a client's narrowing
	// puts its asks here, so it cannot turn a deny into an ask.
	AlwaysAsk []string `json:"always_ask,omitempty" yaml:"always_ask,omitempty"`
	// Approvals is the automation policy that answers an ask: risk-based
	// (the default), deny-all or allow-all (operator only).
	Approvals Policy `json:"approvals,omitempty" yaml:"approvals,omitempty"`
	// ApprovalTimeoutSeconds bounds the wait for a person's answer (the
	// file handshake, elicitation); past it the ask is refused. 0 is the
	// default, DefaultApprovalTimeout.
	ApprovalTimeoutSeconds int `json:"approval_timeout_seconds,omitempty" yaml:"approval_timeout_seconds,omitempty"`
}

// Pattern is one rule's action pattern.
type Pattern struct {
	Kind Kind
	Glob string
}

func (p Pattern) String() string { return string(p.Kind) + "(" + p.Glob + ")" }

// specificity is how many literal characters a pattern holds.
func (p Pattern) specificity() int { return len(p.Glob) - strings.Count(p.Glob, "*") }

// Matches tells whether an action fits the pattern.
func (p Pattern) Matches(a Action) bool { return p.Kind == a.Kind && glob(p.Glob, a.Target) }

// ParsePattern reads kind(glob) or a bare kind.
func ParsePattern(s string) (Pattern, error) {
	s = strings.TrimSpace(s)
	if Kind(s).valid() {
		return Pattern{Kind: Kind(s), Glob: "*"}, nil
	}
	a, err := ParseAction(s)
	if err != nil {
		return Pattern{}, fmt.Errorf("rule %q: %w", s, err)
	}
	return Pattern{Kind: a.Kind, Glob: a.Target}, nil
}

// Validate checks every field and words each problem for the team file's
// author.
func (r Rules) Validate() error {
	var errs []error
	if r.Role != "" && !r.Role.valid() {
		errs = append(errs, fmt.Errorf("permissions: role %q is not one of read-only, workspace, builder", r.Role))
	}
	if r.Approvals != "" && !r.Approvals.valid() {
		errs = append(errs, fmt.Errorf("permissions: approvals %q is not one of risk-based, deny-all, allow-all", r.Approvals))
	}
	if most := int(MaxApprovalTimeout / time.Second); r.ApprovalTimeoutSeconds < 0 || r.ApprovalTimeoutSeconds > most {
		errs = append(errs, fmt.Errorf("permissions: approval_timeout_seconds %d is not between 0 and %d", r.ApprovalTimeoutSeconds, most))
	}
	for _, list := range [][]string{r.Allow, r.Ask, r.Deny, r.AlwaysAsk} {
		for _, s := range list {
			if _, err := ParsePattern(s); err != nil {
				errs = append(errs, fmt.Errorf("permissions: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// Over lays r over base (an agent's rules over its team's, a team file's
// over the server's): r's role and policy win where set, the lists add up.
func (r Rules) Over(base Rules) Rules {
	out := base
	if r.Role != "" {
		out.Role = r.Role
	}
	if r.Approvals != "" {
		out.Approvals = r.Approvals
	}
	if r.ApprovalTimeoutSeconds != 0 {
		out.ApprovalTimeoutSeconds = r.ApprovalTimeoutSeconds
	}
	out.Allow = join(base.Allow, r.Allow)
	out.Ask = join(base.Ask, r.Ask)
	out.Deny = join(base.Deny, r.Deny)
	out.AlwaysAsk = join(base.AlwaysAsk, r.AlwaysAsk)
	return out
}

// IsZero tells whether no permission was set.
func (r Rules) IsZero() bool {
	return r.Role == "" && r.Approvals == "" && r.ApprovalTimeoutSeconds == 0 &&
		len(r.Allow)+len(r.Ask)+len(r.Deny)+len(r.AlwaysAsk) == 0
}

func join(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	return append(append([]string(nil), a...), b...)
}

// glob matches s against a pattern whose * matches any run of characters.
func glob(pattern, s string) bool {
	px, sx := 0, 0
	nextP, nextS := -1, -1
	for px < len(pattern) || sx < len(s) {
		if px < len(pattern) {
			if c := pattern[px]; c == '*' {
				nextP, nextS = px, sx+1
				px++
				continue
			} else if sx < len(s) && s[sx] == c {
				px++
				sx++
				continue
			}
		}
		if nextP >= 0 && nextS <= len(s) {
			px, sx = nextP+1, nextS
			nextS++
			continue
		}
		return false
	}
	return true
}
