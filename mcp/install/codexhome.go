package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// codexHome is the directory Codex keeps its user configuration in, found as
// Codex finds it (find_codex_home): CODEX_HOME when set — it must exist and
// be a directory, or Codex refuses to start, and a relative one is taken
// against the directory Codex starts in, here the project directory — else
// ~/.codex. The path is absolute, so the record names one file wherever
// uninstall runs. It is not resolved through symlinks as Codex's is: the
// same file either way, and a record made under the link's name still
// matches. note says what a relative CODEX_HOME means.
func codexHome(o *Options) (dir, note string, err error) {
	val := o.env("CODEX_HOME")
	dir, note = clientDir(o, "CODEX_HOME", "Codex")
	if dir == "" {
		return filepath.Join(o.Home, ".codex"), "", nil
	}
	named := dir
	if dir != val {
		named = val + " (" + dir + ")"
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("CODEX_HOME points to %s, which does not exist, and Codex refuses to start then: create it (mkdir -p %s), or unset CODEX_HOME to use ~/.codex", named, dir)
	case err != nil:
		return "", "", fmt.Errorf("reading CODEX_HOME, %s: %w", named, err)
	case !fi.IsDir():
		return "", "", fmt.Errorf("CODEX_HOME points to %s, which is not a directory, and Codex refuses to start then: point it at a directory, or unset it to use ~/.codex", named)
	}
	return dir, note, nil
}
