package filestore_test

import (
	"context"
	"maps"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestReadsASessionWrittenBeforeTheAliasRename opens a session the binary
// wrote before "alias" became the name of agentN (testdata/before-aliases:
// session.json says "label_permutation" and rules "labels"): its aliases and
// rules read as they were written, and its status names every agent by them.
func TestReadsASessionWrittenBeforeTheAliasRename(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	copyDir(t, filepath.Join("testdata", "before-aliases"), dir)
	st := filestore.New(dir)
	const id = "team_before_aliases"
	s, err := st.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"amy": 3, "bob": 1, "zed": 2}; !maps.Equal(s.Aliases, want) {
		t.Errorf("aliases %v, want %v (label_permutation unread?)", s.Aliases, want)
	}
	if s.Rules.Aliases != coordination.AliasesRandom {
		t.Errorf("rules.aliases %q, want random (rules.labels unread?)", s.Rules.Aliases)
	}
	svc := coordination.NewService(st, coordination.Options{Open: backends.Open})
	v, err := svc.Status(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range v.Agents {
		got[a.ID] = a.Alias + " " + a.LatestLabel
	}
	if want := map[string]string{"amy": "agent3 agent3.1", "bob": "agent1 agent1.1", "zed": "agent2 agent2.2"}; !maps.Equal(got, want) {
		t.Errorf("status agents %v, want %v", got, want)
	}
}
