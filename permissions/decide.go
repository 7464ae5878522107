package permissions

import "fmt"

// Verdict is what the rules say of an action.
type Verdict string

// The verdicts, from the most permissive to the strictest.
const (
	Allow Verdict = "allow"
	Ask   Verdict = "ask"
	Deny  Verdict = "deny"
)

func (v Verdict) rank() int {
	switch v {
	case Allow:
		return 0
	case Ask:
		return 1
	}
	return 2
}

// Decision is the verdict on what an agent is about to do, and why.
type Decision struct {
	// Action is the action that decided: of several (a command line's), the
	// one with the strictest verdict.
	Action  Action  `json:"action"`
	Risk    Risk    `json:"risk"`
	Verdict Verdict `json:"verdict"`
	// Rule says what decided: "floor: a fork bomb", "deny exec(git push*)",
	// "allow exec(go test *)", "always_ask net(*)", "role workspace".
	Rule string `json:"rule"`
	// Floor is set when the floor decided; no approval can lift it.
	Floor bool `json:"floor,omitempty"`
}

// Decide is the one decision: of the actions one call would take (ForTool,
// ForCommand), the strictest verdict under the rules. The floor first (no
// rule lifts it), then a matching deny, then the most specific matching
// allow or ask (a tie asks), then the role; AlwaysAsk turns an allow into
// an ask. An empty list of actions is allowed.
func Decide(rules Rules, actions ...Action) Decision {
	var worst Decision
	for i, a := range actions {
		d := decideOne(rules, a)
		if i == 0 || d.Verdict.rank() > worst.Verdict.rank() || (d.Floor && !worst.Floor) {
			worst = d
		}
		if d.Floor {
			return d
		}
	}
	if len(actions) == 0 {
		return Decision{Verdict: Allow, Risk: RiskRead, Rule: "no action"}
	}
	return worst
}

func decideOne(rules Rules, a Action) Decision {
	name, hit := Floor(a) // once: a command's floor reads its whole line
	d := Decision{Action: a, Risk: riskOf(a, hit)}
	if hit {
		d.Verdict, d.Rule, d.Floor = Deny, "floor: "+name, true
		return d
	}
	if p, ok := match(rules.Deny, a); ok {
		d.Verdict, d.Rule = Deny, "deny "+p.String()
		return d
	}
	best, bestSpec, bestVerdict := Pattern{}, -1, Verdict("")
	for _, set := range []struct {
		v    Verdict
		pats []string
	}{{Ask, rules.Ask}, {Allow, rules.Allow}} {
		for _, s := range set.pats {
			p, err := ParsePattern(s)
			if err != nil || !p.Matches(a) {
				continue
			}
			if sp := p.specificity(); sp > bestSpec { // asks come first, so a tie asks
				best, bestSpec, bestVerdict = p, sp, set.v
			}
		}
	}
	if bestSpec >= 0 {
		d.Verdict, d.Rule = bestVerdict, string(bestVerdict)+" "+best.String()
	} else {
		d.Verdict, d.Rule = rules.Role.Or().verdictAt(a, d.Risk), "role "+string(rules.Role.Or())
	}
	if d.Verdict == Allow {
		if p, ok := match(rules.AlwaysAsk, a); ok {
			d.Verdict, d.Rule = Ask, "always_ask "+p.String()
		}
	}
	return d
}

func match(pats []string, a Action) (Pattern, bool) {
	for _, s := range pats {
		if p, err := ParsePattern(s); err == nil && p.Matches(a) {
			return p, true
		}
	}
	return Pattern{}, false
}

// Refusal is the sentence an agent reads when its call is not run.
func (d Decision) Refusal(why string) string {
	if d.Floor {
		return fmt.Sprintf("Not run: %s is never allowed (%s). Do the task another way.", d.Action, d.Rule)
	}
	return fmt.Sprintf("Not run: %s was refused (%s%s). Do the task another way or without it.", d.Action, d.Rule, why)
}
