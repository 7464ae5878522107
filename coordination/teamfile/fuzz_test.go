package teamfile

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// quoted is a Go-quoted string in a message: the file's own text (an odd
// key), which may hold anything.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// FuzzParse feeds the loader arbitrary bytes: it must never panic, never
// name a Go type in an error (outside the file's own text, quoted), and a file it accepts must hold agents whose
// models parse.
func FuzzParse(f *testing.F) {
	f.Add([]byte(massgenConfig))
	f.Add([]byte("agents: [{model: sim}, {id: b, model: sim/strong}]\nrules: {max_rounds: 3}\n"))
	f.Add([]byte("agent: {backend: {type: chatcompletion, base_url: 'http://localhost:1/v1'}}\n"))
	f.Add([]byte("a: &a [*a]\nagents: *a\n"))
	if entries, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml")); err == nil {
		for _, e := range entries {
			if data, err := os.ReadFile(e); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		type out struct {
			team *Team
			err  error
		}
		done := make(chan out, 1)
		go func() {
			team, err := Parse(data, "fuzz.yaml", Options{})
			done <- out{team, err}
		}()
		var o out
		select {
		case o = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Parse took over 5 s on %q", data)
		}
		team, err := o.team, o.err
		if err != nil {
			if goTypeName.MatchString(quoted.ReplaceAllString(err.Error(), `""`)) {
				t.Fatalf("error names Go internals: %q", err)
			}
			return
		}
		if len(team.Agents) == 0 {
			t.Fatal("accepted a file without agents")
		}
		for _, a := range team.Agents {
			if _, err := providers.ParseSpec(a.Model); err != nil {
				t.Fatalf("accepted agent with a bad model %q: %v", a.Model, err)
			}
		}
		if _, err := team.Rules.Normalize(); err != nil {
			t.Fatalf("accepted rules that do not normalize: %v", err)
		}
	})
}
