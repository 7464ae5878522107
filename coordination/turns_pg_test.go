package coordination_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestAMissingTurnOnADatabaseNamesNoDirectory: continuing a session that
// is not stored says it is not in this store; a database-backed session
// has no directory, and the replica's working copy is not where it would
// be (it named "sessions/nope").
func TestAMissingTurnOnADatabaseNamesNoDirectory(t *testing.T) {
	db, err := pgstore.Open(context.Background(), pgtest.Schema(t), pgstore.Options{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	st, err := db.For(coordination.DefaultTenant)
	if err != nil {
		t.Fatal(err)
	}
	a := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: backends.Open, RelativeDirs: true})
	_, err = a.Create(context.Background(), coordination.TeamSpec{ContinueFrom: "nope", Task: "Now a darker one"})
	if !errors.Is(err, coordination.ErrSessionNotFound) || !strings.Contains(err.Error(), "is not in this store") || strings.Contains(err.Error(), "sessions") {
		t.Fatalf("continuing a missing session on a database: %v", err)
	}
}
