package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tailscale/hujson"
)

// jsonServer is a server entry in the JSON clients' shape (field order as
// the clients write it).
type jsonServer struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

func jsonEntry(t target, command string, args, vars []string) []byte {
	s := jsonServer{Type: "stdio", Command: command, Args: args}
	if t.client == "gemini" {
		s.Type = "" // Gemini CLI tells transports apart by command, url or httpUrl
	}
	if (t.envStyle == "ref" || t.envStyle == "dollar") && len(vars) > 0 {
		s.Env = map[string]string{}
		for _, v := range vars {
			// A reference the client expands when it starts the server:
			// the value itself is never written.
			if t.envStyle == "dollar" {
				s.Env[v] = "${" + v + "}"
			} else {
				s.Env[v] = "${env:" + v + "}"
			}
		}
	}
	b, _ := json.Marshal(s)
	return b
}

// errNotJSON is a config file that is neither JSON nor JSONC.
var errNotJSON = errors.New("is neither JSON nor JSON with comments")

// jsonFile is a client's config parsed as JSONC (VS Code allows comments and
// trailing commas; plain JSON is a subset): a syntax tree that packs back to
// the very bytes it was parsed from, so an edit touches only the member it
// changes.
type jsonFile struct {
	data []byte
	root hujson.Value
}

// parseJSON parses a config whose root must be an object; hint, when not
// empty, tells the user what to add by hand if the file cannot be edited.
func parseJSON(data []byte, hint string) (*jsonFile, error) {
	root, err := hujson.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w (%v), so massgen-mcp does not edit it%s", errNotJSON, err, hint)
	}
	if _, ok := root.Value.(*hujson.Object); !ok {
		return nil, fmt.Errorf("%w: the file is not a JSON object, so massgen-mcp does not edit it%s", errNotJSON, hint)
	}
	return &jsonFile{data: data, root: root}, nil
}

// member finds name in obj: its index, or -1.
func member(obj *hujson.Object, name string) int {
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i
		}
	}
	return -1
}

// parent is the object holding the entry (key[0]), or nil when the file has
// none; a key[0] that is not an object is refused.
func (f *jsonFile) parent(key []string) (*hujson.Value, error) {
	root := f.root.Value.(*hujson.Object)
	i := member(root, key[0])
	if i < 0 {
		return nil, nil
	}
	v := &root.Members[i].Value
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, fmt.Errorf("%q is not an object, so massgen-mcp does not edit it", key[0])
	}
	return v, nil
}

// jsonGet is the entry at key as it is written in the file (comments
// inside it included), or nil.
func jsonGet(data []byte, key []string) ([]byte, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	f, err := parseJSON(data, "")
	if err != nil {
		return nil, err
	}
	p, err := f.parent(key)
	if p == nil || err != nil {
		return nil, err
	}
	obj := p.Value.(*hujson.Object)
	i := member(obj, key[1])
	if i < 0 {
		return nil, nil
	}
	v := obj.Members[i].Value
	return bytes.Clone(data[v.StartOffset:v.EndOffset]), nil
}

// jsonSet puts entry at key, leaving every other byte of the file — other
// members, comments, trailing commas, formatting — as it was. entry is
// indented to its place unless verbatim (the user's own entry put back
// exactly as it was written, comments and all).
func jsonSet(before []byte, key []string, entry []byte, verbatim bool) ([]byte, error) {
	if len(bytes.TrimSpace(before)) == 0 {
		doc := map[string]any{key[0]: map[string]json.RawMessage{key[1]: json.RawMessage(standard(entry))}}
		out, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(out, '\n'), nil
	}
	f, err := parseJSON(before, fmt.Sprintf("; add this under %q by hand: %q: %s", key[0], key[1], entry))
	if err != nil {
		return nil, err
	}
	p, err := f.parent(key)
	if err != nil {
		return nil, err
	}
	if p == nil {
		// No key[0] yet: it goes in as the root's last member, holding the
		// entry.
		wrapped, _ := json.Marshal(map[string]json.RawMessage{key[1]: json.RawMessage(standard(entry))})
		if err := f.insert(&f.root, key[0], wrapped, false); err != nil {
			return nil, err
		}
		return f.root.Pack(), nil
	}
	obj := p.Value.(*hujson.Object)
	i := member(obj, key[1])
	if i < 0 {
		if err := f.insert(p, key[1], entry, verbatim); err != nil {
			return nil, err
		}
		return f.root.Pack(), nil
	}
	cur := &obj.Members[i].Value
	if sameJSON(before[cur.StartOffset:cur.EndOffset], entry) {
		return before, nil
	}
	text := entry
	if !verbatim {
		_, unit := f.indents(p)
		var buf bytes.Buffer
		if err := json.Indent(&buf, entry, lineIndent(before, cur.StartOffset), unit); err != nil {
			return nil, err
		}
		text = buf.Bytes()
	}
	v, err := hujson.Parse(text)
	if err != nil {
		return nil, err
	}
	cur.Value = v.Value
	return f.root.Pack(), nil
}

// indents are the indentation of an object's members and one level's unit,
// as the file already uses them ("  " for an object that has none yet).
func (f *jsonFile) indents(objVal *hujson.Value) (member, unit string) {
	objIndent := lineIndent(f.data, objVal.StartOffset)
	member, unit = objIndent+"  ", "  "
	obj := objVal.Value.(*hujson.Object)
	if len(obj.Members) > 0 {
		first := obj.Members[0].Name
		if before := first.BeforeExtra; bytes.ContainsRune(before, '\n') {
			member = lineIndent(f.data, first.StartOffset)
		}
	}
	if len(member) > len(objIndent) {
		unit = member[len(objIndent):]
	}
	return member, unit
}

