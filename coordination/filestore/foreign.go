package filestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/criteria"
)

// foreignModel is the model of an agent MassGen ran: the session directory
// does not say which.
const foreignModel = "massgen"

// foreignSession synthesises the setup of a session written by `massgen
// --step` (no session.json): the agents are the directories under agents/, the
// rules the defaults, and aliases alphabetical, as MassGen numbers agents by
// sorted id.
func (s *Store) foreignSession(dir, id string) (*coordination.Session, error) {
	agents, err := agentDirs(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s has neither session.json nor agents/, so it is not a session; check the path: %w", dir, coordination.ErrSessionNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the agents of session %q: %w", id, err)
	}
	rules, err := coordination.DefaultRules().Normalize()
	if err != nil {
		return nil, err
	}
	rules.Aliases = coordination.AliasesAlphabetical
	sess := &coordination.Session{
		ID:      id,
		Rules:   rules,
		Agents:  make([]coordination.Agent, len(agents)),
		Aliases: make(map[string]int, len(agents)),
		Foreign: true,
	}
	for i, a := range agents {
		sess.Agents[i] = coordination.Agent{ID: a, Model: foreignModel}
		sess.Aliases[a] = i + 1
	}
	var start time.Time
	sess.Task, start = statusMeta(dir)
	sess.CreatedAt = start
	if sess.CreatedAt.IsZero() {
		if fi, err := os.Stat(dir); err == nil {
			sess.CreatedAt = fi.ModTime().UTC()
		}
	}
	if sess.Criteria, err = readCriteria(filepath.Join(dir, "eval_criteria.json")); err != nil {
		return nil, fmt.Errorf("session %q: %w", id, err)
	}
	return sess, nil
}

// statusMeta reads meta.question and meta.start_time from status.json, if
// there is one. MassGen writes start_time as Unix seconds; a string is taken as
// a timestamp.
func statusMeta(dir string) (question string, start time.Time) {
	data, err := readJSONFile(filepath.Join(dir, "status.json"))
	if err != nil {
		return "", time.Time{}
	}
	var st struct {
		Meta struct {
			Question  string          `json:"question"`
			StartTime json.RawMessage `json:"start_time"`
		} `json:"meta"`
	}
	if json.Unmarshal(data, &st) != nil {
		return "", time.Time{}
	}
	var secs float64
	var text string
	switch {
	case json.Unmarshal(st.Meta.StartTime, &secs) == nil && secs > 0:
		whole, frac := math.Modf(secs)
		start = time.Unix(int64(whole), int64(frac*1e9)).UTC()
	case json.Unmarshal(st.Meta.StartTime, &text) == nil:
		start = parseStamp(text)
	}
	return st.Meta.Question, start
}

// massgenCriteria renders criteria in the shape `massgen --eval-criteria`
// accepts, with MassGen's tiers (must↔primary, should↔standard,
// could↔stretch), so an external orchestrator can pass the file straight on.
// session.json keeps our own shape; this file is for MassGen.
func massgenCriteria(items []criteria.Item) criteria.MassGenFile { return criteria.MassGen(items, "") }

// readCriteria reads eval_criteria.json loosely, as criteria.Parse reads
// every shape (a list or {"criteria": […]}, text from text, description or
// name, tiers from either vocabulary, ids E<position> where missing), but
// never refuses a file MassGen or a person wrote for lacking a must: an item
// without text is skipped and an unknown category read as should. A missing
// file is no criteria.
func readCriteria(path string) ([]criteria.Item, error) {
	data, err := readJSONFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	parsed, _, err := criteria.Parse(data)
	if err != nil {
		return nil, damaged(path, err)
	}
	var items []criteria.Item
	for _, it := range parsed {
		if it.Text == "" {
			continue
		}
		switch it.Category {
		case criteria.Must, criteria.Should, criteria.Could:
		default:
			it.Category = criteria.Should
		}
		items = append(items, it)
	}
	return items, nil
}
