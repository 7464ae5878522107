package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/massgen-go/massgen-mcp/providers"
)

// massgenSpellings are argument names MassGen's users bring, with the name
// this server uses and what it holds. A near miss finds most typos; these
// say why the name differs.
var massgenSpellings = map[string]struct{ ours, why string }{
	"model":   {"models", "a list of model specs, one per agent, e.g. [\"openai/gpt-5.4\", \"claude\"]; MassGen's model names one"},
	"backend": {"models", "a list of model specs, backend/model, e.g. [\"openai/gpt-5.4\", \"claude\"]"},
	"config":  {"team", "the name of a team file under the server's --teams-dir"},
}

// unknownArgumentHints says, for properties a schema does not allow, which
// allowed name was meant: MassGen's spelling of one of ours, or a near miss
// (edit distance 2 or less). props are the names allowed at that place.
func unknownArgumentHints(k *kind.AdditionalProperties, props []string) []string {
	var hints []string
	for _, name := range k.Properties {
		if m, ok := massgenSpellings[name]; ok && slices.Contains(props, m.ours) {
			hints = append(hints, fmt.Sprintf("for %s, did you mean %s (%s)?", name, m.ours, m.why))
			continue
		}
		if near := nearestName(name, props); near != "" {
			hints = append(hints, fmt.Sprintf("for %s, did you mean %s?", name, near))
		}
	}
	return hints
}

// nearestName is the allowed name within two edits of name, or "".
func nearestName(name string, props []string) string {
	best, bestD := "", 3
	for _, p := range props {
		if d := providers.EditDistance(strings.ToLower(name), p); d < bestD {
			best, bestD = p, d
		}
	}
	if len(name) <= 3 && bestD > 1 {
		return ""
	}
	return best
}

// propertiesAt lists the property names a tool's input schema allows at an
// instance location ("agents", "0" → the agent items' properties), or nil.
// The schemas are generated inline (no $ref), so walking properties and
// items is enough.
func propertiesAt(rawSchema json.RawMessage, loc []string) []string {
	var node map[string]any
	if json.Unmarshal(rawSchema, &node) != nil {
		return nil
	}
	for _, seg := range loc {
		var next any
		if isIndex(seg) {
			next = node["items"]
		} else if props, ok := node["properties"].(map[string]any); ok {
			next = props[seg]
		}
		if node, _ = next.(map[string]any); node == nil {
			return nil
		}
	}
	props, _ := node["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
