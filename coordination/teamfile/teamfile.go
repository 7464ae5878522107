package teamfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/criteria"
)

// Formats a team file can be written in.
const (
	FormatOurs    = "massgen-mcp"
	FormatMassGen = "MassGen"
)

// MaxFileBytes caps a team file: they are a few kilobytes, and a cap keeps a
// mistaken path (a log, a dump) from being parsed at length.
const MaxFileBytes = 1 << 20

// Team is one loaded team file.
type Team struct {
	// Name is the file's base name without its extension: the name an MCP
	// client uses for a team under --teams-dir.
	Name string
	Path string
	// Format is FormatOurs or FormatMassGen (a file with any MassGen-only
	// key: backend, agent, orchestrator, ui, …).
	Format string
	Agents []coordination.Agent
	// Rules as the file sets them; zero fields take the defaults (so command
	// line flags can still override them).
	Rules coordination.Rules
	// Context holds inline text blocks, then, after Load, the text of every
	// context file.
	Context      []string
	ContextPaths []ContextPath
	// Dirs are the context paths that name directories, after Load: the
	// project directories the team works on (coordination/workspace).
	Dirs []workspace.Context
	// Apply is the operator's apply mode for a write context
	// (coordination.ApplyAuto or ApplyPreview; "" is preview).
	Apply string
	// Criteria are eval_criteria, validated and numbered: attached to the
	// session before its first step.
	Criteria []criteria.Item
	// Ignored lists the keys the file sets that massgen-mcp accepts but does
	// not honour, each with what it would have done.
	Ignored []Note
	// Operator lists the operator-only settings the file sets and that take
	// effect (directories, tools, servers, endpoints), by their paths in the
	// file: fine in a file the operator wrote, refused from an MCP client.
	// No key is both here and in Ignored.
	Operator []string
}

// ContextPath is one entry of context_paths.
type ContextPath struct {
	Path       string
	Permission string // read (default) or write
	Protected  []string
	Line       int
}

// Note is a key that is accepted but not honoured.
type Note struct {
	Key  string // e.g. orchestrator.coordination.write_mode
	Line int
	// Effect is what it would have done in MassGen; "" for a key in no
	// table of ours (MassGen grows keys faster than this list).
	Effect string
}

func (n Note) String() string {
	if n.Effect == "" {
		return fmt.Sprintf("%s (line %d) is a setting massgen-mcp does not know, so it changes nothing here", n.Key, n.Line)
	}
	return fmt.Sprintf("%s (line %d) would have %s", n.Key, n.Line, n.Effect)
}

// problem is the note as a --strict-config error.
func (n Note) problem() string {
	if n.Effect == "" {
		return fmt.Sprintf("line %d: %s is a setting massgen-mcp does not know; remove it, or drop --strict-config", n.Line, n.Key)
	}
	return fmt.Sprintf("line %d: %s is not honoured by massgen-mcp (it would have %s); remove it, or drop --strict-config", n.Line, n.Key, n.Effect)
}

// Options change how strictly a file is read.
type Options struct {
	// Strict turns every ignored key into an error (--strict-config).
	Strict bool
}

// Problems is every error found in one file.
type Problems struct {
	File string
	List []string
}

func (p *Problems) Error() string {
	if len(p.List) == 1 {
		return fmt.Sprintf("%s: %s", p.File, p.List[0])
	}
	return fmt.Sprintf("%s has %d problems: %s", p.File, len(p.List), strings.Join(p.List, "; "))
}

// Unwrap makes every team-file problem bad input for the callers' error
// tables.
func (p *Problems) Unwrap() error { return coordination.ErrBadInput }

// Load reads a team file and the context files it names. Relative context
// paths start at the team file's directory.
func Load(path string, opts Options) (*Team, error) {
	data, err := readCapped(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read the team file %s: %w", coordination.ErrBadInput, path, err)
	}
	t, err := Parse(data, path, opts)
	if err != nil {
		return t, err
	}
	if err := t.readContextFiles(filepath.Dir(path), opts); err != nil {
		return t, err
	}
	return t, nil
}

// Parse reads a team file's bytes; file names the file in messages and
// gives the team its name. It reads nothing from disk.
func Parse(data []byte, file string, opts Options) (*Team, error) {
	p := newParser(file)
	t := p.parse(data)
	t.Path = file
	t.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	if opts.Strict {
		for _, n := range t.Ignored {
			p.errs = append(p.errs, n.problem())
		}
	}
	if len(p.errs) > 0 {
		return t, &Problems{File: file, List: p.errs}
	}
	return t, nil
}

// Warning is the one message that names every ignored key and every agent
// whose commands run unsandboxed (sandbox: none), or "" when there is none.
func (t *Team) Warning() string {
	var unconfined string
	if ids := t.Unconfined(); len(ids) > 0 {
		unconfined = fmt.Sprintf("%s: sandbox: none: the commands of %s run unconfined in the workspace, with this server's user's rights and no bubblewrap", t.Path, strings.Join(ids, ", "))
	}
	if len(t.Ignored) == 0 {
		return unconfined
	}
	if unconfined != "" {
		unconfined += "\n"
	}
	parts := make([]string, len(t.Ignored))
	for i, n := range t.Ignored {
		parts[i] = n.String()
	}
	noun := "settings are"
	if len(parts) == 1 {
		noun = "setting is"
	}
	return unconfined + fmt.Sprintf("%s: %d %s not honoured by massgen-mcp and ignored: %s (--strict-config makes this an error)", t.Path, len(parts), noun, strings.Join(parts, "; "))
}

// errTooLarge is a file over the cap.
var errTooLarge = errors.New("larger than 1 MiB")

// readCapped reads a regular file up to max bytes. It looks before it opens,
// so a FIFO or a device named by mistake never blocks the caller.
func readCapped(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > max {
		return nil, errTooLarge
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errTooLarge
	}
	return data, nil
}

// unwrapPathError drops the path an *os.PathError repeats.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
