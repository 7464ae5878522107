package install

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/skills"
)

// ServerName is the name the server is registered under in every client.
const ServerName = "massgen"

// Options say what to install where. Home, Dir and Env are explicit so tests
// run against a temporary home.
type Options struct {
	Client string // claude-code, codex, cursor, vscode or gemini
	Scope  string // ScopeProject or ScopeUser (default)
	Skills bool   // also copy the skills
	DryRun bool   // report what would change; write nothing
	// Force replaces a massgen entry the user wrote (install refuses
	// otherwise); the record keeps it and uninstall puts it back.
	Force bool
	Home  string // the user's home directory
	Dir   string // the project directory
	// Env looks up environment variables: the clients' own (CLAUDE_CONFIG_DIR,
	// CODEX_HOME, GEMINI_CLI_HOME, XDG_CONFIG_HOME) and which provider keys are set — only
	// their names are ever written.
	Env func(string) string
	// Command and Args start the server (default massgen-mcp serve).
	Command string
	Args    []string
	// StateDir keeps the records uninstall restores from (default
	// $XDG_STATE_HOME/massgen-mcp, else ~/.local/state/massgen-mcp).
	StateDir string
	// stateNote says that a relative XDG_STATE_HOME was ignored.
	stateNote string
}

func (o *Options) env(k string) string {
	if o.Env == nil {
		return ""
	}
	return o.Env(k)
}

func (o *Options) defaults() error {
	if o.Scope == "" {
		o.Scope = ScopeUser
	}
	if o.Scope != ScopeProject && o.Scope != ScopeUser {
		return fmt.Errorf("unknown scope %q; use project or user", o.Scope)
	}
	if o.Home == "" {
		return errors.New("no home directory to install into (set HOME)")
	}
	if o.Dir == "" {
		o.Dir = "."
	}
	if abs, err := filepath.Abs(o.Dir); err == nil {
		o.Dir = abs
	}
	if o.Command == "" {
		o.Command = "massgen-mcp"
	}
	if o.Args == nil {
		o.Args = []string{"serve"}
	}
	if o.StateDir == "" {
		o.StateDir, o.stateNote = stateDir(o)
	}
	return nil
}

// Change is one file install or uninstall touched (or, with DryRun, would).
type Change struct {
	Path   string
	Action string // created, updated, unchanged, restored, deleted, removed entry, absent, kept (…)
}

// Report is what a run did, for printing.
type Report struct {
	Client, Scope string
	Changes       []Change
	Notes         []string
	DryRun        bool
	// dirs are directories install created for files now deleted; they go
	// too once empty.
	dirs []string
}

// Changed tells whether anything was (or would be) written.
func (r *Report) Changed() bool {
	for _, c := range r.Changes {
		if c.Action != "unchanged" && c.Action != "absent" && !strings.HasPrefix(c.Action, "kept") {
			return true
		}
	}
	return false
}

