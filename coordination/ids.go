package coordination

import "fmt"

// validID says whether id is safe as a path component and as a session or
// agent id. Session ids follow docs/DESIGN.md, "The store layout" (^[A-Za-z0-9_-]{1,64}$); agent ids
// may also hold dots, but never lead with one, which keeps out ".", ".." and
// a store's hidden lock and temp names.
func validID(id string, dots bool) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		case c == '.' && dots && i > 0:
		default:
			return false
		}
	}
	return true
}

// CheckSessionID refuses a session id that is not 1-64 letters, digits, '_'
// or '-'. Every store calls it before touching anything.
func CheckSessionID(id string) error {
	if validID(id, false) {
		return nil
	}
	return fmt.Errorf("session id %q is not valid: use 1 to 64 letters, digits, '_' or '-': %w", id, ErrBadInput)
}

// CheckAgentID refuses an agent id that could not be a directory name.
func CheckAgentID(id string) error {
	if validID(id, true) {
		return nil
	}
	return fmt.Errorf("agent id %q is not valid: use 1 to 64 letters, digits, '_', '-' or '.', not starting with '.': %w", id, ErrBadInput)
}
