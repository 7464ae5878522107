package criteria_test

import (
	"strings"
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

func TestATaskThatAsksForCodeIsCodeWhateverItIsAbout(t *testing.T) {
	for task, want := range map[string]string{
		"Write a Python function that formats a blog post's front matter, with tests": criteria.KindCode,
		"Write a Python function that validates an email address, with tests":         criteria.KindCode,
		"Implement a CLI that drafts a newsletter from RSS feeds":                     criteria.KindCode,
		"Write an email to the team about the new release":                            criteria.KindWriting,
		"Write a blog post about why our function names changed":                      criteria.KindWriting,
	} {
		if got := criteria.GuessKind(task); got != want {
			t.Errorf("GuessKind(%q) = %s, want %s", task, got, want)
		}
	}
}

func TestWhatTheTaskDemandsIsInTheMust(t *testing.T) {
	task := "Write a Python function that merges two sorted lists, with tests"
	s := criteria.DefaultsFor(task, criteria.GuessKind(task), 0)
	if s.Kind != criteria.KindCode {
		t.Fatalf("kind %s", s.Kind)
	}
	musts := 0
	for _, it := range s.Items {
		if it.Category == criteria.Must {
			musts++
			if !strings.Contains(it.Text, "tests the task asks for") || !strings.Contains(it.VerifyBy, "(tests)") {
				t.Errorf("the must lacks the demanded tests: %+v", it)
			}
		} else if strings.Contains(it.Text, "tests") {
			t.Errorf("tests are still rated %s: %s", it.Category, it.Text)
		}
	}
	if musts != 1 || len(s.Items) != 4 || s.Items[3].ID != "E4" {
		t.Errorf("items %+v", s.Items)
	}
	if err := criteria.Validate(s.Items, criteria.MinGenerated, criteria.MaxGenerated); err != nil {
		t.Error(err)
	}
	// A task that does not ask for tests keeps them could.
	plain := criteria.DefaultsFor("Write a Python function that merges two sorted lists", criteria.KindCode, 0)
	if last := plain.Items[len(plain.Items)-1]; last.Category != criteria.Could || !strings.Contains(last.Text, "tests") {
		t.Errorf("without a demand: %+v", last)
	}
	for _, task := range []string{"Fix the parser and add unit tests", "Refactor it; include tests", "a tested implementation", "write tests for it"} {
		if ds := criteria.Demands(task); len(ds) != 1 || ds[0].Name != "tests" {
			t.Errorf("Demands(%q) = %+v", task, ds)
		}
	}
	if ds := criteria.Demands("What is the best test of a good essay?"); len(ds) != 0 {
		t.Errorf("no demand: %+v", ds)
	}
}
