package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestAllowRootFlagsKeepReadAndWriteApart: --allow-root gives read-only
// roots, --allow-root-write writable ones; stdio's default (the working
// directory) is read-only, and a root that is not a directory is refused
// naming its flag.
func TestAllowRootFlagsKeepReadAndWriteApart(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	docs, proj := t.TempDir(), t.TempDir()
	file := filepath.Join(docs, "f.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name        string
		f           serveFlags
		read, write []string
	}{
		{"stdio default", serveFlags{}, []string{wd}, nil},
		{"http default", serveFlags{http: "127.0.0.1:0"}, nil, nil},
		{"read only", serveFlags{allowRoots: []string{docs}}, []string{docs}, []string{}},
		{"write only", serveFlags{writeRoots: []string{proj}}, []string{}, []string{proj}},
		{"both", serveFlags{allowRoots: []string{docs}, writeRoots: []string{proj}}, []string{docs}, []string{proj}},
	}
	for _, c := range cases {
		read, write, err := allowedRoots(c.f)
		if err != nil || !slices.Equal(read, c.read) || !slices.Equal(write, c.write) {
			t.Errorf("%s: read %v write %v (%v), want read %v write %v", c.name, read, write, err, c.read, c.write)
		}
	}
	_, _, err = allowedRoots(serveFlags{writeRoots: []string{file}})
	if !errors.Is(err, coordination.ErrBadInput) || !strings.Contains(err.Error(), "--allow-root-write") {
		t.Errorf("a file as --allow-root-write: %v", err)
	}
}
