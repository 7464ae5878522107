package criteria

import (
	"regexp"
	"strings"
)

// Demand is something a task asks for in so many words ("with tests"): not
// a nicety to rate could, but part of what the answer must deliver.
type Demand struct {
	Name string // tests, type hints, …
	Text string // what the answer does to meet it
	// topic finds a criterion that already covers it.
	topic *regexp.Regexp
}

// demandPatterns are the explicit demands recognised in a task.
var demandPatterns = []struct {
	ask *regexp.Regexp
	Demand
}{
	{regexp.MustCompile(`\b(with|include|including|add|plus|and|write|has|have)\s+(unit\s+|automated\s+|some\s+|its\s+|the\s+)?tests?\b|\btested\b|\btest (suite|cases?)\b`),
		Demand{Name: "tests", Text: "comes with the tests the task asks for, and they would fail if the behaviour broke", topic: regexp.MustCompile(`(?i)\btests?\b`)}},
	{regexp.MustCompile(`\b(with|include|including|add|plus)\s+(type\s+hints|type\s+annotations|types)\b`),
		Demand{Name: "type hints", Text: "has the type hints the task asks for", topic: regexp.MustCompile(`(?i)\btype (hints|annotations)\b`)}},
	{regexp.MustCompile(`\b(with|include|including|add|plus)\s+(docstrings?|documentation|docs|comments)\b`),
		Demand{Name: "documentation", Text: "has the documentation the task asks for", topic: regexp.MustCompile(`(?i)\b(docstrings?|documentation|comments)\b`)}},
	{regexp.MustCompile(`\b(with|include|including|add|plus)\s+(an?\s+)?(examples?|usage examples?)\b`),
		Demand{Name: "examples", Text: "includes the examples the task asks for", topic: regexp.MustCompile(`(?i)\bexamples?\b`)}},
	{regexp.MustCompile(`\b(with|include|including|add|plus)\s+(a\s+)?benchmarks?\b`),
		Demand{Name: "benchmarks", Text: "includes the benchmark the task asks for", topic: regexp.MustCompile(`(?i)\bbenchmarks?\b`)}},
}

// Demands lists what a task demands explicitly, in a fixed order.
func Demands(task string) []Demand {
	t := strings.ToLower(task)
	var out []Demand
	for _, p := range demandPatterns {
		if p.ask.MatchString(t) {
			out = append(out, p.Demand)
		}
	}
	return out
}

// withDemands makes what a task demands part of its must: the must's text
// says so (unless it already does), and a lesser item on the same topic is
// dropped when drop is set, so a demand is never rated could. Exactly one
// must remains.
func withDemands(items []Item, demands []Demand, drop bool) []Item {
	if len(demands) == 0 {
		return items
	}
	mi := -1
	for i, it := range items {
		if it.Category == Must {
			mi = i
		}
	}
	if mi < 0 {
		return items
	}
	must := items[mi]
	var add, names []string
	for _, d := range demands {
		if !d.topic.MatchString(quoted.ReplaceAllString(must.Text, "")) {
			add, names = append(add, d.Text), append(names, d.Name)
		}
	}
	if len(add) > 0 {
		must.Text = strings.TrimRight(must.Text, ". ") + ". As the task asks, it also " + strings.Join(add, ", and ") + "."
		must.VerifyBy = strings.TrimLeft(strings.TrimRight(must.VerifyBy, ". ")+"; then check what the task asks for in so many words ("+strings.Join(names, ", ")+") is there and works.", "; ")
	}
	out := make([]Item, 0, len(items))
	for i, it := range items {
		if i == mi {
			out = append(out, must)
			continue
		}
		if drop && covers(it, demands) {
			continue
		}
		out = append(out, it)
	}
	return out
}

// quoted finds quotations, such as the task repeated in a criterion, which
// say nothing of what the criterion itself asks.
var quoted = regexp.MustCompile(`"[^"]*"|“[^”]*”`)

func covers(it Item, demands []Demand) bool {
	for _, d := range demands {
		if d.topic.MatchString(quoted.ReplaceAllString(it.Text, "")) {
			return true
		}
	}
	return false
}
