package benchmark

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/teamfile"
)

// The example team file that docs and README point to for issue 30's rule
// must select exactly the rules of the bench protocol the tables measured
// (weighted+round+dominant), so that what a user copies is what was chosen.
func TestTheIssue30ExampleSelectsTheMeasuredGuardedVoteRound(t *testing.T) {
	t.Parallel()
	team, err := teamfile.Load(filepath.Join("..", "..", "examples", "weighted-vote-round.yaml"), teamfile.Options{})
	if err != nil {
		t.Fatalf("load the example: %v", err)
	}
	if want := rulesFor(ProtoWeightedDominant); !reflect.DeepEqual(team.Rules, want) {
		t.Fatalf("examples/weighted-vote-round.yaml sets %+v, the bench's %s runs %+v", team.Rules, ProtoWeightedDominant, want)
	}
}
