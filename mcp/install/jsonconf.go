package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// jsonServer is a server entry in the JSON clients' shape (field order as
// the clients write it).
type jsonServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

func jsonEntry(t target, command string, args, vars []string) []byte {
	s := jsonServer{Type: "stdio", Command: command, Args: args}
	if t.envStyle == "ref" && len(vars) > 0 {
		s.Env = map[string]string{}
		for _, v := range vars {
			// A reference the client expands when it starts the server:
			// the value itself is never written.
			s.Env[v] = "${env:" + v + "}"
		}
	}
	b, _ := json.Marshal(s)
	return b
}

// jsonPath is a gjson/sjson path of literal keys.
func jsonPath(key []string) string {
	parts := make([]string, len(key))
	for i, k := range key {
		parts[i] = escapePathPart(k)
	}
	return strings.Join(parts, ".")
}

func escapePathPart(k string) string {
	var b strings.Builder
	for _, r := range k {
		if strings.ContainsRune(`.*?|#@\!=<>%:`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// errNotPlainJSON is a config file that is not strict JSON.
var errNotPlainJSON = errors.New("is not plain JSON")

// jsonSet puts entry at key, leaving every other byte of the file as it was.
func jsonSet(before []byte, key []string, entry []byte) ([]byte, error) {
	if len(bytes.TrimSpace(before)) == 0 {
		doc := map[string]any{key[0]: map[string]json.RawMessage{key[1]: entry}}
		out, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(out, '\n'), nil
	}
	if err := plainObject(before, entry, key); err != nil {
		return nil, err
	}
	path := jsonPath(key)
	cur := gjson.GetBytes(before, path)
	if cur.Exists() && sameJSON([]byte(cur.Raw), entry) {
		return before, nil
	}
	if cur.Exists() {
		indented, err := indentAt(entry, before, cur.Index)
		if err != nil {
			return nil, err
		}
		return sjson.SetRawBytes(before, path, indented)
	}
	// A new member goes after the parent's last one, indented like it.
	parent := gjson.GetBytes(before, escapePathPart(key[0]))
	if parent.Exists() && parent.Index > 0 {
		return insertMember(before, parent.Index, len(parent.Raw), key[1], entry)
	}
	wrapped, _ := json.Marshal(map[string]json.RawMessage{key[1]: entry})
	root := bytes.TrimRight(before, " \t\r\n")
	return insertMember(before, bytes.IndexByte(before, '{'), bytes.LastIndexByte(root, '}')+1-bytes.IndexByte(before, '{'), key[0], wrapped)
}

// insertMember adds "name": value as the last member of the object at
// data[start:start+n], on its own line and indented like its neighbours.
func insertMember(data []byte, start, n int, name string, value []byte) ([]byte, error) {
	obj := data[start : start+n]
	closing := start + n - 1
	inner := bytes.TrimRight(obj[1:len(obj)-1], " \t\r\n")
	objIndent := lineIndent(data, start)
	unit := "  "
	memberIndent := objIndent + unit
	if len(bytes.TrimSpace(inner)) > 0 {
		first := start + 1 + (len(obj[1:]) - len(bytes.TrimLeft(obj[1:], " \t\r\n")))
		if bytes.ContainsAny(data[start:first], "\n") {
			memberIndent = lineIndent(data, first)
		}
	}
	if len(memberIndent) > len(objIndent) {
		unit = memberIndent[len(objIndent):]
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, value, memberIndent, unit); err != nil {
		return nil, err
	}
	key, _ := json.Marshal(name)
	member := "\n" + memberIndent + string(key) + ": " + buf.String()
	var out []byte
	if len(bytes.TrimSpace(inner)) == 0 {
		out = append(out, data[:start+1]...)
		out = append(out, member...)
		out = append(out, '\n')
		out = append(out, objIndent...)
	} else {
		at := start + 1 + len(inner)
		out = append(out, data[:at]...)
		out = append(out, ',')
		out = append(out, member...)
		out = append(out, data[at:closing]...)
	}
	return append(out, data[closing:]...), nil
}

// lineIndent is the whitespace that starts the line holding data[at].
func lineIndent(data []byte, at int) string {
	ls := bytes.LastIndexByte(data[:at], '\n') + 1
	line := data[ls:at]
	return string(line[:len(line)-len(bytes.TrimLeft(line, " \t"))])
}

// indentAt indents an entry that replaces the value at data[at].
func indentAt(entry, data []byte, at int) ([]byte, error) {
	ind := lineIndent(data, at)
	var buf bytes.Buffer
	if err := json.Indent(&buf, entry, ind, "  "); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// jsonDelete removes the entry at key, leaving every other byte as it was.
func jsonDelete(cur []byte, key []string) ([]byte, error) {
	if err := plainObject(cur, nil, key); err != nil {
		return nil, err
	}
	path := jsonPath(key)
	if !gjson.GetBytes(cur, path).Exists() {
		return cur, nil
	}
	return sjson.DeleteBytes(cur, path)
}

// plainObject refuses what sjson cannot edit safely: JSON with comments or
// trailing commas (VS Code allows both), or a file that is not an object.
func plainObject(data, entry []byte, key []string) error {
	if !json.Valid(data) {
		hint := ""
		if entry != nil {
			hint = fmt.Sprintf("; add this under %q by hand: %q: %s", key[0], key[1], entry)
		}
		return fmt.Errorf("%w (comments or trailing commas?), so massgen-mcp does not edit it%s", errNotPlainJSON, hint)
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("%w: the file is not a JSON object", errNotPlainJSON)
	}
	if v := gjson.GetBytes(data, escapePathPart(key[0])); v.Exists() && !v.IsObject() {
		return fmt.Errorf("%q is not an object, so massgen-mcp does not edit it", key[0])
	}
	return nil
}

// sameJSON compares two JSON values by meaning.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
