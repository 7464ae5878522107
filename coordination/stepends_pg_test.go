package coordination_test

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestAStepDrivenStepsCallStopsWhenABudgetStopIsDecidedOnAnotherReplica is
// TestAStepDrivenStepsCallStopsWhenABudgetStopIsDecidedElsewhere on two
// PostgreSQL replicas: the end reaches the step's replica through the
// store's change feed (LISTEN/NOTIFY).
func TestAStepDrivenStepsCallStopsWhenABudgetStopIsDecidedOnAnotherReplica(t *testing.T) {
	dsn := pgtest.Schema(t)
	budgetStopElsewhere(t, pgTenant(t, dsn), pgTenant(t, dsn))
}
