package criteria_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/criteria"
)

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidateNamesEveryProblem(t *testing.T) {
	ok := []criteria.Item{short("E1", "must", "a"), short("E2", "should", "b"), short("E3", "could", "c")}
	tests := []struct {
		name   string
		items  []criteria.Item
		lo, hi int
		want   []string // substrings of the error; none means valid
	}{
		{"valid", ok, 3, 3, nil},
		{"too few for an exact count", ok[:2], 3, 3, []string{"2 criteria given; give exactly 3"}},
		{"too many for a range", append(append([]criteria.Item{}, ok...), short("E4", "could", "d")), 1, 3, []string{"4 criteria given; give from 1 to 3"}},
		{"no must", []criteria.Item{short("E1", "should", "a")}, 1, 12, []string{"no criterion is must"}},
		{"two musts", []criteria.Item{short("E1", "must", "a"), short("E2", "must", "b")}, 1, 12, []string{"E1, E2 are all must; keep exactly one must"}},
		{"duplicate id, empty text, unknown category, all at once",
			[]criteria.Item{short("E1", "must", "a"), short("E1", "should", " "), short("E3", "nice", "c")}, 1, 12,
			[]string{"id E1 is used twice", "E1 has no text", `E3's category "nice" is not must, should or could`}},
		{"bad id", []criteria.Item{short("E 1", "must", "a")}, 1, 12, []string{`id "E 1" must be 1 to 40 letters`}},
		{"text too long", []criteria.Item{short("E1", "must", strings.Repeat("x", 1001))}, 1, 12, []string{"E1's text is 1001 characters"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := criteria.Validate(tc.items, tc.lo, tc.hi)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, criteria.ErrInvalid) {
				t.Fatalf("Validate = %v, want ErrInvalid", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestProvidedWithoutMustMakesTheFirstShouldTheMust(t *testing.T) {
	set, err := criteria.Provided([]byte(`[{"text": "nice to have", "category": "could"}, {"text": "core"}, {"text": "also"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if set.Source != criteria.SourceProvided || set.Must().ID != "E2" || set.Items[0].Category != "could" || set.Items[2].Category != "should" {
		t.Errorf("set = %+v", set)
	}
	if !strings.Contains(set.Note, "E2 is the primary focus") {
		t.Errorf("note %q does not say which item became must", set.Note)
	}
	// All could: the first item it is.
	set, err = criteria.Provided([]byte(`[{"text": "a", "category": "could"}, {"text": "b", "category": "stretch"}]`))
	if err != nil || set.Must().ID != "E1" {
		t.Errorf("all-could set = %+v, %v", set, err)
	}
}

func TestProvidedRefusesTwoMustsAndBadCounts(t *testing.T) {
	for name, raw := range map[string]string{
		"two musts":       `[{"text": "a", "category": "must"}, {"text": "b", "category": "primary"}]`,
		"none":            `[]`,
		"thirteen":        `[` + strings.TrimSuffix(strings.Repeat(`{"text": "x"},`, 13), ",") + `]`,
		"no text at all":  `[{"id": "E1", "category": "must"}]`,
		"long aspiration": `{"aspiration": "` + strings.Repeat("a", 301) + `", "criteria": [{"text": "a"}]}`,
	} {
		if _, err := criteria.Provided([]byte(raw)); !errors.Is(err, criteria.ErrInvalid) {
			t.Errorf("%s: Provided = %v, want ErrInvalid", name, err)
		}
	}
}

func TestCountAndKindChecks(t *testing.T) {
	if n, err := criteria.CheckCount(0); n != criteria.DefaultCount || err != nil {
		t.Errorf("CheckCount(0) = %d, %v", n, err)
	}
	for _, n := range []int{2, 9, -1} {
		if _, err := criteria.CheckCount(n); !errors.Is(err, criteria.ErrInvalid) {
			t.Errorf("CheckCount(%d) = %v, want ErrInvalid", n, err)
		}
	}
	if k, err := criteria.CheckKind(" Code "); k != "code" || err != nil {
		t.Errorf("CheckKind(Code) = %q, %v", k, err)
	}
	if _, err := criteria.CheckKind("poetry"); !errors.Is(err, criteria.ErrInvalid) || !strings.Contains(err.Error(), "code, build, writing, analysis, plan, other") {
		t.Errorf("CheckKind(poetry) = %v", err)
	}
}
