package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/finalvalue"
)

func mustSim(t testing.TB, spec string, opts ...Option) providers.Provider {
	t.Helper()
	sp, err := providers.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(sp, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func tools(answer, vote bool) []providers.Tool {
	var ts []providers.Tool
	if answer {
		ts = append(ts, providers.Tool{Name: providers.ToolNewAnswer})
	}
	if vote {
		ts = append(ts, providers.Tool{Name: providers.ToolVote})
	}
	return ts
}

// blind is an agent's first step: the task and only new_answer.
func blind(task, agent string, seed int64) providers.Request {
	return providers.Request{Purpose: providers.PurposeStep, Task: task, Tools: tools(true, false),
		SessionSeed: seed, AgentID: agent, Self: "agent1", StepNumber: 1}
}

// later is a step that shows answers (agent name → content) and offers both
// tools; self is the acting agent's anonymous name.
func later(task, agent, self string, seed int64, step int, shown ...string) providers.Request {
	req := providers.Request{Purpose: providers.PurposeStep, Task: task, Tools: tools(true, true),
		SessionSeed: seed, AgentID: agent, Self: self, StepNumber: step}
	for i := 0; i+1 < len(shown); i += 2 {
		req.Shown = append(req.Shown, providers.ShownAnswer{Alias: shown[i], Label: shown[i] + ".1", Content: shown[i+1]})
		req.VoteEnum = append(req.VoteEnum, shown[i])
	}
	return req
}

func step(t testing.TB, p providers.Provider, req providers.Request) providers.Action {
	t.Helper()
	act, _, err := p.Step(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return act
}

// call decodes the action's single call.
func call(t testing.TB, act providers.Action) (name string, args map[string]string) {
	t.Helper()
	if len(act.Calls) != 1 {
		t.Fatalf("action has %d calls, want exactly one: %+v", len(act.Calls), act)
	}
	if err := json.Unmarshal(act.Calls[0].Args, &args); err != nil {
		t.Fatal(err)
	}
	return act.Calls[0].Name, args
}

func answerOf(t testing.TB, act providers.Action) string {
	t.Helper()
	name, args := call(t, act)
	if name != providers.ToolNewAnswer {
		t.Fatalf("got %s %v, want new_answer", name, args)
	}
	return args["content"]
}

func voteOf(t testing.TB, act providers.Action) string {
	t.Helper()
	name, args := call(t, act)
	if name != providers.ToolVote {
		t.Fatalf("got %s %v, want vote", name, args)
	}
	return args["agent_id"]
}

const task = "What is 17 * 23?"

func TestSameViewGivesSameAction(t *testing.T) {
	p := mustSim(t, "sim")
	reqs := []providers.Request{
		blind(task, "agent_a", 7),
		later(task, "agent_b", "agent2", 7, 2, "agent1", "17 * 23 = 391.\nAnswer: 391", "agent2", "I get 381.\nAnswer: 381"),
		later("Write a limerick.", "agent_c", "agent1", 7, 3, "agent1", "[simulated] draft 1 by agent_c", "agent2", "[simulated] draft 1 by agent_a"),
	}
	for _, req := range reqs {
		first := step(t, p, req)
		for range 5 {
			if again := step(t, mustSim(t, "sim"), req); !reflect.DeepEqual(again, first) {
				t.Fatalf("same request, different actions:\n%+v\n%+v", first, again)
			}
		}
	}
}

func TestStepSeedAndSpecSeedChangeDecisions(t *testing.T) {
	p := mustSim(t, "sim:revise=0.5")
	base := later(task, "agent_b", "agent2", 1, 2, "agent1", "17 * 23 = 391.\nAnswer: 391", "agent2", "I get 381.\nAnswer: 381")
	distinct := map[string]bool{}
	for s := range 40 {
		req := base
		req.StepNumber = 2 + s
		distinct[fmt.Sprint(step(t, p, req))] = true
	}
	if len(distinct) < 2 {
		t.Error("40 different step numbers gave one action")
	}
	// The spec seed redraws first answers.
	a, b := mustSim(t, "sim:seed=1"), mustSim(t, "sim:seed=2")
	differ := false
	for s := range int64(40) {
		if answerOf(t, step(t, a, blind(task, "agent_a", s))) != answerOf(t, step(t, b, blind(task, "agent_a", s))) {
			differ = true
		}
	}
	if !differ {
		t.Error("spec seeds 1 and 2 gave the same 40 first answers")
	}
}

func TestFirstAnswerAccuracyMatchesProfile(t *testing.T) {
	tasks := []string{task, "What is the capital of Australia?", "Compute (12+7)*3", "When did the Titanic sink?"}
	for _, tt := range []struct {
		spec string
		want float64
	}{{"sim/strong", 0.9}, {"sim", 0.75}, {"sim/weak", 0.55}, {"sim:accuracy=0.3", 0.3}, {"sim/strong:accuracy=1", 1}} {
		t.Run(tt.spec, func(t *testing.T) {
			p := mustSim(t, tt.spec)
			right, n := 0, 2000
			for i := range n {
				q := tasks[i%len(tasks)]
				truth, _ := Truth(q)
				content := answerOf(t, step(t, p, blind(q, "agent_a", int64(i))))
				if finalvalue.Of(content) == truth {
					right++
				}
			}
			if got := float64(right) / float64(n); math.Abs(got-tt.want) > 0.05 {
				t.Errorf("accuracy %.3f over %d trials, want %.2f ± 0.05", got, n, tt.want)
			}
		})
	}
}

func TestBlindAnswerIsAWorkedLineEndingInAnswer(t *testing.T) {
	p := mustSim(t, "sim/strong:accuracy=1")
	content := answerOf(t, step(t, p, blind(task, "agent_a", 1)))
	if !strings.HasSuffix(content, "\nAnswer: 391") || !strings.Contains(content, "17 * 23") {
		t.Errorf("first answer %q, want a worked line about 17 * 23 ending in Answer: 391", content)
	}
	// The same agent asked blind again (a retried first step) keeps its value.
	for s := 2; s < 6; s++ {
		req := blind(task, "agent_a", 1)
		req.StepNumber = s
		if v := finalvalue.Of(answerOf(t, step(t, p, req))); v != "391" {
			t.Errorf("step %d: value %q", s, v)
		}
	}
}

func TestNothingShownMeansFirstAnswerEvenIfVoteOffered(t *testing.T) {
	p := mustSim(t, "sim")
	req := blind(task, "agent_a", 3)
	req.Tools = tools(true, true)
	answerOf(t, step(t, p, req))
}

func TestAgreeingSimsVoteForLowestAliasNumber(t *testing.T) {
	p := mustSim(t, "sim:conformity=0:revise=0")
	shown := []string{
		"agent3", "Computing 17 * 23 gives 391.\nAnswer: 391",
		"agent1", "I get 381 for 17 * 23.\nAnswer: 381",
		"agent4", "17 * 23 = 391.\nAnswer: 391",
		"agent2", "Step by step, 17 * 23 evaluates to 391.\nAnswer: 391",
	}
	// Every holder of 391 votes agent2, whichever it is and whatever order
	// it sees; the holder of 381 votes for itself.
	for _, self := range []string{"agent2", "agent3", "agent4"} {
		for seed := range int64(20) {
			if got := voteOf(t, step(t, p, later(task, "x_"+self, self, seed, 2, shown...))); got != "agent2" {
				t.Fatalf("%s voted %s, want agent2", self, got)
			}
		}
	}
	if got := voteOf(t, step(t, p, later(task, "x", "agent1", 1, 2, shown...))); got != "agent1" {
		t.Errorf("the holder of 381 voted %s, want itself", got)
	}
}

func TestAgentTenSortsAfterAgentTwo(t *testing.T) {
	p := mustSim(t, "sim:conformity=0:revise=0")
	got := voteOf(t, step(t, p, later(task, "x", "agent10", 1, 2,
		"agent10", "17 * 23 = 391.\nAnswer: 391", "agent2", "I get 391 for 17 * 23.\nAnswer: 391")))
	if got != "agent2" {
		t.Errorf("voted %s, want agent2 (2 < 10)", got)
	}
}

// adoptionRate is how often an agent holding own moves to the peers' value.
func adoptionRate(t *testing.T, spec, own, peer string) float64 {
	p := mustSim(t, spec)
	moved, n := 0, 3000
	for seed := range int64(n) {
		act := step(t, p, later(task, "agent_c", "agent3", seed, 2,
			"agent1", "I get "+peer+" for 17 * 23.\nAnswer: "+peer,
			"agent2", "Computing 17 * 23 gives "+peer+".\nAnswer: "+peer,
			"agent3", "17 * 23 = "+own+".\nAnswer: "+own))
		name, args := call(t, act)
		value := ""
		if name == providers.ToolVote {
			for _, a := range []string{"agent1", "agent2"} {
				if args["agent_id"] == a {
					value = peer
				}
			}
		} else {
			value = finalvalue.Of(args["content"])
		}
		if value == peer {
			moved++
		}
	}
	return float64(moved) / float64(n)
}

func TestConformityIsTruthBiased(t *testing.T) {
	// Both peers hold the value: p = 0.3 · 1.5 · 2^±1 → 0.9 toward the truth,
	// 0.225 away from it.
	toTruth := adoptionRate(t, "sim", "381", "391")
	awayFromTruth := adoptionRate(t, "sim", "391", "381")
	if math.Abs(toTruth-0.9) > 0.04 || math.Abs(awayFromTruth-0.225) > 0.04 {
		t.Errorf("adoption toward the truth %.3f (want 0.9), away %.3f (want 0.225)", toTruth, awayFromTruth)
	}
	if r := adoptionRate(t, "sim:conformity=0", "381", "391"); r != 0 {
		t.Errorf("conformity 0 still adopted %.3f of the time", r)
	}
	if r := adoptionRate(t, "sim:conformity=0.2:truth_bias=1", "391", "381"); math.Abs(r-0.3) > 0.04 {
		t.Errorf("truth_bias 1 adopted a wrong value %.3f of the time, want 0.3", r)
	}
}

func TestOnlyVoteOfferedAlwaysVotes(t *testing.T) {
	for _, tk := range []string{task, "Write a limerick about Go."} {
		p := mustSim(t, "sim:revise=1:conformity=1")
		for seed := range int64(50) {
			req := later(tk, "agent_a", "agent1", seed, 4, "agent1", "17 * 23 = 391.\nAnswer: 391", "agent2", "I get 381.\nAnswer: 381")
			req.Tools = tools(false, true)
			req.Revote = seed%2 == 0
			voteOf(t, step(t, p, req))
		}
	}
}

func TestRevisionIsNeverADuplicateOfAShownAnswer(t *testing.T) {
	p := mustSim(t, "sim:revise=1:conformity=0")
	shown := []string{"agent1", "", "agent2", ""}
	it, _ := lookupBank(task)
	// Every wording of 391 is already shown except none: the sim must still
	// find a text no one was shown.
	texts := answerTexts(it, "391", newKey("x").rand("y"))
	for seed := range int64(30) {
		req := later(task, "agent_a", "agent1", seed, 2, shown...)
		req.Shown[0].Content = texts[0]
		req.Shown[1].Content = texts[1]
		for _, t2 := range texts[2:] {
			req.Shown = append(req.Shown, providers.ShownAnswer{Alias: "agent3", Label: "agent3.1", Content: t2})
		}
		content := answerOf(t, step(t, p, req))
		for _, s := range req.Shown {
			if normText(s.Content) == normText(content) {
				t.Fatalf("revision %q duplicates %s", content, s.Alias)
			}
		}
		if finalvalue.Of(content) != "391" {
			t.Fatalf("revision changed the value: %q", content)
		}
	}
}

func TestAdoptingAgentVotesForOrRewritesThePeerValue(t *testing.T) {
	p := mustSim(t, "sim:conformity=1:revise=0")
	votes, rewrites := 0, 0
	for seed := range int64(400) {
		act := step(t, p, later(task, "agent_a", "agent2", seed, 2,
			"agent1", "17 * 23 = 391.\nAnswer: 391", "agent2", "I get 381 for 17 * 23.\nAnswer: 381"))
		name, args := call(t, act)
		switch {
		case name == providers.ToolVote && args["agent_id"] == "agent1":
			votes++
		case name == providers.ToolNewAnswer && finalvalue.Of(args["content"]) == "391":
			rewrites++
		default:
			t.Fatalf("did not follow the adopted value: %s %v", name, args)
		}
	}
	if votes < 140 || rewrites < 140 {
		t.Errorf("adopted value: %d votes, %d rewrites; want about half each", votes, rewrites)
	}
}

func TestSyntheticDraftsAndBiasedVotes(t *testing.T) {
	const poem = "Write a limerick about a gopher."
	p := mustSim(t, "sim")
	draft := answerOf(t, step(t, p, blind(poem, "agent_b", 1)))
	if !strings.HasPrefix(draft, "[simulated] draft 1 by agent_b:") || !strings.Contains(draft, "limerick") {
		t.Errorf("draft %q", draft)
	}
	req := blind(poem, "agent_b", 1)
	req.StepNumber = 4
	if d4 := answerOf(t, step(t, p, req)); d4 == draft || !strings.Contains(d4, "draft 4") {
		t.Errorf("a later draft should differ and carry its step: %q", d4)
	}

	shown := []string{"agent1", "[simulated] draft 1 by agent_a", "agent2", "[simulated] draft 1 by agent_c", "agent3", "[simulated] draft 1 by agent_b"}
	self := mustSim(t, "sim:self_bias=5:revise=0")
	first := mustSim(t, "sim:position_bias=5:revise=0")
	neutral := mustSim(t, "sim:revise=0")
	counts := map[string]int{}
	for seed := range int64(300) {
		if got := voteOf(t, step(t, self, later(poem, "agent_b", "agent3", seed, 2, shown...))); got != "agent3" {
			t.Fatalf("self_bias 5 voted %s, want its own agent3", got)
		}
		req := later(poem, "agent_b", "agent3", seed, 2, shown...)
		req.Shown = append(req.Shown[1:], req.Shown[0]) // agent2 is shown first
		if got := voteOf(t, step(t, first, req)); got != "agent2" {
			t.Fatalf("position_bias 5 voted %s, want the first shown (agent2)", got)
		}
		counts[voteOf(t, step(t, neutral, later(poem, "agent_b", "agent3", seed, 2, shown...)))]++
	}
	if len(counts) < 2 {
		t.Errorf("neutral votes never vary: %v", counts)
	}
	revising := mustSim(t, "sim:revise=1")
	content := answerOf(t, step(t, revising, later(poem, "agent_b", "agent3", 1, 5, shown...)))
	if !strings.Contains(content, "draft 5 by agent_b") || !strings.Contains(content, "revised") {
		t.Errorf("revision %q", content)
	}
}

func TestFeedbackLeadsToAValidAction(t *testing.T) {
	p := mustSim(t, "sim:revise=1:conformity=0")
	shown := []string{"agent1", "17 * 23 = 391.\nAnswer: 391", "agent2", "I get 391 for 17 * 23.\nAnswer: 391"}

	t.Run("duplicate answer votes for the named agent", func(t *testing.T) {
		req := later(task, "agent_c", "agent3", 1, 2, shown...)
		req.Attempt = 1
		req.History = []providers.Turn{{Reply: providers.Action{Calls: []providers.ToolCall{providers.NewAnswerCall(shown[3])}},
			Problem: "That is already agent2's answer — vote for it."}}
		if got := voteOf(t, step(t, p, req)); got != "agent2" {
			t.Errorf("voted %s, want agent2", got)
		}
	})
	t.Run("invalid vote target picks a name in the enum", func(t *testing.T) {
		req := later(task, "agent_c", "agent3", 1, 2, shown...)
		req.Tools = tools(false, true)
		req.VoteEnum = []string{"agent2"}
		req.Attempt = 1
		req.History = []providers.Turn{{Reply: providers.Action{Calls: []providers.ToolCall{providers.VoteCall("agent7", "")}},
			Problem: "agent7 is not an agent with an answer; vote for one of: agent2."}}
		if got := voteOf(t, step(t, p, req)); got != "agent2" {
			t.Errorf("voted %s, want agent2", got)
		}
	})
	t.Run("refused vote switches target", func(t *testing.T) {
		req := later(task, "agent_c", "agent3", 1, 2, shown...)
		req.Tools = tools(false, true)
		req.Attempt = 1
		req.History = []providers.Turn{{Reply: providers.Action{Calls: []providers.ToolCall{providers.VoteCall("agent1", "")}},
			Problem: "that vote is not allowed"}}
		if got := voteOf(t, step(t, p, req)); got != "agent2" {
			t.Errorf("voted %s, want agent2 (agent1 was refused)", got)
		}
	})
	t.Run("no call or two calls gets exactly one", func(t *testing.T) {
		for _, reply := range []providers.Action{
			{Text: "I think 391."},
			{Calls: []providers.ToolCall{providers.VoteCall("agent1", ""), providers.VoteCall("agent2", "")}},
		} {
			req := later(task, "agent_c", "agent3", 1, 2, shown...)
			req.Attempt = 1
			req.History = []providers.Turn{{Reply: reply, Problem: "make exactly one workflow call: new_answer or vote"}}
			call(t, step(t, p, req))
		}
	})
	t.Run("refused answer with only new_answer offered gets fresh text", func(t *testing.T) {
		req := blind(task, "agent_c", 1)
		first := answerOf(t, step(t, p, req))
		req.Attempt = 1
		req.History = []providers.Turn{{Reply: providers.Action{Calls: []providers.ToolCall{providers.NewAnswerCall(first)}}, Problem: "refused"}}
		if again := answerOf(t, step(t, p, req)); normText(again) == normText(first) {
			t.Errorf("repeated the refused answer %q", again)
		}
	})
}

// validate is the protocol's check of one reply (docs/DESIGN.md, "The path of a step"): exactly one
// workflow call, an offered tool, a vote for a name in the enum, a later
// answer that repeats no shown answer. It returns the problem, or "".
func validate(req providers.Request, act providers.Action) string {
	if len(act.Calls) != 1 {
		return "make exactly one workflow call"
	}
	v := newView(&req, 0)
	var args map[string]string
	_ = json.Unmarshal(act.Calls[0].Args, &args)
	switch act.Calls[0].Name {
	case providers.ToolVote:
		if !v.canVote {
			return "vote is not offered; use new_answer"
		}
		for _, n := range req.VoteEnum {
			if n == args["agent_id"] {
				return ""
			}
		}
		return args["agent_id"] + " has no answer; vote for one of " + strings.Join(req.VoteEnum, ", ")
	case providers.ToolNewAnswer:
		if !v.canAnswer {
			return "new_answer is not offered; vote"
		}
		for _, s := range req.Shown {
			if len(req.VoteEnum) > 0 && normText(s.Content) == normText(args["content"]) {
				return "that is already " + s.Alias + "'s answer — vote for it"
			}
		}
		return ""
	}
	return "unknown tool"
}

// TestSimsNeverFailValidationThreeTimes drives many views through a
// validator that, to force the feedback path, also refuses whatever the sim
// does first; the second attempt must then pass the real rules, and no view
// may use up three attempts.
func TestSimsNeverFailValidationThreeTimes(t *testing.T) {
	tasks := []string{task, "What is the capital of Canada?", "Draft a project plan."}
	values := []string{"391", "381", "Ottawa", "Toronto", "[simulated] draft 1 by agent_x"}
	for _, spec := range []string{"sim", "sim:revise=1:conformity=1", "sim/weak:revise=0.5"} {
		p := mustSim(t, spec)
		for i := range 600 {
			tk := tasks[i%len(tasks)]
			var shown []string
			for n := 1; n <= 1+i%3; n++ {
				shown = append(shown, fmt.Sprintf("agent%d", n), "Some working.\nAnswer: "+values[(i+n)%len(values)])
			}
			req := later(tk, "agent_a", "agent1", int64(i), 2+i%4, shown...)
			if i%5 == 0 {
				req.Tools = tools(false, true)
			}
			for attempt := 0; ; attempt++ {
				if attempt == 3 {
					t.Fatalf("%s: a view used three attempts: %+v", spec, req)
				}
				req.Attempt = attempt
				act := step(t, p, req)
				problem := validate(req, act)
				if attempt == 0 && problem == "" {
					problem = "refused to exercise feedback"
				}
				if problem == "" {
					break
				}
				if attempt > 0 {
					t.Fatalf("%s: attempt %d refused: %s (%+v)", spec, attempt, problem, act)
				}
				req.History = append(req.History, providers.Turn{Reply: act, Problem: problem})
			}
		}
	}
}

func TestPresentRestatesTheWinner(t *testing.T) {
	p := mustSim(t, "sim")
	req := later(task, "agent_b", "agent2", 1, 9, "agent1", "I get 381 for 17 * 23.\nAnswer: 381", "agent2", "17 * 23 = 391.\nAnswer: 391")
	req.Purpose = providers.PurposePresent
	req.Tools = tools(true, false)
	content := answerOf(t, step(t, p, req))
	if finalvalue.Of(content) != "391" || !strings.Contains(content, "presenting agent2.1") {
		t.Errorf("present wrote %q", content)
	}

	free := later("Write a haiku.", "agent_b", "agent2", 1, 9, "agent1", "old pond", "agent2", "autumn moon, 3 frogs")
	free.Purpose = providers.PurposePresent
	free.ShortAnswer = true
	content = answerOf(t, step(t, p, free))
	if !strings.Contains(content, "autumn moon, 3 frogs") || finalvalue.Of(content) != "3" {
		t.Errorf("present of a free answer wrote %q", content)
	}
}

func TestSynthesizeKeepsTheMostCommonValue(t *testing.T) {
	p := mustSim(t, "sim")
	req := later(task, "agent_a", "agent1", 1, 9,
		"agent1", "I get 381 for 17 * 23.\nAnswer: 381",
		"agent3", "Computing 17 * 23 gives 391.\nAnswer: 391",
		"agent2", "17 * 23 = 391.\nAnswer: 391")
	req.Purpose = providers.PurposeSynthesize
	content := answerOf(t, step(t, p, req))
	if finalvalue.Of(content) != "391" || !strings.Contains(content, "2 of 3") {
		t.Errorf("synthesize wrote %q", content)
	}
}

func TestLatencyHonoursContext(t *testing.T) {
	p := mustSim(t, "sim:latency=10s")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := p.Step(ctx, blind(task, "agent_a", 1))
	if time.Since(start) > 5*time.Second { // well under the 10 s latency, generous for a loaded machine
		t.Fatal("the step ignored its deadline")
	}
	if providers.ClassOf(err) != providers.ClassTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v (class %s), want a timeout wrapping the deadline", err, providers.ClassOf(err))
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if _, _, err := p.Step(cctx, blind(task, "agent_a", 1)); !errors.Is(err, context.Canceled) || providers.ClassOf(err) != providers.ClassTimeout {
		t.Errorf("cancelled step: %v", err)
	}

	fast := mustSim(t, "sim:latency=30ms")
	start = time.Now()
	step(t, fast, blind(task, "agent_a", 1))
	if time.Since(start) < 30*time.Millisecond {
		t.Error("the step returned before its latency")
	}
}

func TestUsageIsCountedFromText(t *testing.T) {
	req := blind(task, "agent_a", 1)
	req.System = strings.Repeat("s", 100)
	req.Prompt = strings.Repeat("p", 301) // 401 characters: 101 tokens, rounded up
	act, u, err := mustSim(t, "sim:price_in=3:price_out=15").Step(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	content := answerOf(t, act)
	wantOut := int64((len([]rune(content)) + 3) / 4)
	if u.Input != 101 || u.Output != wantOut {
		t.Errorf("usage %+v, want input 101, output %d", u, wantOut)
	}
	wantCost := 101*3/1e6 + float64(wantOut)*15/1e6
	if u.CostUSD == nil || math.Abs(*u.CostUSD-wantCost) > 1e-12 {
		t.Errorf("cost %v, want %v", u.CostUSD, wantCost)
	}
	_, free, _ := mustSim(t, "sim").Step(context.Background(), req)
	if free.CostUSD == nil || *free.CostUSD != 0 {
		t.Errorf("free sim cost %v, want a known 0", free.CostUSD)
	}
}

type fixedItems struct {
	truth, wrong string
	correct      map[string]bool
}

func (f fixedItems) FirstAnswer(q ItemQuery) (Item, bool) {
	if q.Task == "skip" {
		return Item{}, false
	}
	return Item{Truth: f.truth, Correct: f.correct[q.AgentID], Wrong: f.wrong}, true
}

func TestItemModelDecidesFirstAnswers(t *testing.T) {
	m := fixedItems{wrong: "400", correct: map[string]bool{"agent_a": true}}
	p := mustSim(t, "sim/weak", WithItemModel(m))
	if v := finalvalue.Of(answerOf(t, step(t, p, blind(task, "agent_a", 1)))); v != "391" {
		t.Errorf("correct agent answered %q", v)
	}
	if v := finalvalue.Of(answerOf(t, step(t, p, blind(task, "agent_b", 1)))); v != "400" {
		t.Errorf("wrong agent answered %q, want the model's 400", v)
	}

	// A word problem the bank does not know becomes answerable.
	const word = "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did she sell altogether?"
	gm := fixedItems{truth: "72", correct: map[string]bool{"agent_a": true}}
	p = mustSim(t, "sim", WithItemModel(gm))
	if v := finalvalue.Of(answerOf(t, step(t, p, blind(word, "agent_a", 1)))); v != "72" {
		t.Errorf("item-model truth: answered %q", v)
	}
	wrong := finalvalue.Of(answerOf(t, step(t, p, blind(word, "agent_b", 1))))
	if wrong == "72" || wrong == "" {
		t.Errorf("item-model wrong answer without a value: %q", wrong)
	}
	// The truth bias knows the given truth: an agent holding it votes for it.
	req := later(word, "agent_a", "agent1", 1, 2, "agent1", "I reach 72.\nAnswer: 72", "agent2", "I reach 70.\nAnswer: 70")
	p = mustSim(t, "sim:revise=0:conformity=0", WithItemModel(gm))
	if got := voteOf(t, step(t, p, req)); got != "agent1" {
		t.Errorf("voted %s", got)
	}
	// Declining leaves the task to the bank (here: outside it → a draft).
	if c := answerOf(t, step(t, p, blind("skip", "agent_a", 1))); !strings.HasPrefix(c, "[simulated] draft") {
		t.Errorf("declined item got %q", c)
	}
}

func TestNewRejectsBadSpecs(t *testing.T) {
	for _, sp := range []providers.Spec{
		{Backend: "openai", Model: "gpt-5.4"},
		{Backend: "sim", Model: "genius"},
		{Backend: "sim", Params: map[string]string{"accuracy": "2"}},
		{Backend: "sim", Model: "script"},
		{Backend: "sim", Model: "script", Params: map[string]string{"file": "/does/not/exist.json"}},
	} {
		if _, err := New(sp); !errors.Is(err, providers.ErrBadSpec) {
			t.Errorf("New(%#v) = %v, want ErrBadSpec", sp, err)
		}
	}
	if p, err := New(providers.Spec{Backend: "sim"}); err != nil || p == nil {
		t.Errorf("New(sim with no profile) = %v", err)
	}
}

// FuzzFirstAttemptIsValid pins the property behind "sims never fail
// validation": whatever they are shown, a sim's first attempt already passes
// the protocol's checks.
func FuzzFirstAttemptIsValid(f *testing.F) {
	f.Add(task, "17 * 23 = 391.\nAnswer: 391", "I get 381.\nAnswer: 381", int64(1), 2, uint8(3))
	f.Add("Write a poem.", "[simulated] draft 1 by agent_a", "", int64(5), 1, uint8(1))
	f.Add("What is the capital of Canada?", "Answer: Ottawa", "Answer: Ottawa", int64(-3), 7, uint8(2))
	p := mustSim(f, "sim:revise=0.5:conformity=0.5")
	f.Fuzz(func(t *testing.T, tk, c1, c2 string, seed int64, stepNo int, mask uint8) {
		var shown []string
		if mask&4 == 0 {
			shown = append(shown, "agent1", c1)
		}
		if c2 != "" {
			shown = append(shown, "agent2", c2)
		}
		req := later(tk, "agent_a", "agent1", seed, stepNo, shown...)
		req.Tools = tools(mask&1 != 0 || len(shown) == 0, mask&2 != 0 && len(shown) > 0)
		if len(req.Tools) == 0 {
			req.Tools = tools(true, false)
		}
		act := step(t, p, req)
		if problem := validate(req, act); problem != "" {
			t.Fatalf("first attempt refused: %s\nrequest %+v\naction %+v", problem, req, act)
		}
	})
}

// clockModel records when the sim asks for a first answer.
type clockModel struct{ asked chan time.Time }

func (m clockModel) FirstAnswer(ItemQuery) (Item, bool) {
	m.asked <- time.Now()
	return Item{}, false
}

// TestDecidesHalfwayThroughTheLatency: the sim makes its decision in the
// middle of its latency, not when the prompt arrives (when the orchestrator
// is busiest), and still answers no earlier than the latency.
func TestDecidesHalfwayThroughTheLatency(t *testing.T) {
	m := clockModel{asked: make(chan time.Time, 1)}
	p := mustSim(t, "sim:latency=400ms", WithItemModel(m))
	start := time.Now()
	step(t, p, blind(task, "agent_a", 1))
	took := time.Since(start)
	decided := (<-m.asked).Sub(start)
	if decided < 200*time.Millisecond || decided > took {
		t.Errorf("decided %v into a 400ms step that took %v; want from the midpoint on", decided, took)
	}
	if took < 400*time.Millisecond {
		t.Errorf("the step returned after %v, before its latency", took)
	}
}
