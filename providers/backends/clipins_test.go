package backends

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestTheCLIsNpmPackagesAreTheVersionsTestedWith: what list_backends and
// `backends` tell a user to install for a CLI backend whose CLI is missing
// (cliagent.Info.Package) is the npm package at the version the real-CLI
// tests install (e2e/install-clis.sh), and README says the same, so a user
// installs what was tested.
func TestTheCLIsNpmPackagesAreTheVersionsTestedWith(t *testing.T) {
	script, err := os.ReadFile("../../e2e/install-clis.sh")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	pins := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^(CLAUDE|CODEX|GEMINI)_VERSION="\$\{E2E_[A-Z]+_VERSION:-([^}]+)\}"`).FindAllStringSubmatch(string(script), -1) {
		pins[m[1]] = m[2]
	}
	for backend, want := range map[string]string{
		"claude_code": "@anthropic-ai/claude-code@" + pins["CLAUDE"],
		"codex":       "@openai/codex@" + pins["CODEX"],
		"gemini_cli":  "@google/gemini-cli@" + pins["GEMINI"],
	} {
		if len(pins) != 3 {
			t.Fatalf("e2e/install-clis.sh pins %v; want CLAUDE_, CODEX_ and GEMINI_VERSION", pins)
		}
		if got := cliAgents[backend].Info().Package; got != want {
			t.Errorf("%s: Info.Package %q, e2e/install-clis.sh installs %q", backend, got, want)
		}
		if !strings.Contains(string(readme), "npm install -g "+want) {
			t.Errorf("README does not say npm install -g %s", want)
		}
	}
}
