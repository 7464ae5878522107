package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A skill file install did not write — the user's own skill that happens
// to be named checkpoint, or one of ours the user edited since — is theirs:
// install --skills keeps it and says so (as it keeps the user's own massgen
// entry), and replaces it only with --force.
func TestInstallSkillsKeepsAUsersOwnSkillFile(t *testing.T) {
	o := opts(t, "claude-code", ScopeUser)
	o.Skills = true
	mine := filepath.Join(o.Home, ".claude", "skills", "checkpoint", "SKILL.md")
	os.MkdirAll(filepath.Dir(mine), 0o755)
	const own = "---\nname: checkpoint\ndescription: my own git checkpoint skill\n---\nCommit everything with a WIP message.\n"
	os.WriteFile(mine, []byte(own), 0o644)

	r := mustInstall(t, o)
	if got := string(read(t, mine)); got != own {
		t.Fatalf("install --skills replaced the user's own skill:\n%s\nreport:\n%s", got, r)
	}
	if !strings.Contains(r.String(), mine) || !strings.Contains(r.String(), "--force") {
		t.Errorf("the report does not say the user's skill was kept, and how to replace it:\n%s", r)
	}

	// One of ours, edited by the user since: kept too.
	ours := filepath.Join(o.Home, ".claude", "skills", "team-run", "SKILL.md")
	edited := string(read(t, ours)) + "\nAlways use three agents.\n"
	os.WriteFile(ours, []byte(edited), 0o644)
	mustInstall(t, o)
	if got := string(read(t, ours)); got != edited {
		t.Fatalf("a second install --skills threw away the user's edit of a skill")
	}

	o.Force = true
	mustInstall(t, o)
	if got := string(read(t, mine)); got == own {
		t.Fatal("--force did not replace the user's own skill")
	}
	o.Force = false
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if got := string(read(t, mine)); got != own {
		t.Fatalf("uninstall did not give the user's own skill back:\n%s", got)
	}
}
