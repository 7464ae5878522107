package coordination_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// surfaceWords are the names a surface gives things: MCP's tools and the
// fields of its step view. The core's errors carry facts (typed errors,
// errorfacts.go) and each surface says what to do in its own words
// (mcp/errors.go, cmd/massgen-mcp/exit.go), so no string the core writes
// may name them. Struct tags are the stored layout and stay.
var surfaceWords = []string{
	"run_team", "start_team", "team_status", "finalize_team", "cancel_team",
	"list_backends", "generate_eval_criteria", "seen_steps",
}

// TestCoreSpeaksNoSurfaceWords reads the core's own files (the top-level
// package, tests aside) and fails on a string literal naming an MCP tool or
// field. Comments may name them: they explain, they are not printed.
func TestCoreSpeaksNoSurfaceWords(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		tags := map[*ast.BasicLit]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if field, ok := n.(*ast.Field); ok && field.Tag != nil {
				tags[field.Tag] = true
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || tags[lit] {
				return true
			}
			text, err := strconv.Unquote(lit.Value)
			if err != nil {
				text = lit.Value
			}
			for _, w := range surfaceWords {
				if strings.Contains(text, w) {
					t.Errorf("%s: a string names %q, a surface's word; return the facts (a typed error) and let mcp/errors.go or the CLI's exit.go say it", fset.Position(lit.Pos()), w)
				}
			}
			return true
		})
	}
	if checked < 20 {
		t.Fatalf("read %d of the core's files; the test runs in the wrong directory", checked)
	}
}
