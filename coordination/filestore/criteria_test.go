package filestore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
	"github.com/massgen-go/massgen-mcp/criteria"
)

func TestSetCriteriaRewritesSessionJSONThenMassGensCopy(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	st := filestore.New(root)
	if err := st.Create(ctx, storetest.NewSession("s", "agent_a")); err != nil {
		t.Fatal(err)
	}
	items := []criteria.Item{{ID: "E1", Text: "new must", Category: "must"}, {ID: "E2", Text: "new could", Category: "could"}}
	if err := st.SetCriteria(ctx, "s", items); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "sessions", "s")
	sess := readJSON(t, filepath.Join(dir, "session.json"))
	if got := sess["eval_criteria"].([]any); len(got) != 2 || got[0].(map[string]any)["text"] != "new must" {
		t.Errorf("session.json eval_criteria = %v", got)
	}
	if sess["task"] == "" || sess["seed"] == nil {
		t.Errorf("session.json lost its setup: %v", sess)
	}
	crit := readJSON(t, filepath.Join(dir, "eval_criteria.json"))["criteria"].([]any)
	if len(crit) != 2 || crit[0].(map[string]any)["category"] != "primary" || crit[1].(map[string]any)["category"] != "stretch" {
		t.Errorf("eval_criteria.json = %v, want MassGen's tiers", crit)
	}
	// No temp files are left behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("left behind %s", e.Name())
		}
	}
}

func TestSetCriteriaOnAMassGenSessionWritesOnlyItsCriteriaFile(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "s")
	if err := os.MkdirAll(filepath.Join(dir, "agents", "amy"), 0o755); err != nil {
		t.Fatal(err)
	}
	st, id, err := filestore.ForSessionDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetCriteria(ctx, id, []criteria.Item{{ID: "E1", Text: "right", Category: "must"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "session.json")); !os.IsNotExist(err) {
		t.Errorf("a MassGen session gained a session.json (%v)", err)
	}
	s, err := st.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Criteria) != 1 || s.Criteria[0].Category != "must" || s.Criteria[0].Text != "right" {
		t.Errorf("criteria read back = %+v", s.Criteria)
	}
}
