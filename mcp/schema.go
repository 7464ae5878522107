package mcp

import (
	"bytes"
	"encoding/json"
	"slices"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// inputSchema is mcpgo.WithInputSchema[T] as tools/list publishes it: no
// "null" in any type, the caps a caller may reach (sizecaps.go), and nothing
// a model does not need to call the tool right, for every outer agent pays
// for tools/list in every conversation. The generator makes every pointer,
// slice and map nullable (type: ["null", "array"]): the MCP Inspector flags
// each such union, Gemini's schema dialect rejects them, and no argument
// needs null — argsSchema.check reads a null member as an absent one. The
// generator also closes every object (additionalProperties: false); that is
// left to enforced, which closes them again where arguments are checked, and
// an unknown argument is refused there in words.
// edits are the tool's own (explainedBy).
func inputSchema[T any](edits ...func(object) object) mcpgo.ToolOption {
	generate := mcpgo.WithInputSchema[T]()
	return func(t *mcpgo.Tool) {
		generate(t)
		t.RawInputSchema = rewriteSchema(t.RawInputSchema, func(doc any) any {
			dropNullType(doc)
			root, ok := withNamedCaps(doc, "").(object)
			if !ok {
				return doc
			}
			out := object{}
			for _, m := range openObjects(root).(object) {
				if a, ok := m.val.([]any); ok && m.key == "required" && len(a) == 0 {
					continue
				}
				out = append(out, m)
			}
			// A tool without arguments still says it has none: some
			// clients' converters want properties on every object.
			out = out.withDefault("properties", object{})
			for _, edit := range edits {
				out = edit(out)
			}
			return out
		})
	}
}

// enforced is a published input schema as arguments are checked against
// it: every object closed to unknown members and every default cap in place
// (the transports count against the same caps, bounds.go).
func enforced(raw json.RawMessage) json.RawMessage {
	return rewriteSchema(raw, func(doc any) any {
		return withSizeCaps(closeObjects(doc), "")
	})
}

// openObjects returns v without additionalProperties: true or false
// anywhere in it (true is JSON Schema's default; a schema for the members,
// as seen_steps' integers, stays).
func openObjects(v any) any {
	switch v := v.(type) {
	case object:
		out := make(object, 0, len(v))
		for _, m := range v {
			if _, flag := m.val.(bool); flag && m.key == "additionalProperties" {
				continue
			}
			out = append(out, member{m.key, openObjects(m.val)})
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = openObjects(x)
		}
		return out
	}
	return v
}

// closeObjects returns v with additionalProperties: false in every object
// that has properties and does not say what its other members may be.
func closeObjects(v any) any {
	switch v := v.(type) {
	case object:
		out := make(object, 0, len(v)+1)
		for _, m := range v {
			out = append(out, member{m.key, closeObjects(m.val)})
		}
		if v.get("properties") != nil && v.get("additionalProperties") == nil {
			out = append(out, member{"additionalProperties", false})
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = closeObjects(x)
		}
		return out
	}
	return v
}

// explainedBy drops the descriptions a tool shares with another when that
// one is offered too: a model reads each explanation once. Without args it
// drops every description below the root's properties (start_team's
// settings are run_team's); with args only those of the named arguments'
// items (checkpoint's agents are run_team's agents), keeping what the
// argument itself means for this tool.
func (h *handler) explainedBy(tool string, args ...string) func(object) object {
	return func(root object) object {
		props, ok := root.get("properties").(object)
		if !ok || !h.opts.Tools.Has(tool) {
			return root
		}
		for i, p := range props {
			if len(args) == 0 {
				props[i].val = withoutDescriptions(p.val)
				continue
			}
			arg, ok := p.val.(object)
			if !ok || !slices.Contains(args, p.key) {
				continue
			}
			for j, m := range arg {
				if m.key == "items" {
					arg[j].val = withoutDescriptions(m.val)
				}
			}
		}
		return root
	}
}

// withoutDescriptions returns v without any description keyword (a member
// named description whose value is text; a property of that name is an
// object and stays).
func withoutDescriptions(v any) any {
	switch v := v.(type) {
	case object:
		out := make(object, 0, len(v))
		for _, m := range v {
			if _, text := m.val.(string); text && m.key == "description" {
				continue
			}
			out = append(out, member{m.key, withoutDescriptions(m.val)})
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = withoutDescriptions(x)
		}
		return out
	}
	return v
}

// rewriteSchema rewrites a schema with edit, keeping the order of every
// object's members (properties read in the order the struct declares them:
// the task first).
func rewriteSchema(raw json.RawMessage, edit func(doc any) any) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	doc, err := readOrdered(dec)
	if err != nil {
		return raw // the generator's own output; compiling it reports any problem
	}
	doc = edit(doc)
	var b bytes.Buffer
	if err := writeOrdered(&b, doc); err != nil {
		return raw
	}
	return b.Bytes()
}

// object is a JSON object with its members in order.
type object []member

type member struct {
	key string
	val any
}

func readOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		var o object
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := readOrdered(dec)
			if err != nil {
				return nil, err
			}
			o = append(o, member{k.(string), v})
		}
		_, err := dec.Token() // }
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := readOrdered(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token() // ]
		return a, err
	}
	return tok, nil
}

func writeOrdered(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case object:
		b.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(m.key)
			b.Write(k)
			b.WriteByte(':')
			if err := writeOrdered(b, m.val); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeOrdered(b, x); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		s, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(s)
	}
	return nil
}

func dropNullType(v any) {
	switch v := v.(type) {
	case object:
		for i, m := range v {
			if types, ok := m.val.([]any); ok && m.key == "type" {
				kept := []any{}
				for _, t := range types {
					if t != "null" {
						kept = append(kept, t)
					}
				}
				if len(kept) == 1 {
					v[i].val = kept[0]
				} else {
					v[i].val = kept
				}
				continue
			}
			dropNullType(m.val)
		}
	case []any:
		for _, x := range v {
			dropNullType(x)
		}
	}
}

// dropNullMembers removes the members of every object in decoded arguments
// whose value is null: a client (often a model) that sends "budget": null
// means no budget, and the schema has no null types to accept it.
func dropNullMembers(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if x == nil {
				delete(v, k)
				continue
			}
			dropNullMembers(x)
		}
	case []any:
		for _, x := range v {
			dropNullMembers(x)
		}
	}
}
