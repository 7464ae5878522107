package criteria_test

import (
	"fmt"

	"github.com/massgen-go/massgen-mcp/criteria"
)

// Weighted criteria, as many evaluation tools write them, become must,
// should and could; MassGen gets its own tiers back.
func ExampleProvided() {
	set, err := criteria.Provided([]byte(`[
		{"id": "correct", "name": "Correctness", "description": "Every figure is right", "weight": 0.5},
		{"id": "clear", "name": "Clarity", "description": "The result comes first", "weight": 0.4},
		{"id": "brief", "name": "Brevity", "description": "Nothing is padding", "weight": 0.1}]`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, it := range set.Items {
		fmt.Printf("%s %s (%s): %s\n", it.ID, it.Category, criteria.MassGen(set.Items, "").Criteria[i].Category, it.Text)
	}
	// Output:
	// correct must (primary): Every figure is right
	// clear should (standard): The result comes first
	// brief could (stretch): Nothing is padding
}
