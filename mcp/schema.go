package mcp

import (
	"bytes"
	"encoding/json"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// inputSchema is mcpgo.WithInputSchema[T] without "null" in any type and
// with every size capped (sizecaps.go). The
// generator makes every pointer, slice and map nullable (type: ["null",
// "array"]): the MCP Inspector flags each such union, Gemini's schema dialect
// rejects them, and no argument needs null — argsSchema.check reads a null
// member as an absent one.
func inputSchema[T any]() mcpgo.ToolOption {
	generate := mcpgo.WithInputSchema[T]()
	return func(t *mcpgo.Tool) {
		generate(t)
		t.RawInputSchema = rewriteSchema(t.RawInputSchema, func(doc any) any {
			dropNullType(doc)
			return withSizeCaps(doc, "")
		})
	}
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
