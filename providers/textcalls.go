package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ToolsAsText describes workflow tools in prose for a model or server that
// cannot call tools: what each tool does, its argument schema, and the exact
// JSON object to reply with. ParseTextCalls reads the reply.
func ToolsAsText(tools []Tool) string {
	var b strings.Builder
	b.WriteString("You cannot call tools directly here; you act by writing a JSON object instead. ")
	b.WriteString("Reply with exactly one JSON object of this shape:\n\n")
	b.WriteString(`{"tool": "<tool name>", "arguments": {<the tool's arguments>}}` + "\n\n")
	b.WriteString("You may write it bare or inside a ```json fenced block. Write only one such object: one object is one action. ")
	b.WriteString("Inside JSON strings, write line breaks as \\n and quotes as \\\".\n\n")
	b.WriteString("The tools you may use:\n")
	for _, t := range tools {
		fmt.Fprintf(&b, "\n### %s\n", t.Name)
		if d := strings.TrimSpace(t.Description); d != "" {
			b.WriteString(d + "\n")
		}
		if len(bytes.TrimSpace(t.Schema)) > 0 {
			var compact bytes.Buffer
			if json.Compact(&compact, t.Schema) == nil {
				fmt.Fprintf(&b, "Arguments (JSON schema): %s\n", compact.String())
			}
		}
		fmt.Fprintf(&b, "Example: %s\n", exampleCall(t))
	}
	return b.String()
}