// insert adds "name": value as the last member of the object, on its own
// line, indented like its siblings and keeping the object's trailing-comma
// style. A line comment that ended the previous last member's line stays on
// that line.
func (f *jsonFile) insert(objVal *hujson.Value, name string, value []byte, verbatim bool) error {
	obj := objVal.Value.(*hujson.Object)
	memberIndent, unit := f.indents(objVal)
	text := value
	if !verbatim {
		var buf bytes.Buffer
		if err := json.Indent(&buf, value, memberIndent, unit); err != nil {
			return err
		}
		text = buf.Bytes()
	}
	v, err := hujson.Parse(text)
	if err != nil {
		return err
	}
	after := obj.AfterExtra
	head := []byte{}
	if nl := bytes.IndexByte(after, '\n'); nl >= 0 && bytes.HasPrefix(bytes.TrimLeft(after[:nl], " \t"), []byte("//")) {
		head = after[:nl+1]
	}
	rest := bytes.Clone(after[len(head):])
	switch {
	case len(head) > 0:
		// What followed that comment started a line, and still does.
		rest = append([]byte("\n"), rest...)
	case !bytes.ContainsRune(rest, '\n'):
		rest = []byte("\n" + lineIndent(f.data, objVal.StartOffset))
	}
	lead := bytes.Clone(head)
	if !bytes.HasSuffix(lead, []byte("\n")) {
		lead = append(lead, '\n')
	}
	lead = append(lead, memberIndent...)
	key, _ := json.Marshal(name)
	m := hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: lead, Value: hujson.Literal(key)},
		Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: v.Value},
	}
	if n := len(obj.Members); n > 0 && obj.Members[n-1].Value.AfterExtra != nil {
		m.Value.AfterExtra = hujson.Extra{} // the file ends members with a comma
	}
	obj.Members = append(obj.Members, m)
	obj.AfterExtra = rest
	return nil
}

// lineIndent is the whitespace that starts the line holding data[at].
func lineIndent(data []byte, at int) string {
	ls := bytes.LastIndexByte(data[:at], '\n') + 1
	line := data[ls:at]
	return string(line[:len(line)-len(bytes.TrimLeft(line, " \t"))])
}

// jsonDelete removes the entry at key, leaving every other byte as it was.
func jsonDelete(cur []byte, key []string) ([]byte, error) {
	f, err := parseJSON(cur, "")
	if err != nil {
		return nil, err
	}
	p, err := f.parent(key)
	if p == nil || err != nil {
		return cur, err
	}
	obj := p.Value.(*hujson.Object)
	i := member(obj, key[1])
	if i < 0 {
		return cur, nil
	}
	removeMember(obj, i)
	return f.root.Pack(), nil
}

// removeMember takes member i out with the line(s) it stands on, and
// nothing else: a comment that ended the previous line or stood on lines of
// its own above it stays, and so does the object's trailing-comma style. It
// is the exact inverse of insert.
func removeMember(obj *hujson.Object, i int) {
	nb := obj.Members[i].Name.BeforeExtra
	var keep []byte
	if k := bytes.LastIndexByte(nb, '\n'); k >= 0 {
		keep = bytes.Clone(nb[:k]) // what precedes the newline that starts the member's line
	} else {
		keep = bytes.TrimRight(bytes.Clone(nb), " \t\r")
	}
	n := len(obj.Members)
	if i < n-1 {
		next := &obj.Members[i+1].Name
		next.BeforeExtra = joinExtra(keep, next.BeforeExtra)
		obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
		return
	}
	trailingComma := obj.Members[i].Value.AfterExtra != nil
	obj.Members = obj.Members[:i]
	obj.AfterExtra = joinExtra(keep, obj.AfterExtra)
	if i == 0 {
		return
	}
	// hujson writes a comma after the last member exactly when its
	// AfterExtra is not nil.
	prev := &obj.Members[i-1].Value
	switch {
	case trailingComma && prev.AfterExtra == nil:
		prev.AfterExtra = hujson.Extra{}
	case !trailingComma && prev.AfterExtra != nil:
		obj.AfterExtra = append(bytes.Clone(prev.AfterExtra), obj.AfterExtra...)
		prev.AfterExtra = nil
	}
}

// joinExtra puts two runs of whitespace and comments together, breaking the
// line after a line comment so it cannot swallow what follows.
func joinExtra(a, b []byte) []byte {
	lastLine := a[bytes.LastIndexByte(a, '\n')+1:]
	if bytes.Contains(lastLine, []byte("//")) && !bytes.HasPrefix(bytes.TrimLeft(b, " \t\r"), []byte("\n")) {
		a = append(a, '\n')
	}
	return append(a, b...)
}

// standard is a JSONC value as plain JSON (comments and trailing commas
// dropped), or the bytes unchanged when they do not parse.
func standard(b []byte) []byte {
	out, err := hujson.Standardize(bytes.Clone(b))
	if err != nil {
		return b
	}
	return out
}

// sameJSON compares two JSON or JSONC values by meaning.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(standard(a), &x) != nil || json.Unmarshal(standard(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
