package coordination_test

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestCriteriaSpendIsTheSessionsOnPostgreSQL is criteriaSpendOn over the
// PostgreSQL store: the spend is a session usage entry there too.
func TestCriteriaSpendIsTheSessionsOnPostgreSQL(t *testing.T) {
	criteriaSpendOn(t, pgTenant(t, pgtest.Schema(t)))
}
