package lockeddir

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// Make's give-up error reaches run_command's result through its path-error
// unwrapping: the path must be the error's Path, not its message's words,
// or TMPDIR's absolute path reaches the model.
func TestMakesGiveUpErrorKeepsItsPathApart(t *testing.T) {
	err := gaveUp("/tmp/private-base", "massgen-peers-")
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		t.Fatalf("gaveUp = %T (%v), want a *fs.PathError", err, err)
	}
	if strings.Contains(pe.Err.Error(), "/tmp/private-base") {
		t.Errorf("the unwrapped error %q names the base directory", pe.Err)
	}
	if !strings.Contains(err.Error(), "/tmp/private-base/massgen-peers-") {
		t.Errorf("the whole error %q does not name where it tried", err)
	}
}
