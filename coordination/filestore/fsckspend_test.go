package filestore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/filestore"
)

// TestFsckAndTidyLeaveSpendFilesAlone: a live step's spend file and a gone
// holder's are sound to fsck and kept by Tidy; a crash's temp of one is a
// leftover Tidy removes, and one that does not parse is reported damaged.
func TestFsckAndTidyLeaveSpendFilesAlone(t *testing.T) {
	st, _ := spendSession(t)
	ctx := context.Background()
	live := lockStep(t, st, "agent_a")
	defer live.Release()
	share(t, live, 0.10, 100)
	gone := lockStep(t, st, "agent_b")
	share(t, gone, 0.20, 200)
	gone.Release()
	cDir := filepath.Join(st.Dir("team"), "agents", "agent_c")
	if err := os.MkdirAll(cDir, 0o755); err != nil {
		t.Fatal(err)
	}
	temp, bad := filepath.Join(cDir, "..spent-x.json.tmp-123"), filepath.Join(cDir, ".spent-torn.json")
	for p, data := range map[string]string{temp: `{"step":1`, bad: `{"step":1`} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	problems, err := st.Check(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range problems {
		got[filepath.Base(p.Path)] = p.Kind
	}
	if len(got) != 2 || got[filepath.Base(temp)] != filestore.ProblemLeftover || got[filepath.Base(bad)] != filestore.ProblemDamaged {
		t.Errorf("fsck found %+v; want the temp a leftover and the torn spend file damaged, nothing else", problems)
	}
	unlock, err := st.LockSession(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Tidy(ctx, "team")
	unlock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(temp); !os.IsNotExist(err) {
		t.Errorf("the spend file's temp after Tidy: %v; want it removed", err)
	}
	for _, agent := range []string{"agent_a", "agent_b"} {
		if files := spendFiles(t, st, agent); len(files) != 1 {
			t.Errorf("%s's spend files after Tidy: %v; want its one kept", agent, files)
		}
	}
}
