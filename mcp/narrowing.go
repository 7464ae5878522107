package mcp

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// A client's permissions narrow the operator's rules for every agent
// (coordination.TeamSpec.Permissions), never widen them; the service
// refuses what would, naming the field. On the wire they are a list of
// "field:value" strings ("deny:exec(git push*)", "role:read-only") rather
// than an object: the same fields as a team file's permissions block, at a
// fifth of the schema every conversation pays for in tools/list.

// permissionFields are the fields a client's list may set.
var permissionFields = []string{"deny", "ask", "allow", "role", "approvals", "approval_timeout_seconds"}

// clientPermissions reads the list; nil when it is empty.
func clientPermissions(items []string) (*permissions.Rules, error) {
	if len(items) == 0 {
		return nil, nil
	}
	var r permissions.Rules
	once := map[string]bool{}
	for i, item := range items {
		field, value, ok := strings.Cut(item, ":")
		field, value = strings.TrimSpace(field), strings.TrimSpace(value)
		if !ok || value == "" {
			return nil, fmt.Errorf("%w: permissions[%d] %q is not field:value (%s), e.g. deny:exec(git push*)", coordination.ErrBadInput, i, item, strings.Join(permissionFields, ", "))
		}
		switch field {
		case "deny":
			r.Deny = append(r.Deny, value)
			continue
		case "ask":
			r.Ask = append(r.Ask, value)
			continue
		case "allow":
			r.Allow = append(r.Allow, value)
			continue
		}
		if once[field] {
			return nil, fmt.Errorf("%w: permissions[%d] sets %s a second time; give it once", coordination.ErrBadInput, i, field)
		}
		once[field] = true
		switch field {
		case "role":
			r.Role = permissions.Role(value)
		case "approvals":
			r.Approvals = permissions.Policy(value)
		case "approval_timeout_seconds":
			n, err := strconv.Atoi(value)
			if err != nil {
				return nil, fmt.Errorf("%w: permissions[%d] approval_timeout_seconds %q is not a whole number of seconds", coordination.ErrBadInput, i, value)
			}
			r.ApprovalTimeoutSeconds = n
		default:
			return nil, fmt.Errorf("%w: permissions[%d] field %q is not one of %s", coordination.ErrBadInput, i, field, strings.Join(permissionFields, ", "))
		}
	}
	return &r, nil
}
