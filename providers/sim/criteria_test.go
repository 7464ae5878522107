package sim

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

func TestSimAnswersACriteriaRequestThroughTheOfferedTool(t *testing.T) {
	p := mustSim(t, "sim/weak")
	req := providers.Request{
		Purpose: providers.PurposeCriteria,
		Task:    "Plan the office move",
		Tools: []providers.Tool{{Name: "submit_criteria",
			Schema: json.RawMessage(`{"type": "object", "properties": {"criteria": {"type": "array", "minItems": 4, "maxItems": 4}}}`)}},
	}
	act := step(t, p, req)
	if again := step(t, p, req); !reflect.DeepEqual(act, again) {
		t.Error("the same criteria request gave two replies")
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != "submit_criteria" {
		t.Fatalf("calls = %+v, want one submit_criteria", act.Calls)
	}
	var args struct {
		Criteria []struct {
			ID, Text, Category, VerifyBy string
		} `json:"criteria"`
		Aspiration string `json:"aspiration"`
	}
	if err := json.Unmarshal(act.Calls[0].Args, &args); err != nil {
		t.Fatal(err)
	}
	musts := 0
	for _, c := range args.Criteria {
		if c.Category == "must" {
			musts++
		}
	}
	if len(args.Criteria) != 4 || musts != 1 || args.Criteria[3].ID != "E4" || args.Aspiration == "" {
		t.Errorf("criteria = %+v", args)
	}
}
