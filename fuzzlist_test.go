package massgenmcp_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fuzzTargets lists the repository's fuzz targets as "./dir FuzzName": every
// top-level func named Fuzz… that takes a *testing.F, in every _test.go file
// below the root (hidden directories, testdata and node_modules aside, as the
// go command skips them).
func fuzzTargets(t *testing.T) []string {
	t.Helper()
	var targets []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && isFuzzTarget(fn) {
				targets = append(targets, pkgArg(filepath.Dir(path))+" "+fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return targets
}

// pkgArg spells a directory as go test takes it and .ci/fuzz lists it.
func pkgArg(dir string) string {
	if dir == "." {
		return "."
	}
	return "./" + filepath.ToSlash(dir)
}

// isFuzzTarget says whether fn is what go test -fuzz runs: FuzzXxx(*testing.F).
func isFuzzTarget(fn *ast.FuncDecl) bool {
	name, ok := strings.CutPrefix(fn.Name.Name, "Fuzz")
	if !ok || (name != "" && strings.ToLower(name[:1]) == name[:1]) {
		return false
	}
	params := fn.Type.Params.List
	if len(params) != 1 || len(params[0].Names) > 1 {
		return false
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "F"
}

// ciTarget is one line of .ci/fuzz's targets list: "<dir> <FuzzName> <budget>".
var ciTarget = regexp.MustCompile(`^\s*"(\.\S*) (Fuzz\w*) \S+"\s*$`)

// ciFuzzTargets lists the targets .ci/fuzz runs, as "./dir FuzzName".
func ciFuzzTargets(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(".ci/fuzz")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for line := range strings.SplitSeq(string(data), "\n") {
		if m := ciTarget.FindStringSubmatch(line); m != nil {
			listed = append(listed, strings.TrimSuffix(m[1], "/")+" "+m[2])
		}
	}
	return listed
}

// TestEveryFuzzTargetRunsInCI: make fuzz runs each fuzz target, so a new
// Fuzz function must get a line in .ci/fuzz, and a renamed or removed one
// must lose its line (go test -fuzz on a name that matches nothing passes
// silently).
func TestEveryFuzzTargetRunsInCI(t *testing.T) {
	found, listed := fuzzTargets(t), ciFuzzTargets(t)
	if len(found) == 0 || len(listed) == 0 {
		t.Fatalf("found %d fuzz functions and %d lines in .ci/fuzz; the scan or the list's format is broken", len(found), len(listed))
	}
	for _, f := range found {
		if !slices.Contains(listed, f) {
			t.Errorf("fuzz target %s is not in .ci/fuzz: add a line %q with a budget of about 5-10 s", f, f+" <N>x")
		}
	}
	for _, l := range listed {
		if !slices.Contains(found, l) {
			t.Errorf(".ci/fuzz runs %s, which no _test.go file defines: remove or rename the line", l)
		}
	}
}
