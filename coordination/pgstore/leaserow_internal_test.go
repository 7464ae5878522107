package pgstore

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestLeaseRowLenCountsItsArguments: the lease change's arguments are
// made at their length (leaseRowLen) before appendLeaseRow fills them; a
// column added to one and not the other would grow them again.
func TestLeaseRowLenCountsItsArguments(t *testing.T) {
	if n := len(appendLeaseRow(nil, coordination.RunLease{})); n != leaseRowLen {
		t.Fatalf("appendLeaseRow appends %d arguments, leaseRowLen says %d", n, leaseRowLen)
	}
}
