package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"text/template"

	"github.com/mark3labs/mcp-go/client"
	"golang.org/x/tools/txtar"
)

// A transcript (testdata/transcripts/*.txtar) is a conversation with the
// server, one tool call at a time: a file "N tool" holds the arguments of
// call N, and "N want" what its structured result must contain (every key
// given must be there with that value: objects may hold more keys, arrays
// must have as many elements, each containing the one wanted, and other
// values must be equal; "N error" instead names the error code). An
// argument may quote an earlier result with {{result N "path.to.field"}},
// which writes that value as JSON (arrays are indexed by number: "vote_enum.0");
// {{value N "path"}} is the value itself, for the helpers json and alias
// (the alias of a label: agent2.1 -> agent2).
// The archive's comment says what the flow teaches.

func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts (%v)", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			replay(t, inProcess(t, newMemServer(t, Options{}), false), ar)
		})
	}
}

// replay makes a transcript's calls in order and checks each result.
func replay(t *testing.T, c *client.Client, ar *txtar.Archive) {
	results := map[int]any{}
	value := func(n int, path string) (any, error) {
		v, err := at(results[n], path)
		if err != nil {
			return nil, fmt.Errorf("result %d: %w", n, err)
		}
		return v, nil
	}
	asJSON := func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	}
	funcs := template.FuncMap{
		"value": value,
		"json":  asJSON,
		"result": func(n int, path string) (string, error) {
			v, err := value(n, path)
			if err != nil {
				return "", err
			}
			return asJSON(v)
		},
		// alias is the alias a label belongs to (agent2.1 -> agent2).
		"alias": func(label any) string { a, _, _ := strings.Cut(fmt.Sprint(label), "."); return a },
	}
	for i := 0; i < len(ar.Files); i++ {
		n, tool, ok := strings.Cut(ar.Files[i].Name, " ")
		num, err := strconv.Atoi(n)
		if !ok || err != nil || i+1 == len(ar.Files) {
			t.Fatalf("%q is not \"N tool\" followed by \"N want\" or \"N error\"", ar.Files[i].Name)
		}
		tmpl, err := template.New(ar.Files[i].Name).Funcs(funcs).Parse(string(ar.Files[i].Data))
		if err != nil {
			t.Fatal(err)
		}
		var args bytes.Buffer
		if err := tmpl.Execute(&args, nil); err != nil {
			t.Fatalf("call %d: %v", num, err)
		}
		res := callTool(t, c, tool, args.String())
		i++
		check := ar.Files[i]
		switch check.Name {
		case n + " error":
			wantError(t, res, strings.TrimSpace(string(check.Data)))
			continue
		case n + " want":
		default:
			t.Fatalf("call %d (%s) is followed by %q, want %q or %q", num, tool, check.Name, n+" want", n+" error")
		}
		if res.IsError {
			t.Fatalf("call %d (%s %s) failed: %s", num, tool, args.String(), text(res))
		}
		var got, want any
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(check.Data, &want); err != nil {
			t.Fatalf("%s: %v", check.Name, err)
		}
		if diff := contained(want, got, ""); diff != "" {
			t.Errorf("call %d (%s): %s\ngot: %s", num, tool, diff, raw)
		}
		results[num] = got
	}
}

// contained says where want is not within got ("" if it is).
func contained(want, got any, path string) string {
	if w, ok := want.(map[string]any); ok {
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want an object, got %v", cmpOr(path), got)
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s.%s: missing", path, k)
			}
			if d := contained(wv, gv, path+"."+k); d != "" {
				return d
			}
		}
		return ""
	}
	if w, ok := want.([]any); ok {
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: want %d elements, got %v", cmpOr(path), len(w), got)
		}
		for i := range w {
			if d := contained(w[i], g[i], fmt.Sprintf("%s.%d", path, i)); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("%s: want %v, got %v", cmpOr(path), want, got)
	}
	return ""
}

func cmpOr(path string) string {
	if path == "" {
		return "result"
	}
	return path
}

// at follows a dotted path into a decoded JSON value.
func at(v any, path string) (any, error) {
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				return nil, fmt.Errorf("no %q in %v", k, x)
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("no element %q of %d", k, len(x))
			}
			v = x[i]
		default:
			return nil, fmt.Errorf("%q: %v has no fields", k, v)
		}
	}
	return v, nil
}
