package mcp

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Argument bounds: a JSON-RPC message is counted against the caps of its
// tool's input schema (sizecaps.go) before anything decodes it into values.
// mcp-go decodes a tool call's arguments into generic maps before any
// handler runs (about 30 bytes of heap per byte of a 4 MiB array of short
// strings), so counting must come first, on the raw bytes: gjson walks them
// without building values. Both transports refuse what fails here before
// mcp-go sees it (http.go, stdio.go), and typedHandler checks again for
// callers that reach the server another way.
const (
	// maxValues caps the values in one message: far above the largest
	// call the caps allow in practice (a checkpoint plan of 64 steps with
	// their lists), far below what would cost memory to decode.
	maxValues = 50_000
	// maxDepth caps nesting where the schema leaves shape free (a planned
	// call's arguments, _meta).
	maxDepth = 16
	// maxBatch caps the messages of a JSON-RPC batch, which mcp-go does
	// not serve but the HTTP layer counts.
	maxBatch = 64
)

// sizeRule is what a schema node says about size: caps, and the rules of
// what it holds. A nil rule is a place the schema does not describe.
type sizeRule struct {
	maxItems, maxLength, maxProperties int
	of                                 string
	props                              map[string]*sizeRule
	items, extra                       *sizeRule
}

// free is the rule of a place the schema does not describe (unknown members,
// _meta, a planned call's arguments): the default caps.
var free = &sizeRule{maxItems: defaultMaxItems, maxProperties: defaultMaxProperties}

func init() { free.items, free.extra = free, free }

// sizeRules reads the caps of an input schema.
func sizeRules(raw json.RawMessage) *sizeRule {
	var doc map[string]any
	if json.Unmarshal(raw, &doc) != nil {
		return free
	}
	return ruleOf(doc, "")
}

func ruleOf(s map[string]any, name string) *sizeRule {
	num := func(k string) int { f, _ := s[k].(float64); return int(f) }
	r := &sizeRule{maxItems: num("maxItems"), maxLength: num("maxLength"), maxProperties: num("maxProperties"), of: sizeCaps[name].of}
	if props, ok := s["properties"].(map[string]any); ok {
		r.props = map[string]*sizeRule{}
		for k, p := range props {
			if ps, ok := p.(map[string]any); ok {
				r.props[k] = ruleOf(ps, k)
			}
		}
	}
	if it, ok := s["items"].(map[string]any); ok {
		r.items = ruleOf(it, name)
	}
	switch extra := s["additionalProperties"].(type) {
	case map[string]any:
		r.extra = ruleOf(extra, "")
	case bool:
		if extra {
			r.extra = free
		}
	default:
		r.extra = free
	}
	return r
}

// walker counts one message's values as it checks them.
type walker struct{ values int }

// check refuses the first value of v (at path) beyond its rule's caps.
func (w *walker) check(v gjson.Result, r *sizeRule, path string, depth int) error {
	if r == nil {
		r = free
	}
	if w.values++; w.values > maxValues {
		return fmt.Errorf("the message holds more than %s values; send less", english.Sprint(maxValues))
	}
	switch {
	case v.IsArray():
		n := count(v)
		if r.maxItems > 0 && n > r.maxItems {
			return fmt.Errorf("%s has %s items; at most %d%s", where(path), english.Sprint(n), r.maxItems, spaced(r.of))
		}
		if depth >= maxDepth {
			return fmt.Errorf("%s is nested deeper than %d levels", where(path), maxDepth)
		}
		var err error
		i := 0
		v.ForEach(func(_, item gjson.Result) bool {
			err = w.check(item, r.items, path+"["+strconv.Itoa(i)+"]", depth+1)
			i++
			return err == nil
		})
		return err
	case v.IsObject():
		n := count(v)
		if r.maxProperties > 0 && n > r.maxProperties {
			return fmt.Errorf("%s has %s members; at most %d", where(path), english.Sprint(n), r.maxProperties)
		}
		if depth >= maxDepth {
			return fmt.Errorf("%s is nested deeper than %d levels", where(path), maxDepth)
		}
		var err error
		v.ForEach(func(k, item gjson.Result) bool {
			sub, ok := r.props[k.Str]
			if !ok {
				sub = r.extra
			}
			err = w.check(item, sub, join(path, k.Str), depth+1)
			return err == nil
		})
		return err
	case v.Type == gjson.String:
		// The raw text is at least as long as the characters it encodes,
		// so only a long one needs counting.
		if r.maxLength > 0 && len(v.Raw)-2 > r.maxLength {
			if n := utf8.RuneCountInString(v.Str); n > r.maxLength {
				return fmt.Errorf("%s is %s characters long (%s); at most %s characters (%s)", where(path), english.Sprint(n), sizeText(int64(len(v.Str))), english.Sprint(r.maxLength), sizeText(int64(r.maxLength)))
			}
		}
	}
	return nil
}

