package workspace

import (
	"fmt"
	"os"

	"github.com/massgen-go/massgen-mcp/permissions"
)

// Change is one file of the winner's diff against the base.
type Change struct {
	Path string `json:"path"`
	Op   string `json:"op"` // added | changed | deleted
	// Reason says why a change was not applied (a conflict, a protected
	// path, a symlink), or that a written one was already made (the
	// context had it before the apply: an apply a crash cut short).
	Reason string `json:"reason,omitempty"`
}

// ConfigLeftOut begins the reason of a change an apply skipped because it
// is tool configuration (or applies with some) and the apply was asked to
// leave that out.
const ConfigLeftOut = "tool configuration, left out as asked: "

// Applied is what applying the winner's changes did to the write context.
type Applied struct {
	Context   string   `json:"context"`
	Written   []Change `json:"written"`
	Conflicts []Change `json:"conflicts"`
	Skipped   []Change `json:"skipped"`
	// Held is the tool configuration the winner changed (ToolConfig) and
	// the apply was not told to include: while any is held, nothing is
	// written. Each change's Reason says what the file can run.
	Held []Change `json:"held,omitempty"`
}

// Diff ops.
const (
	OpAdded   = "added"
	OpChanged = "changed"
	OpDeleted = "deleted"
)

// Diff lists what the winner changed against the base, by path.
func Diff(base, win *Manifest) []Change {
	var out []Change
	for _, f := range win.Files {
		b, ok := base.Lookup(f.Path)
		switch {
		case !ok:
			out = append(out, Change{Path: f.Path, Op: OpAdded})
		case b.SHA256 != f.SHA256 || b.Link != f.Link || b.Mode != f.Mode:
			out = append(out, Change{Path: f.Path, Op: OpChanged})
		}
	}
	for _, b := range base.Files {
		if _, ok := win.Lookup(b.Path); !ok {
			out = append(out, Change{Path: b.Path, Op: OpDeleted})
		}
	}
	return out
}

// Config says what an apply does with the winner's tool configuration
// (ToolConfig).
type Config int

const (
	// HoldConfig, the default: while the changes hold any, nothing is
	// written, and Applied.Held lists each with what it can run.
	HoldConfig Config = iota
	// IncludeConfig writes it with the rest: the user saw it and asked.
	IncludeConfig
	// SkipConfig writes the rest and lists it as skipped, never written.
	SkipConfig
)

// ApplyOptions are how ApplyWith applies.
type ApplyOptions struct {
	// Whole: all or nothing (ApplyAll); else a conflict leaves its own
	// unit and the rest is written (Apply).
	Whole  bool
	Config Config
}

// Apply writes the winner's changes (its snapshot m, files in dir) to the
// write context, against the base the workspaces started from: the
// operator's apply: auto, where a conflict leaves its own unit and the rest
// is written. Changes go in units (applyunits.go): one file, or every
// change at and under a path whose kind the winner changed (file,
// directory, symlink). Every unit is checked before anything is touched and
// then applies whole or not at all: a path the user changed meanwhile
// (neither the base's nor the winner's), a file the session never had in a
// directory being replaced, or a symlink or file where a directory was is a
// conflict, left as the user has it; protected paths, paths inside a .git
// directory and the winner's symlinks are never written; an operation that
// fails midway has the unit undone from the base. Tool configuration is
// held: while the changes hold any, nothing is written (ApplyWith chooses
// otherwise). A session without a write context applies nothing (nil).
func (t *Team) Apply(m *Manifest, dir string) (*Applied, error) {
	return t.ApplyWith(m, dir, ApplyOptions{})
}

// ApplyAll is Apply all or nothing, for a preview the user approved: one
// conflict anywhere and nothing is written (the result lists the conflicts
// and no writes); an operation that fails midway undoes every unit written
// before it and returns the error. Skipped paths (protected, symlinks) are
// listed and do not stop it.
func (t *Team) ApplyAll(m *Manifest, dir string) (*Applied, error) {
	return t.ApplyWith(m, dir, ApplyOptions{Whole: true})
}

