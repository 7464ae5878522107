package install

import (
	"fmt"
	"path/filepath"
)

// clientDir is the directory a client takes from the variable name, found
// as the client finds it: a relative value against the directory the client
// starts in — Node's path functions and VS Code's user-data-dir resolution
// both do that — here the project directory. It is absolute, so the record
// names one file wherever uninstall runs; note says what a relative value
// means. dir is "" when the variable is unset.
func clientDir(o *Options, name, client string) (dir, note string) {
	val := o.env(name)
	if val == "" || filepath.IsAbs(val) {
		return val, ""
	}
	dir = filepath.Join(o.Dir, val)
	return dir, fmt.Sprintf("%s (%s) is relative, so it names %s only for %s started in %s, as it does for install; started elsewhere, %s reads another directory. Set %s to an absolute path to mean one place.",
		name, val, dir, client, o.Dir, client, name)
}
