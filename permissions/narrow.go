package permissions

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrWidens marks a client's permissions that would loosen the operator's:
// a client (an MCP caller) may only make an agent's rules stricter.
var ErrWidens = errors.New("a client may narrow permissions, never widen them")

// Narrow applies a client's rules to the operator's: the client may only
// make them stricter. Its deny rules are added; its asks (and always_ask)
// become AlwaysAsk, so they cannot turn the operator's deny into an ask; a
// stricter role (read-only < workspace < builder), a stricter policy
// (deny-all < risk-based < allow-all) and a shorter approval timeout
// replace the operator's. Anything that would widen is an ErrWidens error
// naming the field: an allow rule the operator's allow list lacks (one it
// has is kept, and changes nothing), a looser role or policy (allow-all
// among them, unless the operator chose it), a longer timeout. The floor is
// untouched: no rule of anyone's reaches it.
func Narrow(operator, client Rules) (Rules, error) {
	if err := client.Validate(); err != nil {
		return operator, err
	}
	var errs []error
	for _, p := range client.Allow {
		if !slices.ContainsFunc(operator.Allow, func(o string) bool { return strings.TrimSpace(o) == strings.TrimSpace(p) }) {
			errs = append(errs, fmt.Errorf("permissions.allow %q: the operator allows no such thing (only their team file or server config can)", p))
		}
	}
	out := operator
	if r := client.Role; r != "" {
		switch {
		case r.rank() > operator.Role.rank():
			errs = append(errs, fmt.Errorf("permissions.role %s is looser than the operator's %s (read-only < workspace < builder)", r, operator.Role.Or()))
		case r.rank() < operator.Role.rank():
			out.Role = r
		}
	}
	if p := client.Approvals; p != "" {
		switch {
		case p.rank() > operator.Approvals.rank():
			errs = append(errs, fmt.Errorf("permissions.approvals %s is looser than the operator's %s (deny-all < risk-based < allow-all)", p, operator.Approvals.Or()))
		case p.rank() < operator.Approvals.rank():
			out.Approvals = p
		}
	}
	if t := client.ApprovalTimeoutSeconds; t > 0 {
		if op := int(operator.Timeout().Seconds()); t > op {
			errs = append(errs, fmt.Errorf("permissions.approval_timeout_seconds %d is longer than the operator's %d", t, op))
		} else {
			out.ApprovalTimeoutSeconds = t
		}
	}
	if err := errors.Join(errs...); err != nil {
		return operator, fmt.Errorf("%w: %w", ErrWidens, err)
	}
	out.Deny = join(operator.Deny, client.Deny)
	out.AlwaysAsk = join(operator.AlwaysAsk, join(client.Ask, client.AlwaysAsk))
	return out, nil
}

// rank orders the policies by how much they approve.
func (p Policy) rank() int {
	switch p.Or() {
	case DenyAll:
		return 0
	case AllowAll:
		return 2
	}
	return 1
}

// Unfit is what an agent runs on when its client's narrowing no longer fits
// the operator's rules (the operator tightened them under a session Narrow
// had accepted): the operator's rules with the client's denies and asks
// added, the stricter role and the shorter timeout, and every ask refused
// (deny-all), so nothing runs on rules nobody chose. The client's allows
// and looser settings are dropped, never applied.
func Unfit(operator, client Rules) Rules {
	out := operator
	out.Approvals = DenyAll
	if r := client.Role; r != "" && r.rank() < operator.Role.rank() {
		out.Role = r
	}
	if t := client.ApprovalTimeoutSeconds; t > 0 && t < int(operator.Timeout().Seconds()) {
		out.ApprovalTimeoutSeconds = t
	}
	out.Deny = join(operator.Deny, client.Deny)
	out.AlwaysAsk = join(operator.AlwaysAsk, join(client.Ask, client.AlwaysAsk))
	return out
}
