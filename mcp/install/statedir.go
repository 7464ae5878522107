package install

import (
	"fmt"
	"path/filepath"
)

// stateDir is where install keeps its records: $XDG_STATE_HOME/massgen-mcp,
// else ~/.local/state/massgen-mcp. A relative XDG_STATE_HOME is ignored, as
// the XDG Base Directory spec says: taken as given it would keep the
// records under whatever directory install runs in, scattered into
// projects, and an uninstall from another directory would find none. note
// says it was ignored.
func stateDir(o *Options) (dir, note string) {
	def := filepath.Join(o.Home, ".local", "state", "massgen-mcp")
	x := o.env("XDG_STATE_HOME")
	switch {
	case x == "":
		return def, ""
	case !filepath.IsAbs(x):
		return def, fmt.Sprintf("XDG_STATE_HOME (%s) is relative, which the XDG Base Directory spec makes invalid, so the install records are kept in %s; set it to an absolute path to move them.", x, def)
	}
	return filepath.Join(x, "massgen-mcp"), ""
}