func (r *Report) String() string {
	var b strings.Builder
	verb := ""
	if r.DryRun {
		verb = "would be "
	}
	for _, c := range r.Changes {
		fmt.Fprintf(&b, "%s%s: %s\n", verb, c.Action, c.Path)
	}
	if !r.Changed() {
		b.WriteString("nothing to change\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}

// providerVars are the provider variables that are set here, by name only.
func providerVars(o *Options) []string {
	var names []string
	for _, b := range providers.Backends() {
		for _, k := range append(append([]string{}, b.KeyEnv...), b.ExtraEnv...) {
			if o.env(k) != "" && !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	return names
}

// Install registers the server (and, with Skills, copies the skills).
func Install(o Options) (*Report, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if err := sudoCheck(&o); err != nil {
		return nil, err
	}
	t, err := resolve(&o)
	if err != nil {
		return nil, err
	}
	rep := &Report{Client: t.client, Scope: t.scope, DryRun: o.DryRun, Notes: t.notes}
	if o.stateNote != "" {
		rep.Notes = append(rep.Notes, o.stateNote)
	}
	if t.client == "claude-code" {
		if err := pluginCheck(&o, rep, t); err != nil {
			return nil, err
		}
	}
	vars := providerVars(&o)
	before, existed, err := readFile(t.path)
	if err != nil {
		return nil, err
	}
	want := jsonEntry(t, o.Command, o.Args, vars)
	if t.format == formatTOML {
		want = tomlEntry(o.Command, o.Args, vars)
	}
	ed, err := entryEdit(&o, rep, t, before, want)
	if err != nil {
		return nil, err
	}
	if err := rebase(&o, t, ed, before, existed); err != nil {
		return nil, fmt.Errorf("%s: %w", t.path, err)
	}
	after, err := setEntry(t, before, want, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.path, err)
	}
	if err := apply(&o, rep, t.path, before, existed, after, ed); err != nil {
		return nil, err
	}
	if o.Skills {
		if err := installSkills(&o, rep, t.skills); err != nil {
			return nil, err
		}
	}
	rep.Notes = append(rep.Notes, keyNote(t, vars))
	if t.approval != "" {
		rep.Notes = append(rep.Notes, t.approval)
	}
	return rep, nil
}

// edit is what install remembers of the entry it writes in a config: the
// entry, and the user's own one it replaced (with Force).
type edit struct {
	written, replaced []byte
	// rebased says the file is not what install last wrote (changed or
	// deleted since): base, the file without install's entry, becomes what
	// uninstall restores, since the bytes before the first install would
	// throw away everything that came after.
	rebased bool
	base    []byte
}

// entryEdit decides what becomes of an entry already in the file: the same
// as ours or one install wrote is replaced; the user's own is refused, or
// with Force replaced and kept for uninstall.
func entryEdit(o *Options, rep *Report, t target, before, want []byte) (*edit, error) {
	ed := &edit{written: want}
	cur, err := getEntry(t, before)
	if err != nil || cur == nil || sameEntry(t, cur, want) {
		// A file that does not parse is refused by setEntry, which says
		// what to add by hand.
		return ed, nil
	}
	rec, err := loadRecord(o.StateDir, t.path)
	if err != nil {
		return nil, err
	}
	if wroteIt(t, rec, before, cur) {
		return ed, nil
	}
	if !o.Force {
		return nil, foreign(t, cur)
	}
	ed.replaced = cur
	rep.Notes = append(rep.Notes, "--force replaced your own "+ServerName+" entry in "+t.path+"; the install record keeps it and uninstall puts it back.")
	return ed, nil
}

// rebase sets ed.base when the record's "before" no longer describes the
// file: it was changed (or deleted) since install last wrote it.
func rebase(o *Options, t target, ed *edit, before []byte, existed bool) error {
	if ed.replaced != nil {
		return nil // a new record starts from these very bytes
	}
	rec, err := loadRecord(o.StateDir, t.path)
	if err != nil || rec == nil || existed && digest(before) == rec.After {
		return err
	}
	ed.rebased = true
	if !existed {
		return nil
	}
	if rec.Replaced != nil {
		ed.base, err = setEntry(t, before, rec.Replaced, true)
	} else {
		ed.base, err = deleteEntry(t, before)
	}
	return err
}

// keyNote says how the server gets its keys from this client.
func keyNote(t target, vars []string) string {
	names := strings.Join(vars, ", ")
	if names == "" {
		names = "none is set in this shell"
	}
	switch t.envStyle {
	case "env_vars":
		return "Codex starts servers with a reduced environment, so the entry lists the provider variables set here by name (env_vars: " + names + "); never their values. Keys set later, or elsewhere, reach the server from ~/.env, which massgen-mcp reads itself."
	case "dollar":
		return "Gemini CLI withholds variables that look like keys from the servers it starts, so the entry passes the provider variables set here as ${NAME} references it expands (" + names + "), never their values; one unset where Gemini CLI starts arrives empty, so ~/.env (which massgen-mcp reads itself) is the sure place for keys."
	case "ref":
		return "the entry passes the provider variables set here as ${env:NAME} references (" + names + "), never their values; a client started outside your shell may not have them, so ~/.env (which massgen-mcp reads itself) is the sure place for keys."
	}
	return "Claude Code starts the server with its own environment, so provider keys in your shell reach it; keys can also go in ~/.env, which massgen-mcp reads itself. No key value is written to the config."
}

// apply writes a file's new bytes (unless unchanged or a dry run) and keeps
// the record uninstall needs.
func apply(o *Options, rep *Report, path string, before []byte, existed bool, after []byte, ed *edit) error {
	if !o.DryRun {
		if err := sweep(o, path); err != nil {
			return err
		}
	}
	if existed && bytes.Equal(before, after) {
		rep.Changes = append(rep.Changes, Change{Path: path, Action: "unchanged"})
		return nil
	}
	action := "updated"
	if !existed {
		action = "created"
	}
	rep.Changes = append(rep.Changes, Change{Path: path, Action: action})
	if o.DryRun {
		return nil
	}
	rec, err := loadRecord(o.StateDir, path)
	if err != nil {
		return err
	}
	if rec == nil || ed != nil && ed.replaced != nil {
		// The first install's "before" is the one to restore, however many
		// installs follow — unless the user's own entry stood there since,
		// which is then what uninstall must give back.
		rec = &record{Path: path, Created: !existed, Before: before}
	} else if ed != nil && ed.rebased {
		rec.Created, rec.Before = !existed, ed.base
	}
	if ed != nil {
		if rec.Entry != nil && ed.written != nil && !bytes.Equal(rec.Entry, ed.written) {
			rec.Previous = rec.Entry
		}
		rec.Entry = ed.written
		if ed.replaced != nil {
			rec.Replaced = ed.replaced
		}
	}
	if !existed {
		real, err := resolveLink(path)
		if err != nil {
			return err
		}
		made, err := mkdirs(filepath.Dir(real), 0o755)
		if err != nil {
			return err
		}
		rec.Dirs = append(rec.Dirs, made...)
	}
	// The record goes first: a run killed between the two leaves a record
	// that names bytes the file does not hold (so uninstall edits rather than
	// restores), never a file changed with no record of what it held.
	rec.After = digest(after)
	if err := saveRecord(o.StateDir, rec); err != nil {
		return err
	}
	return writeFile(path, after)
}

// sweep removes what a killed run left beside a file and its record.
func sweep(o *Options, path string) error {
	if err := sweepTemps(path); err != nil {
		return err
	}
	return sweepTemps(recordPath(o.StateDir, path))
}

// installSkills copies every skill directory into dir/<name>/.
func installSkills(o *Options, rep *Report, dir string) error {
	src := skills.FS()
	for _, name := range skills.Names() {
		err := fs.WalkDir(src, name, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := fs.ReadFile(src, p)
			if err != nil {
				return err
			}
			dst := filepath.Join(dir, filepath.FromSlash(p))
			before, existed, err := readFile(dst)
			if err != nil {
				return err
			}
			var ed *edit
			if existed && !bytes.Equal(before, data) {
				rec, err := loadRecord(o.StateDir, dst)
				if err != nil {
					return err
				}
				if rec == nil || digest(before) != rec.After {
					// Not the file install last wrote here: the user's own
					// skill, or ours edited since. Theirs, as their own
					// massgen entry is.
					if !o.Force {
						rep.Changes = append(rep.Changes, Change{Path: dst, Action: "kept (yours, not the one install wrote)"})
						rep.Notes = append(rep.Notes, dst+" is not the file install wrote there (your own, or edited since), so install left it; --force replaces it, and uninstall then puts it back.")
						return nil
					}
					ed = &edit{rebased: true, base: before}
				}
			}
			return apply(o, rep, dst, before, existed, data, ed)
		})
		if err != nil {
			return fmt.Errorf("copying skill %s: %w", name, err)
		}
	}
	return nil
}

// Uninstall removes what Install added: a file it created and nobody changed
// is deleted, a file it changed and nobody touched since is restored byte
// for byte, and otherwise only the server entry (and the skills' files as
// installed) are removed.
func Uninstall(o Options) (*Report, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if err := sudoCheck(&o); err != nil {
		return nil, err
	}
	t, err := resolve(&o)
	if err != nil {
		return nil, err
	}
	rep := &Report{Client: t.client, Scope: t.scope, DryRun: o.DryRun, Notes: t.notes}
	if o.stateNote != "" {
		rep.Notes = append(rep.Notes, o.stateNote)
	}
	if err := uninstallFile(&o, rep, t, t.path, true); err != nil {
		return nil, err
	}
	if o.Skills {
		for _, name := range skills.Names() {
			err := fs.WalkDir(skills.FS(), name, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				return uninstallFile(&o, rep, t, filepath.Join(t.skills, filepath.FromSlash(p)), false)
			})
			if err != nil {
				return nil, err
			}
		}
	}
	removeEmptyDirs(rep.dirs)
	return rep, nil
}

// uninstallFile undoes one file; config says it holds the server entry (so
// a changed file can lose just that entry).
func uninstallFile(o *Options, rep *Report, t target, path string, config bool) error {
	cur, exists, err := readFile(path)
	if err != nil {
		return err
	}
	rec, err := loadRecord(o.StateDir, path)
	if err != nil {
		return err
	}
	if !o.DryRun {
		if err := sweep(o, path); err != nil {
			return err
		}
	}
	change := func(action string) { rep.Changes = append(rep.Changes, Change{Path: path, Action: action}) }
	switch {
	case !exists:
		change("absent")
		if rec != nil && !o.DryRun {
			return dropRecord(o.StateDir, path)
		}
		return nil
	case rec != nil && digest(cur) == rec.After:
		if rec.Created {
			change("deleted")
			if o.DryRun {
				return nil
			}
			// Through a symlink the file install created is the target.
			real, err := resolveLink(path)
			if err != nil {
				return err
			}
			if err := os.Remove(real); err != nil {
				return err
			}
			rep.dirs = append(rep.dirs, rec.Dirs...)
		} else {
			change("restored")
			if o.DryRun {
				return nil
			}
			if err := writeFile(path, rec.Before); err != nil {
				return err
			}
		}
		return dropRecord(o.StateDir, path)
	case !config:
		// A skill file changed since it was installed is the user's now.
		if rec != nil {
			change("kept (changed since install)")
			if !o.DryRun {
				return dropRecord(o.StateDir, path)
			}
		}
		return nil
	}
	after, action, err := undoEntry(rep, t, rec, cur)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(after, cur) {
		change("unchanged")
	} else {
		change(action)
		if !o.DryRun {
			if err := writeFile(path, after); err != nil {
				return err
			}
		}
	}
	if rec != nil && !o.DryRun {
		return dropRecord(o.StateDir, path)
	}
	return nil
}

// undoEntry takes install's entry out of a file changed since install: the
// user's own entry that --force replaced goes back; an entry that is not the
// one install wrote (the user changed it since) stays; with no record to
// tell, the entry goes.
func undoEntry(rep *Report, t target, rec *record, cur []byte) ([]byte, string, error) {
	entry, err := getEntry(t, cur)
	if err != nil {
		return nil, "", err
	}
	switch {
	case rec != nil && rec.Entry != nil && entry != nil && !rec.ours(t, entry):
		rep.Notes = append(rep.Notes, "the "+ServerName+" entry in "+t.path+" is not the one install wrote (changed since), so uninstall leaves it.")
		return cur, "", nil
	case rec != nil && rec.Replaced != nil:
		after, err := setEntry(t, cur, rec.Replaced, true)
		return after, "restored your entry", err
	}
	after, err := deleteEntry(t, cur)
	return after, "removed entry", err
}

// mkdirs creates dir and its missing parents, each owned as its parent
// is (chownLike), returning those it created, deepest first.
func mkdirs(dir string, perm os.FileMode) ([]string, error) {
	var made []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		made = append(made, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return nil, err
	}
	for i := len(made) - 1; i >= 0; i-- {
		if err := chownLike(made[i], filepath.Dir(made[i])); err != nil {
			return nil, err
		}
	}
	return made, nil
}

// removeEmptyDirs removes the directories install created that are empty
// now, deepest first; one that holds anything else stays.
func removeEmptyDirs(dirs []string) {
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
	for _, d := range slices.Compact(dirs) {
		_ = os.Remove(d) // fails, as it should, on a directory that is not empty
	}
}