// exampleCall writes a reply that would call t, with placeholders a model
// recognises as such; a vote names the first agent it may vote for.
func exampleCall(t Tool) string {
	var schema struct {
		Properties map[string]struct {
			Type string   `json:"type"`
			Enum []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(t.Schema, &schema)
	args := map[string]any{}
	switch t.Name {
	case ToolNewAnswer:
		args["content"] = "<your complete answer>"
	case ToolVote:
		agent := "agent1"
		if p, ok := schema.Properties["agent_id"]; ok && len(p.Enum) > 0 {
			agent = p.Enum[0]
		}
		args["agent_id"] = agent
		args["reason"] = "<why that answer is the best>"
	}
	for _, name := range schema.Required {
		if _, done := args[name]; done {
			continue
		}
		p := schema.Properties[name]
		switch {
		case len(p.Enum) > 0:
			args[name] = p.Enum[0]
		case p.Type == "array":
			args[name] = []any{}
		case p.Type == "object":
			args[name] = map[string]any{}
		default:
			args[name] = "<" + name + ">"
		}
	}
	return fmt.Sprintf(`{"tool": %s, "arguments": %s}`, jsonText(t.Name), jsonText(args))
}

// jsonText marshals without HTML escaping, so placeholders read "<…>" and
// not "\u003c…\u003e" in the prompt.
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

// workflowTools are the names ParseTextCalls accepts when no tool list is
// given.
var workflowTools = []string{ToolNewAnswer, ToolVote}

// ParseTextCalls reads the workflow calls a model wrote as JSON text, as
// ToolsAsText asked (the workflow tools new_answer and vote). It is lenient:
// objects may be bare or fenced, anywhere in the text; the name may be under
// "tool", "tool_name" (MassGen's shape), "name", "function" or "action", or
// be the object's only key ({"vote": {…}}); the arguments may be an object
// or a JSON string under "arguments", "args", "parameters" or "input", or
// sit beside the name. Several objects give several calls: judging that is
// coordination's job. ok is false when the text holds no call; Action.Text
// is then the whole text, else what remains around the calls.
func ParseTextCalls(text string) (Action, bool) { return ParseTextCallsFor(text, nil) }

// ParseTextCallsFor is ParseTextCalls for the given offered tools: only
// their names count as calls. With no tools it accepts new_answer and vote.
func ParseTextCallsFor(text string, tools []Tool) (Action, bool) {
	known := workflowTools
	if len(tools) > 0 {
		known = make([]string, len(tools))
		for i, t := range tools {
			known[i] = t.Name
		}
	}
	var calls []ToolCall
	var rest strings.Builder
	last := 0
	braces := braceIndex{s: text, end: map[int]braceEnd{}}
	for i := 0; i < len(text); i++ {
		if text[i] != '{' {
			continue
		}
		end, level := braces.match(i)
		if end < 0 || level > maxCallNesting || !mentionsAny(text[i:end], known) {
			continue
		}
		call, ok := callIn(text[i:end], known)
		if !ok {
			continue // a nested object may still be a call
		}
		calls = append(calls, call)
		rest.WriteString(text[last:i])
		last, i = end, end-1
	}
	if len(calls) == 0 {
		return Action{Text: text}, false
	}
	rest.WriteString(text[last:])
	remaining := emptyFence.ReplaceAllString(rest.String(), "")
	return Action{Calls: calls, Text: strings.TrimSpace(remaining)}, true
}

// emptyFence is a code fence left empty once its call was cut out.
var emptyFence = regexp.MustCompile("```[A-Za-z]*\\s*```")

// maxCallNesting is how deep inside other objects a call is still looked
// for. A model wraps its call at most once or twice ({"response": {…}});
// looking deeper would parse a deeply nested text once per level.
const maxCallNesting = 3

// braceIndex finds, for a '{', the index just past its closing '}', reading
// JSON strings (with escapes) as opaque, and how deep it sits inside the
// object its scan started from; the end is -1 if it is never closed. Each '{'
// is matched as if the text began there, so a stray brace or quote in prose
// cannot hide a later object. One scan matches every brace it meets outside
// a string, and the results are kept, so a text full of braces costs a few
// scans rather than one per brace.
type braceIndex struct {
	s   string
	end map[int]braceEnd
}

type braceEnd struct{ end, level int }

func (b *braceIndex) match(start int) (end, level int) {
	if e, ok := b.end[start]; ok {
		return e.end, e.level
	}
	var open []int
	inString, escaped := false, false
	for j := start; j < len(b.s); j++ {
		c := b.s[j]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{':
			open = append(open, j)
		case c == '}':
			top := open[len(open)-1]
			open = open[:len(open)-1]
			b.end[top] = braceEnd{j + 1, len(open)}
			if len(open) == 0 {
				return j + 1, 0
			}
		}
	}
	for lvl, p := range open {
		b.end[p] = braceEnd{-1, lvl}
	}
	return -1, 0
}

// mentionsAny is a cheap test before parsing: a call names its tool as a
// JSON string or key.
func mentionsAny(span string, names []string) bool {
	for _, n := range names {
		if strings.Contains(span, `"`+n+`"`) {
			return true
		}
	}
	return false
}

// callIn reads one balanced object as a call, if it is one.
func callIn(span string, known []string) (ToolCall, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(span), &obj) != nil {
		// Models often put raw line breaks inside JSON strings; forgive that.
		if json.Unmarshal(escapeControlInStrings(span), &obj) != nil {
			return ToolCall{}, false
		}
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(obj[k], &s)
		return strings.TrimSpace(s)
	}
	for _, key := range []string{"tool", "tool_name", "name", "function", "action"} {
		name := str(key)
		if !slices.Contains(known, name) {
			continue
		}
		for _, a := range []string{"arguments", "args", "parameters", "input"} {
			raw, present := obj[a]
			if !present {
				continue
			}
			if args, ok := argsObject(raw); ok {
				return ToolCall{Name: name, Args: args}, true
			}
			// Present but not an object: hand it on as written, so that
			// coordination can tell the model what is wrong with it.
			return ToolCall{Name: name, Args: raw}, true
		}
		inline := make(map[string]json.RawMessage, len(obj))
		for k, v := range obj {
			if k != key {
				inline[k] = v
			}
		}
		args, _ := json.Marshal(inline)
		return ToolCall{Name: name, Args: args}, true
	}
	if len(obj) == 1 {
		for name, raw := range obj {
			if args, ok := argsObject(raw); ok && slices.Contains(known, name) {
				return ToolCall{Name: name, Args: args}, true
			}
		}
	}
	return ToolCall{}, false
}

// argsObject accepts an object, a JSON string holding an object, or null (no
// arguments), and returns it compacted.
func argsObject(raw json.RawMessage) (json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if bytes.Equal(raw, []byte("null")) {
		return json.RawMessage("{}"), true
	}
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		raw = []byte(strings.TrimSpace(s))
	}
	var obj map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return nil, false
	}
	var out bytes.Buffer
	if json.Compact(&out, raw) != nil {
		return nil, false
	}
	return out.Bytes(), true
}

// escapeControlInStrings escapes raw control characters inside JSON strings.
func escapeControlInStrings(s string) []byte {
	out := make([]byte, 0, len(s)+16)
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			case c == '\n':
				out = append(out, '\\', 'n')
				continue
			case c == '\r':
				out = append(out, '\\', 'r')
				continue
			case c == '\t':
				out = append(out, '\\', 't')
				continue
			case c < 0x20:
				out = append(out, fmt.Sprintf("\\u%04x", c)...)
				continue
			}
		} else if c == '"' {
			inString = true
		}
		out = append(out, c)
	}
	return out
}
