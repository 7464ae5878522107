package coordination_test

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
)

// finalize_team through another process finalizes the run it holds (files:
// two stores on one directory); coordination/pgstore plays it across
// replicas. The memory store is reached by no other process.
func TestAFinalizeElsewhereIsWrittenByTheRunsHolder(t *testing.T) {
	dir := t.TempDir()
	coordtest.FinalizeElsewhere(t, filestore.New(dir), filestore.New(dir))
}
