package cliagent

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAStoppedRunIsChargedAtLeastWhatStoppedIt: a run stopped mid-run on an
// estimate whose usage file then reported less is charged what stopped it,
// re-priced and marked an estimate; one charged more keeps its charge.
func TestAStoppedRunIsChargedAtLeastWhatStoppedIt(t *testing.T) {
	cost := 0.5
	reported := providers.Usage{Input: 900, Output: 10, CostUSD: &cost}
	got := atLeast(reported, providers.Usage{Input: 800, Output: 40})
	if got.Input != 900 || got.Output != 40 || got.CostUSD != nil || !got.CostEstimated {
		t.Fatalf("charged %+v; want 900 in (reported), 40 out (what stopped it), cost left to the price table, estimated", got)
	}
	if got := atLeast(reported, providers.Usage{Input: 800, Output: 10}); got != reported {
		t.Fatalf("charged %+v; want the report %+v as it was", got, reported)
	}
}
