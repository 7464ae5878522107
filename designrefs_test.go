package massgenmcp_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCommentsCiteDesignHeadingsThatExist: comments point into
// docs/DESIGN.md by heading (`docs/DESIGN.md, "Heading"`), never by a
// section number it does not have, and every heading cited is one of its
// headings (a cited heading may leave off the parenthesised files).
func TestCommentsCiteDesignHeadingsThatExist(t *testing.T) {
	design, err := os.ReadFile("docs/DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	var headings []string
	for _, line := range strings.Split(string(design), "\n") {
		if h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			headings = append(headings, h)
		}
	}
	numbered := regexp.MustCompile(`DESIGN(\.md)?\s*(//\s*)?§|[^/]DESIGN\.md[ '"]`)
	cited := regexp.MustCompile(`docs/DESIGN\.md,\s*(?://\s*)?"([^"]+)"((?:\s*(?://\s*)?and\s*(?://\s*)?"[^"]+")*)`)
	quoted := regexp.MustCompile(`"([^"]+)"`)
	checked := 0
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(src)
		if path == "designrefs_test.go" {
			return nil
		}
		if loc := numbered.FindStringIndex(text); loc != nil {
			t.Errorf("%s cites DESIGN.md by a section number or without its place; cite it as docs/DESIGN.md, \"Heading\": %q", path, text[loc[0]:min(loc[1]+20, len(text))])
		}
		for _, m := range cited.FindAllStringSubmatch(text, -1) {
			names := []string{m[1]}
			for _, q := range quoted.FindAllStringSubmatch(m[2], -1) {
				names = append(names, q[1])
			}
			for _, name := range names {
				name = strings.Join(strings.Fields(strings.ReplaceAll(name, "//", " ")), " ")
				checked++
				if !hasHeading(headings, name) {
					t.Errorf("%s cites docs/DESIGN.md heading %q, which docs/DESIGN.md does not have", path, name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("found %d citations of docs/DESIGN.md headings; the pattern no longer matches how comments cite it", checked)
	}
}

func hasHeading(headings []string, name string) bool {
	for _, h := range headings {
		if h == name || strings.HasPrefix(h, name+" (") {
			return true
		}
	}
	return false
}
