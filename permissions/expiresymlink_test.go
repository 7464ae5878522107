package permissions

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestAnExpiryFollowsNoSymlinkPlantedForItsMarks: responses/.expiring is
// the expiry's own directory. One replaced by a symlink to elsewhere must
// not make an expiry mark (create) or settle (remove) files there: a file
// named like a request id in the target, with no request of that id here,
// would be taken for a crash's mark of a request gone and removed.
func TestAnExpiryFollowsNoSymlinkPlantedForItsMarks(t *testing.T) {
	dir, elsewhere, kept := plantMarksLink(t)
	r := deadRequest(t, dir)
	var l testLog
	_, err := Expire(dir, time.Now().Add(-time.Second), l.record)
	if _, serr := os.Stat(kept); serr != nil {
		t.Errorf("the expiry removed %s, a file the planted symlink led it to (%v)", kept, serr)
	}
	if _, serr := os.Stat(filepath.Join(elsewhere, r.ID)); serr == nil {
		t.Errorf("the expiry marked its refusal of %s through the planted symlink, in %s", r.ID, elsewhere)
	}
	if err == nil {
		t.Error("Expire said nothing of the symlink where its marks belong")
	} else {
		t.Logf("Expire: %v", err)
	}
}

// TestAMarkIsRemovedWithinResponsesOnly: a symlink swapped in for the
// marks' directory after an expiry checked it leads its removal of a mark
// nowhere.
func TestAMarkIsRemovedWithinResponsesOnly(t *testing.T) {
	dir, _, kept := plantMarksLink(t)
	err := unmark(dir, "notes")
	if _, serr := os.Stat(kept); serr != nil {
		t.Fatalf("unmark removed %s through the symlink (%v)", kept, serr)
	}
	t.Logf("unmark: %v", err)
}

// plantMarksLink makes a permissions directory, dir, whose marks'
// directory (responses/.expiring) is a symlink to another directory,
// elsewhere, holding a user's file, kept, named "notes".
func plantMarksLink(t *testing.T) (dir, elsewhere, kept string) {
	t.Helper()
	dir, elsewhere = t.TempDir(), t.TempDir()
	kept = filepath.Join(elsewhere, "notes")
	if err := os.WriteFile(kept, []byte("a user's file"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "responses"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, "responses", expiringDir)); err != nil {
		t.Fatal(err)
	}
	return dir, elsewhere, kept
}
