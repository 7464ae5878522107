package filestore

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Create assembles a session under sessions/.<id>.tmp-* and renames it into
// place; a kill in between leaves that directory behind, outside any session,
// so no per-session check sees it. These find and remove such leftovers.

// CreateLeftovers lists the temp directories crashed creates left in the
// sessions directory: of session id, or of every session when id is "". A
// create takes milliseconds, so one younger than a minute may be in progress
// and is not listed.
func (s *Store) CreateLeftovers(id string) []string {
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		stem, _, ok := strings.Cut(strings.TrimPrefix(de.Name(), "."), ".tmp-")
		if !ok || !de.IsDir() || !strings.HasPrefix(de.Name(), ".") || coordination.CheckSessionID(stem) != nil || (id != "" && stem != id) {
			continue
		}
		if p := filepath.Join(s.dir, de.Name()); older(p, staleTemp) {
			out = append(out, p)
		}
	}
	return out
}

// RemoveCreateLeftovers removes what CreateLeftovers lists and returns what
// it removed. Nothing in them was ever a session: the rename that would have
// made one never happened.
func (s *Store) RemoveCreateLeftovers(id string) []string {
	var gone []string
	for _, p := range s.CreateLeftovers(id) {
		if os.RemoveAll(p) == nil {
			gone = append(gone, p)
		}
	}
	return gone
}
