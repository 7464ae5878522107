package massgenmcp_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// realCLICallers names the helpers through which a cmd/massgen-mcp test
// finds a real coding CLI: a test that calls one drives that CLI.
var realCLICallers = []string{"realClaude", "clitest.Binary"}

// cmdRealCLITests lists cmd/massgen-mcp's Test functions whose body calls a
// real-CLI helper, sorted.
func cmdRealCLITests(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("cmd/massgen-mcp/*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("cmd/massgen-mcp has no test files (%v): run this test from the repository root", err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			if callsAny(fn.Body, realCLICallers) {
				names = append(names, fn.Name.Name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// callsAny says whether body calls a function spelled as one of names
// (an identifier, or package.Name).
func callsAny(body *ast.BlockStmt, names []string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found {
			return !found
		}
		var spelled string
		switch fun := call.Fun.(type) {
		case *ast.Ident:
			spelled = fun.Name
		case *ast.SelectorExpr:
			if pkg, ok := fun.X.(*ast.Ident); ok {
				spelled = pkg.Name + "." + fun.Sel.Name
			}
		}
		found = slices.Contains(names, spelled)
		return !found
	})
	return found
}

// cmd/massgen-mcp's tests that drive the real coding CLIs run in make
// realclis and are skipped by make unit, through one list in the Makefile
// (CMD_REALCLI_TESTS). A real-CLI test missing from it would run in the
// race run's lane, on the critical path of make test; a name in it that is
// no such test would be a list that guards nothing.
func TestCmdRealCLITestsRunInRealclis(t *testing.T) {
	listed := makefileTestList(t, "CMD_REALCLI_TESTS", "make unit skips and make realclis runs those tests")
	want := cmdRealCLITests(t)
	if len(want) == 0 {
		t.Fatalf("no test in cmd/massgen-mcp calls %v: has the helper been renamed? Update realCLICallers", realCLICallers)
	}
	checkLaneList(t, "CMD_REALCLI_TESTS", listed, want, "drives a real CLI (cmd/massgen-mcp)", "add it, so make realclis runs it and make unit does not")
}
