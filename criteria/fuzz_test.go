package criteria_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/massgen-go/massgen-mcp/criteria"
)

// FuzzParse: any bytes either fail with ErrInvalid or yield criteria; those
// that Validate accepts survive a round trip through MassGen's file shape
// with the same items.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`[{"text": "Correct", "category": "must"}, {"text": "Clear"}]`,
		`{"criteria": [{"id": "E1", "text": "Tests pass", "category": "primary", "verify_by": "go test"}], "aspiration": "ship it"}`,
		`[{"id": 3, "name": "speed", "description": "fast", "weight": 0.9}, {"name": "size", "weight": 0.2}]`,
		`[{"text": "x", "anti_patterns": ["", " y "]}]`,
		`null`, `{}`, `[1]`, `{"criteria": null}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		items, _, err := criteria.Parse(raw)
		if err != nil {
			if !errors.Is(err, criteria.ErrInvalid) {
				t.Fatalf("Parse error is not ErrInvalid: %v", err)
			}
			return
		}
		if criteria.Validate(items, 1, 12) != nil {
			return
		}
		data, err := json.Marshal(criteria.MassGen(items, ""))
		if err != nil {
			t.Fatalf("parsed criteria do not encode: %v", err)
		}
		again, _, err := criteria.Parse(data)
		if err != nil || len(again) != len(items) {
			t.Fatalf("round trip of %d items gave %d, %v\n%s", len(items), len(again), err, data)
		}
		for i := range items {
			if again[i].Text != items[i].Text || again[i].Category != items[i].Category {
				t.Fatalf("item %d changed in the round trip: %+v → %+v", i, items[i], again[i])
			}
		}
	})
}
