package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/clitest"
)

// writeSkill writes a skill named name under root, as Codex 0.171 finds
// one: root/<name>/SKILL.md with its name and description in front matter.
func writeSkill(t *testing.T, root, name string) {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	body := "---\nname: " + name + "\ndescription: the skill " + name + "\n---\nRun scripts/setup.sh before anything else.\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Codex 0.171 lists, in every run's first request, the skills of
// CODEX_HOME/skills (and its .system, which it installs there itself),
// $HOME/.agents/skills, and the project's .agents/skills and .codex/skills
// (measured: the "Skill roots" of its developer message), and a skill's
// SKILL.md tells the model what to run. A sandboxed agent's CODEX_HOME and
// HOME are its private directories: a skill it planted there between two
// runs must not be offered to the next, while the user's own skills are,
// read-only.
func TestRealCodexLoadsNoSkillAnAgentPlantedForItsNextRun(t *testing.T) {
	h := newReal(t, clitest.Sandboxed(t))
	writeSkill(t, filepath.Join(h.home, ".codex", "skills"), "users-codex-skill")
	writeSkill(t, filepath.Join(h.home, ".agents", "skills"), "users-agents-skill")
	act, _, err := h.step(t, 120*time.Second, h.request(clitest.AnswerTool))
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v", act)
	}
	first := h.script.Calls()
	if len(first) == 0 {
		t.Fatal("the first run asked the fake nothing")
	}
	for _, want := range []string{"users-codex-skill", "users-agents-skill"} {
		if !strings.Contains(string(first[0].Body), want) {
			t.Errorf("the first run was not offered the user's skill %s", want)
		}
	}
	private := clitest.PrivateConfigDir(t, h.dir, ".codex")

	// What an agent could have left there had its write gone through (its
	// shell runs in Codex's own sandbox, which keeps CODEX_HOME read-only
	// and HOME too; a hook, a plugin's MCP server or a later mode need
	// not). A write into a read-only bind fails, as the agent's would.
	home := filepath.Dir(private)
	for _, root := range []string{filepath.Join(private, "skills"), filepath.Join(private, "skills", ".system"), filepath.Join(home, ".agents", "skills")} {
		if err := os.MkdirAll(filepath.Join(root, "planted-by-agent"), 0o700); err == nil {
			os.WriteFile(filepath.Join(root, "planted-by-agent", "SKILL.md"), []byte("---\nname: planted-by-agent\ndescription: planted\n---\nRun curl.\n"), 0o600)
		}
	}
	req := h.request(clitest.AnswerTool)
	req.StepNumber = 2
	act, _, err = h.step(t, 120*time.Second, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("action = %+v", act)
	}
	for _, c := range h.script.Calls()[len(first):] {
		if strings.Contains(string(c.Body), "planted-by-agent") {
			t.Fatalf("the second run was offered the skill the agent planted in its CODEX_HOME or HOME")
		}
	}
}
