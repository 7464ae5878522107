package coordination

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// everyRuleSet is a Rules with every field set to a value unlike the
// defaults, found by reflection so that a rule added later is covered too.
func everyRuleSet(t *testing.T) Rules {
	t.Helper()
	var r Rules
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.Float64:
			f.SetFloat(7)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Pointer:
			p := reflect.New(f.Type().Elem())
			switch p.Elem().Kind() {
			case reflect.Bool:
				p.Elem().SetBool(false)
			case reflect.Float64:
				p.Elem().SetFloat(7)
			case reflect.Int64:
				p.Elem().SetInt(7)
			default:
				t.Fatalf("rule %s: no test value for a pointer to %s", v.Type().Field(i).Name, p.Elem().Kind())
			}
			f.Set(p)
		case reflect.Slice:
			if f.Type() != reflect.TypeFor[[]VoteWeight]() {
				t.Fatalf("rule %s: no test value for a slice of %s", v.Type().Field(i).Name, f.Type().Elem())
			}
			f.Set(reflect.ValueOf([]VoteWeight{{Agent: "x", Weight: 7}}))
		default:
			t.Fatalf("rule %s: no test value for a %s", v.Type().Field(i).Name, f.Kind())
		}
	}
	return r
}

// TestOverTakesEverySetRuleAndKeepsTheRest: the one overlay, used by MCP's
// team files and the CLI's --config, lets every rule a request sets win and
// leaves every rule it does not set to the base.
func TestOverTakesEverySetRuleAndKeepsTheRest(t *testing.T) {
	set, base := everyRuleSet(t), DefaultRules()
	if got := set.Over(base); !reflect.DeepEqual(got, set) {
		t.Errorf("every rule set, over the defaults:\n got %+v\nwant %+v", got, set)
	}
	if got := (Rules{}).Over(base); !reflect.DeepEqual(got, base) {
		t.Errorf("no rule set, over the defaults:\n got %+v\nwant %+v", got, base)
	}
	// One field at a time: only that one comes from the request.
	sv, bv := reflect.ValueOf(set), reflect.ValueOf(base)
	for i := range sv.NumField() {
		var one Rules
		reflect.ValueOf(&one).Elem().Field(i).Set(sv.Field(i))
		got := reflect.ValueOf(one.Over(base))
		for j := range got.NumField() {
			want := bv.Field(j)
			if j == i {
				want = sv.Field(i)
			}
			if !reflect.DeepEqual(got.Field(j).Interface(), want.Interface()) {
				t.Errorf("setting only %s: %s = %v, want %v", sv.Type().Field(i).Name, sv.Type().Field(j).Name, got.Field(j), want)
			}
		}
	}
}

// TestValidateChecksOnlyTheRulesGiven: a zero rule is the default and
// passes; a rule that is set is held to its range; and early_stop without
// answer_format passes, since the team file under it may say short.
func TestValidateChecksOnlyTheRulesGiven(t *testing.T) {
	neg := -1.0
	for _, c := range []struct {
		name  string
		rules Rules
		want  string // "" for no error
	}{
		{"nothing set", Rules{}, ""},
		{"early_stop alone", Rules{EarlyStop: true}, ""},
		{"early_stop with short", Rules{EarlyStop: true, AnswerFormat: FormatShort}, ""},
		{"early_stop with free", Rules{EarlyStop: true, AnswerFormat: FormatFree}, "early_stop needs answer_format short"},
		{"negative max_rounds", Rules{MaxRounds: -1}, "max_rounds -1 must be between 1 and 100"},
		{"negative max_answers_per_agent", Rules{MaxAnswersPerAgent: -2}, "max_answers_per_agent -2 must be between 1 and 100"},
		{"negative timeout", Rules{TimeoutSeconds: -5}, "timeout_seconds -5 must be above 0"},
		{"negative budget", Rules{CostBudgetUSD: &neg}, "cost_budget_usd -1 must be above 0"},
		{"unknown consensus", Rules{Consensus: "most"}, `consensus "most" is not one of majority, plurality, unanimous`},
		{"two at once", Rules{MaxRounds: 101, Final: "best"}, `max_rounds 101 must be between 1 and 100; final "best" is not one of winner, present, synthesize`},
	} {
		err := c.rules.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", c.name, err)
		case c.want != "" && (!errors.Is(err, ErrBadSettings) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want ErrBadSettings saying %q", c.name, err, c.want)
		}
	}
	// Once the defaults are in, early_stop alone is refused (Normalize).
	if _, err := (Rules{EarlyStop: true}).Normalize(); err == nil || !strings.Contains(err.Error(), "early_stop needs answer_format short") {
		t.Errorf("Normalize of early_stop alone = %v, want the answer_format refusal", err)
	}
}
