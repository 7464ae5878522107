package coordination

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAPeersFilesAreNotShownFromADeletedSessionOfTheSameID: the files a
// prompt shows of a peer's answer are kept by session, agent and step; a
// session deleted (by a prune in another process, which this service does
// not hear of) and made again under its id has other files at the same
// step. Before, the service kept showing the deleted session's.
func TestAPeersFilesAreNotShownFromADeletedSessionOfTheSameID(t *testing.T) {
	sh := &shown{cache: newLRU[string, []providers.FileInfo](shownCacheMax)}
	snap := func(name string) *workspace.Team {
		team := workspace.NewTeam(t.TempDir(), nil, "")
		live, err := team.Prepare("agent_a")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(live, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		stage, _, err := team.Stage("agent_a", 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(stage, team.StepDir("agent_a", 1)); err != nil {
			t.Fatal(err)
		}
		return team
	}
	first := &Session{ID: "reuse", CreatedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	if got := sh.files(first, snap("old.txt"), "agent_a", 1); len(got) != 1 || got[0].Path != "old.txt" {
		t.Fatalf("the first session's step shows %+v", got)
	}
	again := &Session{ID: "reuse", CreatedAt: first.CreatedAt.Add(24 * time.Hour)}
	if got := sh.files(again, snap("new.txt"), "agent_a", 1); len(got) != 1 || got[0].Path != "new.txt" {
		t.Errorf("the session made again under its id shows %+v; want its own new.txt", got)
	}
}
