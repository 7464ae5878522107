package coordination_test

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
)

// A cancel acknowledged is a cancel kept, in one process (two services over
// one memory store) and across processes (two file stores on one
// directory); coordination/pgstore plays it across replicas.
func TestAnAcknowledgedCancelIsKept(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		st := memstore.New()
		coordtest.CancelKept(t, st, st)
	})
	t.Run("files", func(t *testing.T) {
		dir := t.TempDir()
		coordtest.CancelKept(t, filestore.New(dir), filestore.New(dir))
	})
}

// A session whose run died reads interrupted once its lease has expired,
// never running for ever (coordination/pgstore plays it on a database).
func TestADeadRunReadsInterruptedOnceItsLeaseExpires(t *testing.T) {
	t.Run("memory", func(t *testing.T) { coordtest.DeadHolderReadsInterrupted(t, memstore.New()) })
	t.Run("files", func(t *testing.T) { coordtest.DeadHolderReadsInterrupted(t, filestore.New(t.TempDir())) })
}
