package massgenmcp_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// make unit runs cmd/massgen-mcp's PostgreSQL process tests (the Test
// functions of its pg*_test.go) in a lane of their own beside the rest of
// the package, through one list in the Makefile (CMD_PG_TESTS). A test
// missing from it would run in the other lane, one after another with the
// package's other sequential tests, back on make test's critical path; a
// name in it that is no such test would be a lane that runs nothing.
func TestCmdPostgresTestsRunInTheirOwnLane(t *testing.T) {
	listed := makefileTestList(t, "CMD_PG_TESTS", "make unit runs those tests in a lane of their own")
	files, err := filepath.Glob("cmd/massgen-mcp/pg*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("cmd/massgen-mcp has no pg*_test.go (%v): run this test from the repository root", err)
	}
	var want []string
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, testFuncs(f)...)
	}
	checkLaneList(t, "CMD_PG_TESTS", listed, want, "is a PostgreSQL process test (cmd/massgen-mcp/pg*_test.go)", "add it, so it runs in that lane")
}

// testFuncs names the Test functions declared in f.
func testFuncs(f *ast.File) []string {
	var names []string
	for _, decl := range f.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
			names = append(names, fn.Name.Name)
		}
	}
	return names
}
