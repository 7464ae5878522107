package mcp

import (
	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/criteria"
)

// Every array, free string and open object in a tool's arguments has a
// cap (maxItems, maxLength, maxProperties) where arguments are checked
// (enforced, schema.go), and argument bounds
// (bounds.go) count against the same caps before anything decodes the
// arguments into values: an array of 800,000 model specs is refused by its
// count, not parsed spec by spec.
const (
	// defaultMaxItems caps an array no entry below names: plans, criteria's
	// anti-patterns, safety rules, context items, touches.
	defaultMaxItems = 64
	// defaultMaxLength caps a string no entry below names: ids, model specs,
	// paths, criteria, reasons, plan steps. Generous for a paragraph, far
	// below the body cap.
	defaultMaxLength = 16 << 10
	// defaultMaxProperties caps an object with free member names
	// (seen_steps, a planned call's arguments).
	defaultMaxProperties = 64
	// maxAnswerLength caps an answer a host agent submits with step: a
	// deliverable may be long, but it is shown to every agent in later steps.
	maxAnswerLength = 1 << 20
)

// sizeCap is the cap of one argument named in sizeCaps: items for an array,
// length (characters) for a string.
type sizeCap struct {
	items, length int
	// of says what the items are, for the refusal ("at most 16 agents per
	// team").
	of string
}

// sizeCaps are the caps that differ from the defaults, by argument name
// (the same name means the same thing in every tool). The text caps in
// characters equal their byte caps (settings.go), which checkTextSizes still
// applies: a string within its byte cap is within its character cap.
var sizeCaps = map[string]sizeCap{
	"models":         {items: coordination.MaxAgents, of: "agents per team"},
	"agents":         {items: coordination.MaxAgents, of: "agents per team"},
	"eval_criteria":  {items: criteria.MaxProvided, of: "criteria"},
	"criteria":       {items: criteria.MaxProvided, of: "criteria"},
	"task":           {length: MaxTaskBytes},
	"objective":      {length: MaxTaskBytes},
	"text":           {length: MaxContextBlockBytes},
	"system_message": {length: MaxSystemMessageBytes},
	"content":        {length: maxAnswerLength},
}

// withSizeCaps adds the caps to a generated input schema (a node named name,
// "" for the root and for free members) and returns it: maxItems on every
// array, maxLength on every string that is not an enum, maxProperties on
// every object whose member names are free. A cap already there stays.
// Only the caps sizeCaps names are published (withNamedCaps); the defaults
// are added back where arguments are checked (enforced).
func withSizeCaps(v any, name string) any { return addCaps(v, name, true) }

// withNamedCaps adds only the caps sizeCaps names: the ones a caller may
// reach (16 agents, 12 criteria, a long task). A default cap (16 Ki of an id,
// 64 items of a list) would cost tools/list a field on every string and list
// of every tool, and no caller comes near it; the README lists them.
func withNamedCaps(v any, name string) any { return addCaps(v, name, false) }

func addCaps(v any, name string, defaults bool) any {
	o, ok := v.(object)
	if !ok {
		return v
	}
	c, named := sizeCaps[name]
	switch o.get("type") {
	case "array":
		if defaults || c.items > 0 {
			o = o.withDefault("maxItems", or(c.items, defaultMaxItems))
		}
	case "string":
		if o.get("enum") == nil && (defaults || named && c.length > 0) {
			o = o.withDefault("maxLength", or(c.length, defaultMaxLength))
		}
	case "object":
		if extra, ok := o.get("additionalProperties").(bool); defaults && (!ok || extra) {
			o = o.withDefault("maxProperties", defaultMaxProperties)
		}
	}
	for i, m := range o {
		switch m.key {
		case "properties":
			if props, ok := m.val.(object); ok {
				for j, p := range props {
					props[j].val = addCaps(p.val, p.key, defaults)
				}
			}
		case "items":
			// An array's items are capped as the array's name says (the
			// strings of models, the objects of agents).
			o[i].val = addCaps(m.val, name, defaults)
		case "additionalProperties":
			o[i].val = addCaps(m.val, "", defaults)
		}
	}
	return o
}

// get is the value of a member, or nil.
func (o object) get(key string) any {
	for _, m := range o {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// withDefault adds a member unless the object has it.
func (o object) withDefault(key string, val any) object {
	if o.get(key) != nil {
		return o
	}
	return append(o, member{key, val})
}

func or(n, fallback int) int {
	if n > 0 {
		return n
	}
	return fallback
}
