package criteria_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/massgen-go/massgen-mcp/criteria"
)

// short is an item without verify_by and anti-patterns, for tables.
func short(id, cat, text string) criteria.Item {
	return criteria.Item{ID: id, Text: text, Category: cat}
}

func TestParseConvertsEveryShape(t *testing.T) {
	tests := []struct {
		name       string
		raw        string
		want       []criteria.Item
		aspiration string
	}{
		{"ours, ids filled by position",
			`[{"text": "Right", "category": "must", "verify_by": "recompute", "anti_patterns": ["guessing", " "]}, {"id": "X", "text": "Short"}, {"text": "Shows work", "category": "could"}]`,
			[]criteria.Item{{ID: "E1", Text: "Right", Category: "must", VerifyBy: "recompute", AntiPatterns: []string{"guessing"}}, short("X", "should", "Short"), short("E3", "could", "Shows work")}, ""},
		{"MassGen tiers, any case",
			`[{"text": "a", "category": "primary"}, {"text": "b", "category": "Standard"}, {"text": "c", "category": "STRETCH"}]`,
			[]criteria.Item{short("E1", "must", "a"), short("E2", "should", "b"), short("E3", "could", "c")}, ""},
		{"MassGen's --eval-criteria file with an aspiration",
			`{"aspiration": "A site a designer\nwould screenshot", "criteria": [{"text": "Design coherence", "category": "primary", "score_anchors": {"3": "poor"}}]}`,
			[]criteria.Item{short("E1", "must", "Design coherence")}, "A site a designer would screenshot"},
		{"weighted: description is the text, highest weight must, ≥0.4 should, else could",
			`[{"id": 1, "name": "Correctness", "description": "Gets the right answer", "weight": 0.5}, {"id": 2, "name": "Speed", "description": "Runs fast", "weight": 0.2}, {"id": 3, "name": "Clarity", "description": "Reads well", "weight": 0.4}]`,
			[]criteria.Item{short("1", "must", "Gets the right answer"), short("2", "could", "Runs fast"), short("3", "should", "Reads well")}, ""},
		{"weighted on a 1-10 scale is read relative to the highest",
			`[{"name": "a", "weight": 3}, {"name": "b", "weight": 9}, {"name": "c", "weight": 5}]`,
			[]criteria.Item{short("E1", "could", "a"), short("E2", "must", "b"), short("E3", "should", "c")}, ""},
		{"weighted ties: the first highest is must",
			`[{"name": "a", "weight": 0.5}, {"name": "b", "weight": 0.5}]`,
			[]criteria.Item{short("E1", "must", "a"), short("E2", "should", "b")}, ""},
		{"an explicit must wins over weights",
			`[{"name": "a", "weight": 0.9}, {"text": "b", "category": "must"}]`,
			[]criteria.Item{short("E1", "should", "a"), short("E2", "must", "b")}, ""},
		{"text falls back to description, then name; one anti-pattern may be bare",
			`[{"name": "Named"}, {"name": "N", "description": "Described", "anti_patterns": "waffle"}]`,
			[]criteria.Item{short("E1", "should", "Named"), {ID: "E2", Text: "Described", Category: "should", AntiPatterns: []string{"waffle"}}}, ""},
		{"an unknown category is kept for Validate to name",
			`[{"text": "a", "category": "Important"}]`,
			[]criteria.Item{short("E1", "important", "a")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, aspiration, err := criteria.Parse([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("items\n got %+v\nwant %+v", got, tc.want)
			}
			if aspiration != tc.aspiration {
				t.Errorf("aspiration %q, want %q", aspiration, tc.aspiration)
			}
		})
	}
}

func TestParseRefusesWhatIsNotCriteria(t *testing.T) {
	for _, raw := range []string{
		`"just text"`,
		`{"items": []}`,
		`[1, 2]`,
		`[{"text": 5}]`,
		`[{"text": "a", "anti_patterns": [1]}]`,
	} {
		if _, _, err := criteria.Parse([]byte(raw)); !errors.Is(err, criteria.ErrInvalid) {
			t.Errorf("Parse(%s) = %v, want ErrInvalid", raw, err)
		}
	}
	if items, _, err := criteria.Parse([]byte(" null ")); err != nil || items != nil {
		t.Errorf("Parse(null) = %v, %v; want nothing", items, err)
	}
}

func TestMassGenRenderingUsesTiersAndParsesBack(t *testing.T) {
	items := []criteria.Item{
		{ID: "E1", Text: "a", Category: "must", VerifyBy: "run it", AntiPatterns: []string{"x"}},
		short("E2", "should", "b"),
		short("E3", "could", "c"),
	}
	f := criteria.MassGen(items, "Great")
	var tiers []string
	for _, c := range f.Criteria {
		tiers = append(tiers, c.Category)
	}
	if !reflect.DeepEqual(tiers, []string{"primary", "standard", "stretch"}) || f.Aspiration != "Great" {
		t.Fatalf("MassGen = %+v", f)
	}
	raw := mustMarshal(t, f)
	back, aspiration, err := criteria.Parse(raw)
	if err != nil || !reflect.DeepEqual(back, items) || aspiration != "Great" {
		t.Errorf("round trip = %+v %q %v, want %+v", back, aspiration, err, items)
	}
}
