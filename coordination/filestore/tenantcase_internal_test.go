package filestore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/storetest"
)

// foldingFS stands in a case-insensitive filesystem (macOS, Windows, casefold
// ext4, SMB, exFAT): two names equal but for letter case are one directory.
func foldingFS(a, b string) bool {
	return strings.EqualFold(a, b)
}

// On a case-insensitive filesystem tenants/alice is tenants/Alice: a store
// opened for alice would read and write Alice's sessions. The store refuses
// it, naming both, and opens tenants that differ in more than case, the
// tenant spelled as its directory is, and (on a case-sensitive filesystem)
// both spellings as the two directories they are.
func TestATenantEqualButForCaseToAnExistingOneIsRefusedOnAFoldingFS(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tenants", "Alice", "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	ss := NewStores(dir)
	ss.sameDir = foldingFS
	_, err := ss.For("alice")
	if err == nil {
		t.Fatal("tenant alice opened over tenant Alice's directory on a case-insensitive filesystem")
	}
	if !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("error is not ErrBadInput: %v", err)
	}
	for _, want := range []string{`"alice"`, `"Alice"`, "letter case"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %s: %v", want, err)
		}
	}
	for _, ok := range []string{"Alice", "bob", coordination.DefaultTenant} {
		if _, err := ss.For(ok); err != nil {
			t.Errorf("tenant %s refused: %v", ok, err)
		}
	}

	// A case-sensitive filesystem keeps the two apart: nothing is refused.
	plain := NewStores(dir)
	if _, err := plain.For("alice"); err != nil {
		t.Errorf("tenant alice refused on a case-sensitive filesystem: %v", err)
	}
}

// On a case-insensitive filesystem session foo's directory is session Foo's:
// the existence check finds it and a create of foo fails (nothing of Foo's
// is read or overwritten). The error must say why, naming Foo, rather than
// claim that a session foo exists. This filesystem is case-sensitive, so
// the test asks the store's answer for foo directly, as Create does when
// the check finds the twin.
func TestACreateOfASessionEqualButForCaseNamesTheExistingOne(t *testing.T) {
	s := New(t.TempDir())
	s.sameDir = foldingFS
	if err := s.Create(t.Context(), storetest.NewSession("Foo")); err != nil {
		t.Fatal(err)
	}
	err := s.exists("foo")
	if !errors.Is(err, coordination.ErrSessionExists) {
		t.Fatalf("error is not ErrSessionExists: %v", err)
	}
	for _, want := range []string{`"foo"`, `"Foo"`, "letter case"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %s: %v", want, err)
		}
	}
	// A session that exists under its own spelling is told as before.
	if err := s.Create(t.Context(), storetest.NewSession("Foo")); !errors.Is(err, coordination.ErrSessionExists) || strings.Contains(err.Error(), "letter case") {
		t.Errorf("second create of Foo: %v", err)
	}
}

// Two spellings of one tenant, both opened before either has a directory
// (two servers with different tokens files on one state directory): each
// open finds no twin. On a case-insensitive filesystem the second spelling's
// mkdir lands in the first's directory, so its create must find the twin
// then, and refuse, writing nothing of its own there.
func TestTwoNewSpellingsOfATenantAreRefusedAtTheSecondCreate(t *testing.T) {
	dir := t.TempDir()
	first, second := NewStores(dir), NewStores(dir)
	first.sameDir, second.sameDir = foldingFS, foldingFS
	acme, err := first.For("acme")
	if err != nil {
		t.Fatal(err)
	}
	upper, err := second.For("Acme")
	if err != nil {
		t.Fatalf("tenant Acme refused before any directory exists: %v", err)
	}
	if err := acme.Create(t.Context(), storetest.NewSession("s1")); err != nil {
		t.Fatal(err)
	}
	err = upper.Create(t.Context(), storetest.NewSession("s2"))
	if !errors.Is(err, coordination.ErrBadInput) {
		t.Fatalf("tenant Acme created a session in tenant acme's directory: %v", err)
	}
	for _, want := range []string{`"Acme"`, `"acme"`, "letter case"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %s: %v", want, err)
		}
	}
	// The first spelling keeps working.
	if err := acme.Create(t.Context(), storetest.NewSession("s3")); err != nil {
		t.Errorf("tenant acme's second create: %v", err)
	}
}

// A tenant opened before any directory existed must not read the
// directory another spelling made meanwhile. A symlink tenants/Acme ->
// acme stands in for a case-insensitive filesystem, where tenants/Acme
// resolves to acme's directory.
func TestATenantDoesNotReadTheDirectoryAnotherSpellingMadeAfterItOpened(t *testing.T) {
	dir := t.TempDir()
	upper, err := NewStores(dir).For("Acme")
	if err != nil {
		t.Fatal(err)
	}
	acme, err := NewStores(dir).For("acme")
	if err != nil {
		t.Fatal(err)
	}
	if err := acme.Create(t.Context(), storetest.NewSession("s1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("acme", filepath.Join(dir, "tenants", "Acme")); err != nil {
		t.Fatal(err)
	}
	if ids, err := upper.Sessions(t.Context()); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("tenant Acme listed tenant acme's sessions: %v, %v", ids, err)
	}
	if _, err := upper.Session(t.Context(), "s1"); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("tenant Acme read tenant acme's session: %v", err)
	}
	if _, err := NewStores(dir).For("Acme"); !errors.Is(err, coordination.ErrBadInput) {
		t.Errorf("tenant Acme opened over tenant acme's directory: %v", err)
	}
}
