package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// place is one directory the model can name: the workspace, a context, a
// peer's snapshot.
type place struct {
	name     string // as the model sees it: "workspace", "context/app", "peers/agent2"
	dir      string // host directory
	writable bool
	hidden   []string // the server's own paths inside dir, slash-separated (serverPath)
}

// placesHint ends every path error: the names the model may use.
const placesHint = "name files as workspace/<path> (or just <path>), context/<name>/<path> or peers/agentN/<path>"

// resolve maps a model's path to a place and a path relative to it, which
// os.Root then confines (it refuses "..", symlinks and absolute paths that
// leave the place).
func (t *Toolbox) resolve(p string) (*place, string, error) {
	p = strings.TrimSpace(p)
	if strings.ContainsRune(p, 0) {
		return nil, "", errors.New("the path contains a NUL byte")
	}
	trimmed := strings.TrimPrefix(p, "./")
	// The sandbox's absolute names are the same places.
	for _, abs := range []string{"/workspace", "/context", "/peers"} {
		if trimmed == abs || strings.HasPrefix(trimmed, abs+"/") {
			trimmed = trimmed[1:]
		}
	}
	if strings.HasPrefix(trimmed, "/") {
		return nil, "", fmt.Errorf("%q is an absolute path; %s", p, placesHint)
	}
	first, rest, _ := strings.Cut(trimmed, "/")
	switch first {
	case "workspace":
		if t.workspace == nil {
			return nil, "", fmt.Errorf("this step has no workspace; %s", t.readHint())
		}
		return t.workspace, relOrDot(rest), nil
	case "context", "peers":
		name, rel, _ := strings.Cut(rest, "/")
		for i := range t.places {
			if p := &t.places[i]; p.name == first+"/"+name {
				if rel = relOrDot(rel); p.secretPath(rel) {
					return nil, "", hiddenError(p, rel)
				}
				if p.serverPath(rel) {
					return nil, "", serverPathError(p, rel)
				}
				return p, rel, nil
			}
		}
		return nil, "", fmt.Errorf("there is no %s/%s; %s", first, name, t.readHint())
	}
	if t.workspace == nil {
		return nil, "", fmt.Errorf("%q names no place and this step has no workspace; %s", p, t.readHint())
	}
	return t.workspace, relOrDot(trimmed), nil
}

func relOrDot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

// readHint lists the places this step has.
func (t *Toolbox) readHint() string {
	var names []string
	if t.workspace != nil {
		names = append(names, "workspace/")
	}
	for _, p := range t.places {
		names = append(names, p.name+"/")
	}
	if len(names) == 0 {
		return "this step has no files"
	}
	return "the places here are " + strings.Join(names, ", ")
}

// peer tells a peer's snapshot, peers/agentN.
func (p *place) peer() bool { return strings.HasPrefix(p.name, "peers/") }

// show is how a model sees a path of a place.
func (p *place) show(rel string) string {
	if rel == "." || rel == "" {
		return p.name + "/"
	}
	return p.name + "/" + path.Clean(rel)
}

// open opens the place's root. Roots are opened per call: a Toolbox then
// holds no descriptors and needs no Close.
func (p *place) open() (*os.Root, error) {
	r, err := os.OpenRoot(p.dir)
	if err != nil {
		return nil, fmt.Errorf("%s/ cannot be opened: %w", p.name, unwrap(err))
	}
	return r, nil
}

// pathError words a file-system error for the model.
func pathError(p *place, rel string, err error) error {
	shown := p.show(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist; list_files shows what does", shown)
	case escapes(err):
		return fmt.Errorf("%s leaves %s/ (through .., an absolute path or a symlink); %s", shown, p.name, placesHint)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s cannot be accessed: permission denied", shown)
	}
	return fmt.Errorf("%s: %w", shown, unwrap(err))
}

// escapes tells os.Root's refusal of a path that leaves the root; it
// exports no sentinel for it.
func escapes(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
