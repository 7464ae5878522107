package coordination

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// holderFacts is what holder says of a lease's owner beyond its id.
var holderFacts = regexp.MustCompile(`\(pid \d+ on [^,()]*, alive at [^()]*\)`)

// sessionsDirer is a store that keeps its sessions under one directory (the
// file store).
type sessionsDirer interface{ SessionsDir() string }

// ShownError is err's text for a client that must not see the server's
// own facts (Options.RelativeDirs): its paths hidden (HidePaths), and an
// unreachable store's error, which names the database's role, name and
// host, said in words of its own (with the cause the store can tell,
// OutageCauser); the operator's log keeps the details. Without RelativeDirs it is err's text as is. ctx is the request's
// (StoreUnreachable).
func (svc *Service) ShownError(ctx context.Context, err error) string {
	switch {
	case !svc.opts.RelativeDirs || !svc.storeDown(err):
		return svc.HidePaths(err.Error())
	case ctx.Err() != nil:
		// The request's own end, or the store's: either way the driver's
		// text is not the client's.
		return "the request ended (" + ctx.Err().Error() + ") while the server's store was not answering"
	}
	if cause := svc.outageCause(err); cause != "" {
		return "the server's store is unavailable just now: " + cause + " (its log has the details); try again later"
	}
	return storeUnreachableShown
}

const storeUnreachableShown = "the server's store could not be reached just now (its log has the details); try again in a few seconds"

// HidePaths rewrites the store's own paths in text meant for a client that
// must not see them (Options.RelativeDirs: HTTP clients, tenants): a path
// inside a session reads "session <id>'s <path in the session>", a session's
// directory "session <id>'s directory", and the sessions and state
// directories (a tenant's included) by those words; a lease holder's pid,
// host and heartbeat read "(another server process)". Errors from the store
// carry real paths, which the operator's log keeps; without RelativeDirs (the
// CLI, stdio) text is returned as is.
func (svc *Service) HidePaths(text string) string { return svc.pathHider()(text) }

// pathHider is HidePaths for many texts: the directories are looked up
// (their symlinks resolved) once.
func (svc *Service) pathHider() func(string) string {
	if !svc.opts.RelativeDirs {
		return func(text string) string { return text }
	}
	own := svc.ownPaths()
	return func(text string) string {
		// A lease holder's process, host and heartbeat (holder) are the
		// server's too.
		return own.hide(holderFacts.ReplaceAllString(text, "(another server process)"))
	}
}

// recordedText is text as the session's record keeps it (a failed step's
// error in its ledger entry, and so its step result, progress line,
// timeline event and last_error): the paths of this process's state
// directory and workspaces named as HidePaths names them, whatever
// Options.RelativeDirs. The record is read by every reader and every
// replica, whose own directories differ (PostgreSQL replicas with their
// own --state-dir), so a reader could not hide them; the path in the
// session ("session <id>'s agents/agent_a/workspace/notes.md") and the
// reason stay, and the operator's log keeps the real text.
func (svc *Service) recordedText(text string) string { return svc.ownPaths().hide(text) }

// ownPaths are the directories of this process's that a client is not
// shown: the sessions directory (a file store's, or a replica's
// workspaces) and the state directory, each as written and resolved.
type ownPaths struct{ sessions, states []string }

func (svc *Service) ownPaths() ownPaths {
	var own ownPaths
	if st, ok := svc.store.(sessionsDirer); ok && st.SessionsDir() != "" {
		own.sessions = spellings(st.SessionsDir())
	}
	if svc.opts.StateDir != "" {
		own.states = spellings(svc.opts.StateDir)
	}
	return own
}

// hide names own's paths in text by the words HidePaths uses.
func (own ownPaths) hide(text string) string {
	for _, sessions := range own.sessions {
		text = hideSessionPaths(text, sessions)
		text = replaceDir(text, sessions, "the sessions directory")
		text = replaceDir(text, filepath.Dir(sessions), "the state directory")
	}
	for _, state := range own.states {
		text = replaceDir(text, state, "the state directory")
	}
	return text
}

// replaceDir names dir in text by words where it is a whole path or a
// path's leading directories: followed by a separator, the end, or what
// ends a path in a message. /srv/mg-archive/input.csv is not under
// /srv/mg, and a recorded error keeps it as written.
func replaceDir(text, dir, words string) string {
	if dir == "" || dir == string(filepath.Separator) || !strings.Contains(text, dir) {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, dir)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		rest := text[i+len(dir):]
		if next, _ := utf8.DecodeRuneInString(rest); rest == "" || next == filepath.Separator || pathEnds(next) {
			b.WriteString(text[:i] + words)
		} else {
			b.WriteString(text[:i+len(dir)])
		}
		text = rest
	}
}

// spellings is a directory as written and with its symlinks resolved (an
// error from a system call may carry either).
func spellings(dir string) []string {
	out := []string{filepath.Clean(dir)}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != out[0] {
		out = append(out, real)
	}
	return out
}

// hideSessionPaths rewrites every "<sessions>/<id>[/<path>]" in text.
func hideSessionPaths(text, sessions string) string {
	prefix := sessions + string(filepath.Separator)
	var b strings.Builder
	for {
		i := strings.Index(text, prefix)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:i])
		rest := text[i+len(prefix):]
		end := strings.IndexFunc(rest, pathEnds)
		if end < 0 {
			end = len(rest)
		}
		id, inside, _ := strings.Cut(rest[:end], string(filepath.Separator))
		switch {
		case id == "":
			b.WriteString("the sessions directory" + string(filepath.Separator))
		case strings.Trim(inside, string(filepath.Separator)) == "":
			b.WriteString("session " + id + "'s directory")
		default:
			b.WriteString("session " + id + "'s " + filepath.Clean(inside))
		}
		text = rest[end:]
	}
}

// pathEnds tells a character that ends a path in a message: our layout's
// names never hold one.
func pathEnds(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '"' || r == '\'' || r == '`' || r == ':' || r == ',' || r == ';' || r == '(' || r == ')'
}