// ApplyWith is Apply, or ApplyAll with o.Whole, doing with the winner's
// tool configuration what o.Config says.
func (t *Team) ApplyWith(m *Manifest, dir string, o ApplyOptions) (*Applied, error) {
	c, ok := t.WriteContext()
	if !ok {
		return nil, nil
	}
	base, baseDir, err := t.base()
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(c.Path)
	if err != nil {
		return nil, fmt.Errorf("cannot open the write context %s: %w", c.Path, err)
	}
	defer root.Close()
	a := &applier{root: root, base: base, win: m, dir: dir, baseDir: baseDir, prot: newProtector(c, append([]string{t.StateDir}, t.Private...)...)}
	out := &Applied{Context: c.Path, Written: []Change{}, Conflicts: []Change{}, Skipped: []Change{}}
	type checked struct {
		u       unit
		steps   []step
		already []Change
	}
	var todo []checked
	for _, u := range units(base, m, Diff(base, m)) {
		if cfg, why := configOf(u); o.Config != IncludeConfig && why != "" {
			for _, ch := range u.changes {
				ch.Reason = ToolConfig(ch.Path)
				if ch.Reason == "" {
					// a source file of the unit, which applies whole
					ch.Reason = fmt.Sprintf("applies with %s, which is tool configuration: %s", permissions.Shown(cfg), why)
				}
				if o.Config == SkipConfig {
					ch.Reason = ConfigLeftOut + ch.Reason
					out.Skipped = append(out.Skipped, ch)
				} else {
					out.Held = append(out.Held, ch)
				}
			}
			continue
		}
		steps, already, why, skip := a.check(u)
		if why == "" {
			todo = append(todo, checked{u, steps, already})
			continue
		}
		refuse(out, base, m, u, why, skip)
	}
	if len(out.Held) > 0 || o.Whole && len(out.Conflicts) > 0 {
		return out, nil
	}
	whole := o.Whole
	var done []step
	for _, c := range todo {
		if err := a.run(c.u, c.steps); err != nil {
			if whole {
				if uerr := a.undo(done); uerr != nil {
					return nil, fmt.Errorf("%w; undoing the changes written before it failed too (%s), so compare the context with the winner's files by hand", err, refusal(uerr))
				}
				return nil, fmt.Errorf("%w; every change written before it was undone, so nothing was applied", err)
			}
			refuse(out, base, m, c.u, err.Error(), false)
			continue
		}
		done = append(done, c.steps...)
		// A change the context already had is listed as written: the
		// apply's result says what the session changed, and an apply a
		// crash cut short, tried again, finds what it wrote before.
		for _, s := range c.steps {
			out.Written = append(out.Written, s.Change)
		}
		out.Written = append(out.Written, c.already...)
	}
	return out, nil
}

// configOf is the first path of a unit that is tool configuration (its
// root, else a change's) and what it can run; "" when there is none. A
// path inside a .git directory is never written, so it holds nothing back,
// as the preview does not count it (Preview.Config): a unit held here is
// tool configuration the preview showed, so an apply_changes that asks the
// user only when it may write asks for every apply that writes.
func configOf(u unit) (path, why string) {
	for _, p := range append([]string{u.root}, changePaths(u)...) {
		if why := ToolConfig(p); why != "" && !InsideGit(p) {
			return p, why
		}
	}
	return "", ""
}

func changePaths(u unit) []string {
	out := make([]string, len(u.changes))
	for i, ch := range u.changes {
		out[i] = ch.Path
	}
	return out
}

// refuse lists a unit's changes as conflicts (or skipped, for paths never
// written) with the reason.
func refuse(out *Applied, base, m *Manifest, u unit, why string, skip bool) {
	if u.kind {
		why = fmt.Sprintf("%s, a %s that the winner made a %s, was not applied: %s", u.root, kindName(base, u.root), kindName(m, u.root), why)
	}
	for _, ch := range u.changes {
		ch.Reason = why
		if skip {
			out.Skipped = append(out.Skipped, ch)
		} else {
			out.Conflicts = append(out.Conflicts, ch)
		}
	}
}

// Noted is a change's reason as a listing of what was written shows it
// after the path: " (already as the winner has it)", or nothing.
func Noted(reason string) string {
	if reason == "" {
		return ""
	}
	return " (" + reason + ")"
}

// Clone returns a deep copy (nil for nil).
func (a *Applied) Clone() *Applied {
	if a == nil {
		return nil
	}
	c := *a
	c.Written = append(a.Written[:0:0], a.Written...)
	c.Conflicts = append(a.Conflicts[:0:0], a.Conflicts...)
	c.Skipped = append(a.Skipped[:0:0], a.Skipped...)
	c.Held = append(a.Held[:0:0], a.Held...)
	return &c
}
