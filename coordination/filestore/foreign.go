package filestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/criteria"
)

// foreignModel is the model of an agent MassGen ran: the session directory
// does not say which.
const foreignModel = "massgen"

// foreignSession synthesises the setup of a session written by `massgen
// --step` (no session.json): the agents are the directories under agents/, the
// rules the defaults, and labels alphabetical, as MassGen numbers agents by
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
	rules.Labels = coordination.LabelsAlphabetical
	sess := &coordination.Session{
		ID:      id,
		Rules:   rules,
		Agents:  make([]coordination.Agent, len(agents)),
		Anon:    make(map[string]int, len(agents)),
		Foreign: true,
	}
	for i, a := range agents {
		sess.Agents[i] = coordination.Agent{ID: a, Model: foreignModel}
		sess.Anon[a] = i + 1
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
	data, err := os.ReadFile(filepath.Join(dir, "status.json"))
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

// massgenCriterion is one criterion as MassGen's --eval-criteria reads it.
type massgenCriterion struct {
	ID           string   `json:"id,omitempty"`
	Text         string   `json:"text"`
	Category     string   `json:"category"`
	VerifyBy     string   `json:"verify_by,omitempty"`
	AntiPatterns []string `json:"anti_patterns,omitempty"`
}

type massgenCriteriaFile struct {
	Criteria []massgenCriterion `json:"criteria"`
}

// massgenCriteria renders criteria in the shape `massgen --eval-criteria`
// accepts, with MassGen's tiers (must↔primary, should↔standard,
// could↔stretch), so an external orchestrator can pass the file straight on.
// session.json keeps our own shape; this file is for MassGen.
func massgenCriteria(items []criteria.Item) massgenCriteriaFile {
	out := massgenCriteriaFile{Criteria: make([]massgenCriterion, len(items))}
	for i, it := range items {
		tier := "standard"
		switch it.Category {
		case "must":
			tier = "primary"
		case "could":
			tier = "stretch"
		}
		out.Criteria[i] = massgenCriterion{ID: it.ID, Text: it.Text, Category: tier, VerifyBy: it.VerifyBy, AntiPatterns: it.AntiPatterns}
	}
	return out
}

// readCriteria reads eval_criteria.json loosely: a list or {"criteria": […]},
// text taken from text, description or name, tiers from either vocabulary, ids
// E1… where missing. A missing file is no criteria.
func readCriteria(path string) ([]criteria.Item, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type loose struct {
		ID           string   `json:"id"`
		Text         string   `json:"text"`
		Description  string   `json:"description"`
		Name         string   `json:"name"`
		Category     string   `json:"category"`
		VerifyBy     string   `json:"verify_by"`
		AntiPatterns []string `json:"anti_patterns"`
	}
	var list []loose
	if json.Unmarshal(data, &list) != nil {
		var wrapped struct {
			Criteria []loose `json:"criteria"`
		}
		if err := json.Unmarshal(data, &wrapped); err != nil {
			return nil, fmt.Errorf("eval_criteria.json is neither a list of criteria nor {\"criteria\": [...]} (%v); fix or remove it", err)
		}
		list = wrapped.Criteria
	}
	var items []criteria.Item
	for _, l := range list {
		text := l.Text
		if text == "" {
			text = l.Description
		}
		if text == "" {
			text = l.Name
		}
		if text == "" {
			continue
		}
		it := criteria.Item{ID: l.ID, Text: text, VerifyBy: l.VerifyBy, AntiPatterns: l.AntiPatterns}
		switch strings.ToLower(l.Category) {
		case "primary", "must":
			it.Category = "must"
		case "stretch", "could":
			it.Category = "could"
		default:
			it.Category = "should"
		}
		if it.ID == "" {
			it.ID = fmt.Sprintf("E%d", len(items)+1)
		}
		items = append(items, it)
	}
	return items, nil
}
