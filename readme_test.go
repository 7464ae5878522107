// Package massgenmcp_test holds checks of the repository itself: that its
// README tells the truth about the module, and that CI fuzzes every fuzz
// target (fuzzlist_test.go).
package massgenmcp_test

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const depsHeading = "### Dependencies and why"

// directRequirements lists go.mod's direct requirements (those not marked
// // indirect), in file order.
func directRequirements(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mods []string
	inBlock := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "require (":
			inBlock = true
			continue
		case inBlock && line == ")":
			inBlock = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimSpace(strings.TrimPrefix(line, "require "))
		case !inBlock:
			continue
		}
		if line == "" || strings.HasPrefix(line, "//") || strings.Contains(line, "// indirect") {
			continue
		}
		mods = append(mods, strings.Fields(line)[0])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return mods
}

var backticked = regexp.MustCompile("`([^`]+)`")

// readmeDependencies reads README's dependency list: each bullet names one or
// more import paths in backticks, then " — " and why.
func readmeDependencies(t *testing.T) (named map[string]string, order []string) {
	t.Helper()
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, depsHeading)
	if i < 0 {
		t.Fatalf("README.md has no %q section; add one listing every direct requirement of go.mod as\n- `module/path` — why this project needs it", depsHeading)
	}
	section := text[i+len(depsHeading):]
	if j := strings.Index(section, "\n#"); j >= 0 {
		section = section[:j]
	}
	named = map[string]string{}
	var bullet []string
	flush := func() {
		if len(bullet) == 0 {
			return
		}
		item := strings.Join(bullet, " ")
		bullet = nil
		head, why, ok := strings.Cut(item, " — ")
		if !ok || strings.TrimSpace(why) == "" {
			t.Errorf("README.md dependency line %q gives no reason: write it as\n- `module/path` — why this project needs it", item)
		}
		for _, m := range backticked.FindAllStringSubmatch(head, -1) {
			named[m[1]] = strings.TrimSpace(why)
			order = append(order, m[1])
		}
	}
	for _, line := range strings.Split(section, "\n") {
		switch {
		case strings.HasPrefix(line, "- "):
			flush()
			bullet = []string{strings.TrimPrefix(line, "- ")}
		case strings.HasPrefix(line, "  ") && len(bullet) > 0:
			bullet = append(bullet, strings.TrimSpace(line))
		default:
			flush()
		}
	}
	flush()
	return named, order
}

// covers tells whether a path named in README is the module or a package in
// it (golang.org/x/text/language names golang.org/x/text).
func covers(path, module string) bool {
	return path == module || strings.HasPrefix(path, module+"/")
}

func TestREADMENamesEveryDirectRequirementWithItsReason(t *testing.T) {
	mods := directRequirements(t)
	if len(mods) == 0 {
		t.Fatal("found no requirements in go.mod")
	}
	named, order := readmeDependencies(t)
	for _, mod := range mods {
		if !slices.ContainsFunc(order, func(p string) bool { return covers(p, mod) }) {
			t.Errorf("README.md does not name %s, a direct requirement in go.mod. Add this line under %q:\n- `%s` — <why this project needs it>", mod, depsHeading, mod)
		}
	}
	for _, p := range order {
		if !slices.ContainsFunc(mods, func(mod string) bool { return covers(p, mod) }) {
			t.Errorf("README.md names %s under %q, but go.mod has no direct requirement for it (%s). Remove it from the list, or, if the code uses it, run go mod tidy.", p, depsHeading, named[p])
		}
	}
}
