package coordination_test

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestOldNamesOfTheAliasesStillRead pins the reading of session.json's names
// from before the alias rename, and that new files carry only the new ones.
func TestOldNamesOfTheAliasesStillRead(t *testing.T) {
	var s coordination.Session
	if err := json.Unmarshal([]byte(`{"session_id":"team_x","label_permutation":{"a":2,"b":1},"rules":{"labels":"alphabetical","max_rounds":4}}`), &s); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(s.Aliases, map[string]int{"a": 2, "b": 1}) || s.Rules.Aliases != coordination.AliasesAlphabetical || s.Rules.MaxRounds != 4 || s.ID != "team_x" {
		t.Errorf("old names read as %+v", s)
	}
	var both coordination.Session
	if err := json.Unmarshal([]byte(`{"aliases":{"a":1},"label_permutation":{"a":2},"rules":{"aliases":"random","labels":"alphabetical"}}`), &both); err != nil {
		t.Fatal(err)
	}
	if both.Aliases["a"] != 1 || both.Rules.Aliases != coordination.AliasesRandom {
		t.Errorf("the new names must win over the old: %+v", both)
	}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(out, &keys)
	var rules map[string]json.RawMessage
	_ = json.Unmarshal(keys["rules"], &rules)
	if _, old := keys["label_permutation"]; old || rules["labels"] != nil || keys["aliases"] == nil || rules["aliases"] == nil {
		t.Errorf("written as %s", out)
	}
}
