package sim

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/massgen-go/massgen-mcp/providers"
)

// simCriterion is one template of the sim's criteria.
type simCriterion struct {
	text, category, verifyBy string
	anti                     []string
}

// simCriteria are what a sim writes when asked for evaluation criteria,
// the must first, so any count keeps exactly one. They are plainly marked
// as simulated: a dry run must never pass them off as a model's judgement.
var simCriteria = []simCriterion{
	{"does exactly what %s asks, every part of it and in the form asked for", "must", "split the task into its parts and tick each one off", []string{"answers a nearby question", "skips a part of the task"}},
	{"gets every claim, number and step right", "should", "recompute or look up each one", []string{"confident errors", "unchecked figures"}},
	{"handles the hard cases of the task, not only the easy one", "should", "try the answer on the hardest case you can think of", []string{"happy path only"}},
	{"puts the result first and is easy to follow", "should", "read only the first paragraph", []string{"long preamble"}},
	{"says briefly why, not only what", "could", "look for the reason behind each main claim", []string{"bare assertions"}},
	{"states the assumptions it makes", "could", "list what must be true for the answer to hold", []string{"hidden assumptions"}},
	{"warns about one pitfall an expert would mention", "could", "ask whether an expert would add a caveat", []string{"only the obvious"}},
	{"is no longer than it needs to be", "could", "strike every sentence that loses nothing when removed", []string{"padding"}},
}

// criteria answers a request for evaluation criteria (PurposeCriteria): as
// many as the offered tool asks for, through that tool, always valid, so a
// dry run with sim never falls back to the built-in defaults. Like every
// sim decision it is a pure function of the request.
func (s *simulator) criteria(req *providers.Request) providers.Action {
	name, n := "submit_criteria", 5
	if len(req.Tools) > 0 {
		name = req.Tools[0].Name
		n = wantedItems(req.Tools[0].Schema, n)
	}
	n = max(1, min(n, len(simCriteria)))
	subject := fmt.Sprintf("%q", clip(strings.Join(strings.Fields(req.Task), " "), 80))
	items := make([]map[string]any, n)
	for i := range items {
		c := simCriteria[i]
		text := c.text
		if strings.Contains(text, "%s") {
			text = fmt.Sprintf(text, subject)
		}
		items[i] = map[string]any{
			"id":            fmt.Sprintf("E%d", i+1),
			"text":          "[simulated] The answer " + text + ".",
			"category":      c.category,
			"verify_by":     c.verifyBy,
			"anti_patterns": c.anti,
		}
	}
	args, _ := json.Marshal(map[string]any{
		"criteria":   items,
		"aspiration": "[simulated] An answer to " + subject + " that an expert would accept as is.",
	})
	return providers.Action{Calls: []providers.ToolCall{{Name: name, Args: args}}}
}

// wantedItems reads how many criteria the tool's schema asks for (its
// criteria list's minItems), or def.
func wantedItems(schema json.RawMessage, def int) int {
	var sc struct {
		Properties struct {
			Criteria struct {
				MinItems int `json:"minItems"`
			} `json:"criteria"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &sc) != nil || sc.Properties.Criteria.MinItems <= 0 {
		return def
	}
	return sc.Properties.Criteria.MinItems
}

// clip cuts s to at most n runes, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
