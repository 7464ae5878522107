package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// TurnRecord is one finished turn of a conversation, as MassGen's
// multi-turn layout keeps it for people (massgen/cli.py
// handle_session_persistence):
//
//	<conversation>/turn_N/answer.txt      the turn's final answer
//	<conversation>/turn_N/metadata.json   {turn, timestamp, winning_agent, task, session_id}
//	<conversation>/turn_N/workspace       the winner's files (a link to its snapshot)
//	<conversation>/SESSION_SUMMARY.txt    every turn, appended as it finishes
type TurnRecord struct {
	Turn    int
	Session string
	Task    string
	Answer  string
	Winner  string
	Time    time.Time
	// Files is the winner's snapshot directory, "" when it delivered none.
	Files string
}

type turnMetadata struct {
	Turn      int    `json:"turn"`
	Timestamp string `json:"timestamp"`
	Winner    string `json:"winning_agent"`
	Task      string `json:"task"`
	Session   string `json:"session_id"`
}

// tempAge is how old a turn file's temp must be to be a crash's leftover
// rather than another write's, at work now.
const tempAge = time.Minute

// WriteTurn keeps a finished turn in the conversation's directory. Written
// again for the same session (a result amended), it replaces the answer and
// metadata and leaves the summary's entry alone. Two sessions that continue
// the same turn (a branch) both keep theirs: the second is
// turn_N_<session>.
func WriteTurn(conv string, r TurnRecord) (string, error) {
	if err := os.MkdirAll(conv, stateDirMode); err != nil {
		return "", err
	}
	name := fmt.Sprintf("turn_%d", r.Turn)
	if owner, ok := turnOwner(filepath.Join(conv, name)); ok && owner != r.Session {
		name += "_" + r.Session
	}
	dir := filepath.Join(conv, name)
	if err := os.MkdirAll(dir, stateDirMode); err != nil {
		return "", err
	}
	meta, err := json.MarshalIndent(turnMetadata{Turn: r.Turn, Timestamp: r.Time.UTC().Format(time.RFC3339), Winner: r.Winner, Task: r.Task, Session: r.Session}, "", "  ")
	if err != nil {
		return "", err
	}
	// A crash mid-write of this turn's files (an earlier write of it) left
	// their hidden temps here; nothing else looks in a turn directory, so
	// this write sweeps them, both files' in one reading of it.
	wholefile.Sweep(dir, time.Now().Add(-tempAge), wholefile.TempsOf("answer.txt", "metadata.json"))
	for _, f := range []struct {
		name string
		data []byte
	}{{"answer.txt", []byte(r.Answer)}, {"metadata.json", meta}} {
		if err := wholefile.Replace(filepath.Join(dir, f.name), f.data, stateFileMode); err != nil {
			return "", err
		}
	}
	link := filepath.Join(dir, "workspace")
	os.Remove(link)
	if r.Files != "" {
		target, err := filepath.Rel(dir, r.Files)
		if err != nil {
			target = r.Files
		}
		if err := os.Symlink(target, link); err != nil {
			return "", err
		}
	}
	return dir, appendSummary(conv, name, r)
}

// turnOwner is the session a turn directory was written for.
func turnOwner(dir string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(dir, "metadata.json"))
	if err != nil {
		return "", false
	}
	var m turnMetadata
	if json.Unmarshal(data, &m) != nil {
		return "", false
	}
	return m.Session, true
}

// appendSummary adds the turn to SESSION_SUMMARY.txt in MassGen's words,
// once: appends are O_APPEND writes, so two branches finishing together
// each add their block whole.
func appendSummary(conv, name string, r TurnRecord) error {
	path := filepath.Join(conv, "SESSION_SUMMARY.txt")
	rule := strings.Repeat("=", 80)
	header := fmt.Sprintf("TURN %d", r.Turn)
	if name != fmt.Sprintf("turn_%d", r.Turn) {
		header += " (" + r.Session + ")"
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if bytes.Contains(old, []byte("\n"+header+"\n")) && bytes.Contains(old, []byte("Session: "+r.Session+"\n")) {
		return nil
	}
	var b strings.Builder
	if len(old) == 0 {
		fmt.Fprintf(&b, "%s\nMulti-Turn Session: %s\n%s\n", rule, filepath.Base(conv), rule)
	}
	fmt.Fprintf(&b, "\n%s\n%s\n%s\n", rule, header, rule)
	fmt.Fprintf(&b, "Timestamp: %s\nSession: %s\nWinning Agent: %s\nTask: %s\n", r.Time.UTC().Format(time.RFC3339), r.Session, r.Winner, oneLine(r.Task))
	if r.Files != "" {
		fmt.Fprintf(&b, "Workspace: %s\n", filepath.Join(conv, name, "workspace"))
	}
	fmt.Fprintf(&b, "Answer: See %s\n", filepath.Join(conv, name, "answer.txt"))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, stateFileMode)
	if err != nil {
		return err
	}
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// UnlinkTurn removes the workspace link of every turn directory of conv
// written for session (a branch's turn_N_<session> included), once the
// session is deleted; nothing else of the turn changes. A conversation
// with no directory has nothing to remove.
func UnlinkTurn(conv, session string) error {
	des, err := os.ReadDir(conv)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, de := range des {
		dir := filepath.Join(conv, de.Name())
		if !de.IsDir() || !strings.HasPrefix(de.Name(), "turn_") {
			continue
		}
		if owner, ok := turnOwner(dir); !ok || owner != session {
			continue
		}
		if err := os.Remove(filepath.Join(dir, "workspace")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
