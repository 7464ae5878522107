package coordination

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A session's setup is stored as JSON, where a NUL is written \u0000;
// PostgreSQL's store cannot decode that escape (its queries and a partial
// index read setup->>'driver'), so such a session could not be stored
// there while the file store kept it. A client's text with a NUL is refused
// on every store, naming where it is; a model's answer carried into a
// follow-up's history has its NULs replaced (noNul).

// nulProblem names the first text of a new session holding a NUL, "" when
// none does.
func nulProblem(s *Session) string {
	if strings.ContainsRune(s.Task, 0) {
		return "the task"
	}
	for i, c := range s.Context {
		if strings.ContainsRune(c, 0) {
			return fmt.Sprintf("context item %d", i+1)
		}
	}
	b, err := json.Marshal(s)
	if err == nil && jsonHoldsNul(b) {
		return "a text of the team (a system message, a criterion …)"
	}
	return ""
}

// checkNoNul refuses a new session with a NUL in any of its texts.
func checkNoNul(s *Session) error {
	if where := nulProblem(s); where != "" {
		return fmt.Errorf("%w: %s holds a NUL character (U+0000), which a session's text may not hold; remove it", ErrBadInput, where)
	}
	return nil
}

// jsonHoldsNul tells whether JSON text holds the escape \u0000 (a NUL in a
// string), not a backslash written out before "u0000".
func jsonHoldsNul(b []byte) bool {
	for i := 0; i+6 <= len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if string(b[i:i+6]) == `\u0000` {
			return true
		}
		i++ // the escaped character: a written-out backslash is `\\`
	}
	return false
}

// noNul replaces a text's NULs with U+FFFD, for a model's answer carried
// where a session's text goes.
func noNul(s string) string {
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}
