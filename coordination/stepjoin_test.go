package coordination_test

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// A step of an agent in flight in another service joins it, in one process
// (two services over one memory store) and across processes (two file
// stores on one directory); coordination/pgstore plays it across replicas.
func TestAStepInFlightElsewhereIsJoined(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		st := memstore.New()
		coordtest.StepJoined(t, st, st)
	})
	t.Run("files", func(t *testing.T) {
		dir := t.TempDir()
		coordtest.StepJoined(t, filestore.New(dir), filestore.New(dir))
	})
}
