package skills

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed team-run massgen-run checkpoint commands
var files embed.FS

// FS is every skill directory (NAME/SKILL.md, NAME/references/…) and the
// plugin's commands/ directory.
func FS() fs.FS { return files }

// Names lists the skills: the directories that hold a SKILL.md.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := fs.Stat(files, e.Name()+"/SKILL.md"); err == nil {
			names = append(names, e.Name())
		}
	}
	return names
}

// Skill is one skill's front matter.
type Skill struct {
	Name        string
	Description string
	Body        string
}

// Parse reads a SKILL.md's front matter (name and description, the two
// fields every Agent Skills client requires) and its body.
func Parse(text string) (Skill, error) {
	var s Skill
	rest, found := strings.CutPrefix(text, "---\n")
	if !found {
		return s, errors.New("a SKILL.md starts with a --- front matter block")
	}
	head, body, found := strings.Cut(rest, "\n---\n")
	if !found {
		return s, errors.New("the front matter block has no closing ---")
	}
	var fm struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
	}
	if err := yaml.Unmarshal([]byte(head), &fm); err != nil {
		return s, fmt.Errorf("the front matter is not YAML: %w", err)
	}
	s.Name, s.Description, s.Body = fm.Name, fm.Description, body
	return s, nil
}
