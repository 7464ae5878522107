package cliagent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindBinaryPrefersItsVariableAndSaysTheFix(t *testing.T) {
	info := Info{Binary: "fake", BinaryEnv: "FAKE_BIN"}
	dir := t.TempDir()
	bin := filepath.Join(dir, "fake")
	os.WriteFile(bin, []byte("#!/bin/sh\necho \"fake 1.2.3\"\necho run >> "+filepath.Join(dir, "runs")+"\n"), 0o755)
	notFound := func(string) (string, error) { return "", errors.New("no") }
	if p, err := FindBinary(info, []string{"FAKE_BIN=" + bin}, notFound); err != nil || p != bin {
		t.Fatalf("%q %v", p, err)
	}
	_, err := FindBinary(info, []string{"FAKE_BIN=" + dir}, notFound)
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "FAKE_BIN="+dir+" is not an executable file") {
		t.Fatalf("a directory: %v", err)
	}
	_, err = FindBinary(info, nil, notFound)
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "fake is not on PATH; install it or set FAKE_BIN") {
		t.Fatalf("missing: %v", err)
	}
	for range 3 {
		if v, err := Version(context.Background(), bin); err != nil || v != "fake 1.2.3" {
			t.Fatalf("version %q %v", v, err)
		}
	}
	if runs, _ := os.ReadFile(filepath.Join(dir, "runs")); strings.Count(string(runs), "run") != 1 {
		t.Fatalf("the binary ran %d times for three Version calls; once is enough", strings.Count(string(runs), "run"))
	}
}
