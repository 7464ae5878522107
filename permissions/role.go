package permissions

// Role is a preset of an agent's permissions, under the operator's rules.
type Role string

// The role presets.
const (
	// ReadOnly reads and runs commands in a sandbox with no writable path;
	// it writes nothing, reaches no network, pushes and publishes nothing.
	ReadOnly Role = "read-only"
	// Workspace (the default) edits its workspace and runs commands there;
	// network, writes outside the workspace, git push, publishing and
	// privilege are asked.
	Workspace Role = "workspace"
	// Builder is Workspace that may also reach the network and push (a
	// force push is still asked); publishing and privilege are asked.
	Builder Role = "builder"
)

// Roles lists the presets, strictest first.
var Roles = []Role{ReadOnly, Workspace, Builder}

func (r Role) valid() bool { return r == ReadOnly || r == Workspace || r == Builder }

func (r Role) rank() int {
	switch r {
	case ReadOnly:
		return 0
	case Builder:
		return 2
	}
	return 1 // Workspace, and the default ""
}

// Or is the role, or Workspace when none was set.
func (r Role) Or() Role {
	if r == "" {
		return Workspace
	}
	return r
}

// SandboxReadOnly tells whether the role empties the sandbox's writable
// set: the workspace is bound read-only and nothing else is writable but
// scratch (/tmp, HOME) that vanishes with the sandbox. The OS enforces this,
// whatever a command hides.
func (r Role) SandboxReadOnly() bool { return r == ReadOnly }

// verdictAt is the role's own verdict on an action no rule named, of
// the risk given (RiskOf, asked once by decideOne).
func (r Role) verdictAt(a Action, risk Risk) Verdict {
	switch r.Or() {
	case ReadOnly:
		switch a.Kind {
		case Read:
			return Allow
		case Exec:
			if risk == RiskLocal {
				return Allow // the sandbox has no writable path
			}
			return Deny
		case MCP:
			return Ask // a server may write where the sandbox cannot see
		case Net:
			if a.Target == WebSearch {
				return Allow
			}
		}
		return Deny
	case Builder:
		switch {
		case a.Kind == Net:
			return Allow
		case a.Kind == Git && forcePush(a.Target):
			return Ask
		case a.Kind == Git:
			return Allow
		}
	}
	if risk.rank() <= RiskLocal.rank() {
		return Allow
	}
	return Ask
}