// count is the number of items or members of an array or object.
func count(v gjson.Result) int {
	n := 0
	v.ForEach(func(_, _ gjson.Result) bool { n++; return true })
	return n
}

func where(path string) string {
	if path == "" {
		return "the arguments"
	}
	return path
}

func join(path, key string) string {
	key = boundName(key)
	if path == "" {
		return key
	}
	return path + "." + key
}

// boundName keeps an unknown member's name short in a refusal.
func boundName(s string) string {
	if len(s) <= 64 {
		return s
	}
	return strings.ToValidUTF8(s[:64], "") + "…"
}

func spaced(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}

// checkArguments checks a tool call's raw arguments against its tool's rule.
func checkArguments(raw []byte, r *sizeRule) error {
	if len(raw) == 0 || !gjson.ValidBytes(raw) {
		return nil // the schema check says what is wrong
	}
	var w walker
	if err := w.check(parse(raw), r, "", 0); err != nil {
		return fmt.Errorf("%w: %w", errBadArguments, err)
	}
	return nil
}

// parse reads raw JSON in place. gjson.ParseBytes would copy it (4 MiB for
// a body at the cap, for every request); the walk only reads, and nothing it
// returns keeps a piece of the text (refusals format their own strings).
func parse(raw []byte) gjson.Result {
	return gjson.Parse(unsafe.String(unsafe.SliceData(raw), len(raw)))
}

// argumentsTooLarge is a refusal inside a tools/call's arguments, which the
// caller gets as the tool's isError result.
type argumentsTooLarge struct {
	tool string
	err  error
}

func (e *argumentsTooLarge) Error() string { return e.err.Error() }
func (e *argumentsTooLarge) Unwrap() error { return e.err }

// checkMessage checks one JSON-RPC message (or batch) against the caps: a
// tools/call's arguments against its tool's rule (tools holds them by
// name), everything else against the default caps. A refusal in a tool's
// arguments is an *argumentsTooLarge; any other is about the message.
func checkMessage(msg []byte, tools map[string]*sizeRule) error {
	if !gjson.ValidBytes(msg) {
		return nil // mcp-go answers a parse error
	}
	root := parse(msg)
	var w walker
	if root.IsArray() {
		if n := count(root); n > maxBatch {
			return fmt.Errorf("the batch holds %s messages; at most %d", english.Sprint(n), maxBatch)
		}
		return w.check(root, free, "", 0)
	}
	params := root.Get("params")
	tool, ok := tools[params.Get("name").Str]
	if root.Get("method").Str != "tools/call" || !ok || !params.IsObject() {
		return w.check(root, free, "", 0)
	}
	// The message but its arguments, then the arguments.
	if n := count(root); n > defaultMaxProperties {
		return fmt.Errorf("the message has %s members; at most %d", english.Sprint(n), defaultMaxProperties)
	}
	var err error
	root.ForEach(func(k, v gjson.Result) bool {
		if k.Str != "params" {
			err = w.check(v, free, join("", k.Str), 1)
			return err == nil
		}
		if n := count(v); n > defaultMaxProperties {
			err = fmt.Errorf("params has %s members; at most %d", english.Sprint(n), defaultMaxProperties)
			return false
		}
		v.ForEach(func(pk, pv gjson.Result) bool {
			if pk.Str != "arguments" {
				err = w.check(pv, free, join("params", pk.Str), 2)
				return err == nil
			}
			var args walker
			if aerr := args.check(pv, tool, "", 0); aerr != nil {
				err = &argumentsTooLarge{tool: strings.Clone(params.Get("name").Str), err: fmt.Errorf("%w: %w", errBadArguments, aerr)}
			}
			return err == nil
		})
		return err == nil
	})
	return err
}
