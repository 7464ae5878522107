package criteria_test

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/criteria"
)

func TestDefaultsForEveryKindAreValidAndMarkedDefault(t *testing.T) {
	for _, kind := range criteria.Kinds() {
		t.Run(kind, func(t *testing.T) {
			set := criteria.Defaults(kind, 0)
			if set.Source != criteria.SourceDefault || set.Kind != kind || set.Aspiration == "" {
				t.Errorf("set = %+v, want source default, kind %s, an aspiration", set, kind)
			}
			if err := criteria.Validate(set.Items, 5, 5); err != nil {
				t.Fatal(err)
			}
			for i, it := range set.Items {
				if it.VerifyBy == "" || len(it.AntiPatterns) == 0 {
					t.Errorf("%s has no verify_by or anti-patterns", it.ID)
				}
				if want := "E" + string(rune('1'+i)); it.ID != want {
					t.Errorf("item %d id %s, want %s", i, it.ID, want)
				}
			}
			// Fewer asked for: the must is kept.
			if small := criteria.Defaults(kind, 3); criteria.Validate(small.Items, 3, 3) != nil {
				t.Errorf("Defaults(%s, 3) = %+v, want 3 valid items", kind, small.Items)
			}
			// More than there are: all five.
			if big := criteria.Defaults(kind, 8); len(big.Items) != 5 {
				t.Errorf("Defaults(%s, 8) has %d items, want 5", kind, len(big.Items))
			}
		})
	}
	if set := criteria.Defaults("poetry", 5); set.Kind != criteria.KindOther {
		t.Errorf("an unknown kind gets %s's defaults, want other", set.Kind)
	}
	// A caller changing its copy leaves the built-ins alone.
	a := criteria.Defaults(criteria.KindCode, 5)
	a.Items[0].AntiPatterns[0] = "changed"
	if b := criteria.Defaults(criteria.KindCode, 5); b.Items[0].AntiPatterns[0] == "changed" {
		t.Error("Defaults shares its anti-patterns with callers")
	}
}

func TestGuessKindFromTheTasksWords(t *testing.T) {
	for task, want := range map[string]string{
		"Write a Go function that parses ISO 8601 durations": criteria.KindCode,
		"Fix the bug in this Python script":                  criteria.KindCode,
		"Write a blog post announcing our new office":        criteria.KindWriting,
		"Plan the migration of the billing database":         criteria.KindPlan,
		"Compare Postgres and MySQL for our analytics data":  criteria.KindAnalysis,
		"What is the capital of Australia?":                  criteria.KindOther,
	} {
		if got := criteria.GuessKind(task); got != want {
			t.Errorf("GuessKind(%q) = %s, want %s", task, got, want)
		}
	}
}
