package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// scripted is an adapter's turn that plays replies in order and keeps what
// each turn was given.
type scripted struct {
	replies []providers.Action
	seen    [][]providers.Exchange
	tools   [][]string
	cost    float64 // each turn's, priced as an adapter that prices its turns does; 0: unpriced
}

func (s *scripted) turn(_ context.Context, req providers.Request, past []providers.Exchange) (providers.Action, []string, providers.Usage, error) {
	s.seen = append(s.seen, append([]providers.Exchange(nil), past...))
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	s.tools = append(s.tools, names)
	n := len(s.seen) - 1
	if n >= len(s.replies) {
		return providers.Action{}, nil, providers.Usage{}, fmt.Errorf("turn %d was never scripted", n+1)
	}
	act := s.replies[n]
	ids := make([]string, len(act.Calls))
	for i := range ids {
		ids[i] = fmt.Sprintf("id_%d_%d", n+1, i+1)
	}
	u := providers.Usage{Input: 100, Output: 10}
	if s.cost > 0 {
		u.CostUSD = &s.cost
	}
	return act, ids, u, nil
}

func readCall(path string) providers.ToolCall {
	return providers.ToolCall{Name: "read_file", Args: json.RawMessage(`{"path":"` + path + `"}`)}
}

var workflow = []providers.Tool{{Name: providers.ToolNewAnswer}, {Name: providers.ToolVote}}

func loopRequest(box providers.Toolbox, rec providers.Recorder) providers.Request {
	return providers.Request{Tools: workflow, Toolbox: box, Record: rec}
}

func TestLoopWithoutToolboxIsOneTurn(t *testing.T) {
	s := &scripted{replies: []providers.Action{{Calls: []providers.ToolCall{readCall("a")}}}}
	act, u, err := providers.RunLoop(context.Background(), providers.Request{Tools: workflow}, s.turn)
	if err != nil || len(s.seen) != 1 || len(act.Calls) != 1 || u.Input != 100 {
		t.Fatalf("got %+v %+v %v after %d turns; want the one reply as it came", act, u, err, len(s.seen))
	}
	if strings.Join(s.tools[0], ",") != "new_answer,vote" {
		t.Fatalf("tools offered %v; want only the workflow tools", s.tools[0])
	}
}

func TestLoopRunsToolCallsUntilAWorkflowCall(t *testing.T) {
	box := &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}, Run: func(_ context.Context, _ string, args json.RawMessage) (providers.ToolResult, error) {
		return providers.ToolResult{Content: "contents of " + string(args)}, nil
	}}
	rec := &fake.Recorder{}
	s := &scripted{replies: []providers.Action{
		{Text: "let me look", Calls: []providers.ToolCall{readCall("a.go"), readCall("b.go")}},
		{Calls: []providers.ToolCall{readCall("c.go")}},
		{Text: "done", Calls: []providers.ToolCall{providers.NewAnswerCall("fixed")}},
	}}
	act, u, err := providers.RunLoop(context.Background(), loopRequest(box, rec), s.turn)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer || act.Text != "done" {
		t.Fatalf("action %+v; want the new_answer that ended the loop", act)
	}
	if u.Input != 300 || u.Output != 30 {
		t.Fatalf("usage %+v; want the sum of three turns", u)
	}
	if got := strings.Join(s.tools[0], ","); got != "new_answer,vote,read_file" {
		t.Fatalf("tools offered %s; want the workflow tools then the toolbox's", got)
	}
	if len(box.Calls()) != 3 {
		t.Fatalf("toolbox ran %d calls; want 3", len(box.Calls()))
	}
	third := s.seen[2]
	if len(third) != 2 || len(third[0].Results) != 2 || third[0].IDs[1] != "id_1_2" ||
		third[0].Results[1].Content != `contents of {"path":"b.go"}` || third[1].Results[0].Content != `contents of {"path":"c.go"}` {
		t.Fatalf("third turn saw %+v; want both rounds with their ids and results", third)
	}
	recs := rec.Records()
	if len(recs) != 3 || recs[0].Kind != "tool" || recs[0].Name != "read_file" || string(recs[2].Arguments) != `{"path":"c.go"}` ||
		recs[0].ResultBytes != len(`contents of {"path":"a.go"}`) || recs[0].Started.IsZero() {
		t.Fatalf("records %+v; want one per call with name, arguments, size and time", recs)
	}
}

func TestLoopRunsToolCallsBesideTheAnswerFirst(t *testing.T) {
	box := &fake.Toolbox{List: []providers.Tool{{Name: "write_file"}}}
	s := &scripted{replies: []providers.Action{{Calls: []providers.ToolCall{
		{Name: "write_file", Args: json.RawMessage(`{"path":"x","content":"y"}`)}, providers.NewAnswerCall("see x")}}}}
	act, _, err := providers.RunLoop(context.Background(), loopRequest(box, nil), s.turn)
	if err != nil || len(s.seen) != 1 || len(box.Calls()) != 1 || len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer {
		t.Fatalf("got %+v, %v, %d turns, %d tool calls; want the write run and the answer returned alone", act, err, len(s.seen), len(box.Calls()))
	}
}

func TestLoopStopsRunningToolsAtMaxToolCalls(t *testing.T) {
	box := &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}}
	var replies []providers.Action
	for range 10 {
		replies = append(replies, providers.Action{Calls: []providers.ToolCall{readCall("a")}})
	}
	s := &scripted{replies: replies}
	req := loopRequest(box, nil)
	req.MaxToolCalls = 2
	_, u, err := providers.RunLoop(context.Background(), req, s.turn)
	if providers.ClassOf(err) != providers.ClassBadOutput || !strings.Contains(err.Error(), "limit 2") {
		t.Fatalf("err %v; want a bad_output error naming the limit", err)
	}
	if len(box.Calls()) != 2 || len(s.seen) != 5 || u.Input != 500 {
		t.Fatalf("%d tool calls in %d turns (usage %+v); want 2 calls, then %d turns answered 'not run'", len(box.Calls()), len(s.seen), u, 3)
	}
	last := s.seen[4][3].Results[0]
	if !last.IsError || !strings.Contains(last.Content, "budget of 2 tool calls is spent") {
		t.Fatalf("over-budget result %+v; want the model told to answer", last)
	}
}

func TestLoopAnswerAfterBudgetSpentEndsTheStep(t *testing.T) {
	box := &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}}
	s := &scripted{replies: []providers.Action{
		{Calls: []providers.ToolCall{readCall("a")}},
		{Calls: []providers.ToolCall{readCall("b")}},
		{Calls: []providers.ToolCall{providers.VoteCall("agent1", "best")}},
	}}
	req := loopRequest(box, nil)
	req.MaxToolCalls = 1
	act, _, err := providers.RunLoop(context.Background(), req, s.turn)
	if err != nil || act.Calls[0].Name != providers.ToolVote || len(box.Calls()) != 1 {
		t.Fatalf("got %+v, %v with %d tool calls; want the vote after one call", act, err, len(box.Calls()))
	}
}

func TestLoopStopsRunningToolsWhenTheTokenBudgetIsSpent(t *testing.T) {
	box := &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}}
	s := &scripted{replies: []providers.Action{
		{Calls: []providers.ToolCall{readCall("a")}},
		{Calls: []providers.ToolCall{readCall("b")}},
		{Calls: []providers.ToolCall{providers.NewAnswerCall("x")}},
	}}
	req := loopRequest(box, nil)
	req.TokenBudget = 200 // each turn spends 110
	if _, _, err := providers.RunLoop(context.Background(), req, s.turn); err != nil {
		t.Fatal(err)
	}
	if len(box.Calls()) != 1 || !strings.Contains(s.seen[2][1].Results[0].Content, "token budget (200 tokens) is spent") {
		t.Fatalf("%d calls ran, second result %+v; want only the first, under budget", len(box.Calls()), s.seen[2][1].Results[0])
	}
}

func TestLoopAnswersMalformedArgumentsWithoutRunningTheTool(t *testing.T) {
	box := &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}}
	rec := &fake.Recorder{}
	s := &scripted{replies: []providers.Action{
		{Calls: []providers.ToolCall{{Name: "read_file", Args: json.RawMessage(`{"path": "a`)}}},
		{Calls: []providers.ToolCall{providers.NewAnswerCall("x")}},
	}}
	if _, _, err := providers.RunLoop(context.Background(), loopRequest(box, rec), s.turn); err != nil {
		t.Fatal(err)
	}
	res := s.seen[1][0].Results[0]
	if len(box.Calls()) != 0 || !res.IsError || !strings.Contains(res.Content, "not a JSON object") {
		t.Fatalf("result %+v after %d calls; want an error result and no call", res, len(box.Calls()))
	}
	if r := rec.Records(); len(r) != 1 || !r[0].IsError || r[0].Arguments != nil {
		t.Fatalf("records %+v; want the refused call recorded without its broken arguments", r)
	}
}

func TestLoopEndsWhenAToolFails(t *testing.T) {
	stop := errors.New("context canceled")
	box := &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}, Run: func(context.Context, string, json.RawMessage) (providers.ToolResult, error) {
		return providers.ToolResult{}, stop
	}}
	s := &scripted{replies: []providers.Action{{Calls: []providers.ToolCall{readCall("a")}}}}
	if _, _, err := providers.RunLoop(context.Background(), loopRequest(box, nil), s.turn); !errors.Is(err, stop) || len(s.seen) != 1 {
		t.Fatalf("err %v after %d turns; want the tool's error at once", err, len(s.seen))
	}
}

func TestLoopKeepsWorkflowToolsOverToolboxNamesakes(t *testing.T) {
	box := &fake.Toolbox{List: []providers.Tool{{Name: providers.ToolVote}, fake.ReadFileTool}}
	s := &scripted{replies: []providers.Action{{Calls: []providers.ToolCall{providers.VoteCall("agent1", "r")}}}}
	act, _, err := providers.RunLoop(context.Background(), loopRequest(box, nil), s.turn)
	if err != nil || len(box.Calls()) != 0 || act.Calls[0].Name != providers.ToolVote {
		t.Fatalf("got %+v, %v, %d tool calls; want the vote left to coordination", act, err, len(box.Calls()))
	}
	if got := strings.Join(s.tools[0], ","); got != "new_answer,vote,read_file" {
		t.Fatalf("tools offered %s; want vote once", got)
	}
}

// spendLog is a session's budget as a step sees it (providers.Spend): it
// keeps every report, and says the budget is spent once one reaches
// over dollars (0: never).
type spendLog struct {
	reports []providers.Usage
	over    float64
}

func (s *spendLog) Used(u providers.Usage) string {
	s.reports = append(s.reports, u)
	if s.over > 0 && u.CostUSD != nil && *u.CostUSD >= s.over {
		return fmt.Sprintf("would take the session past its cost_budget_usd of $%.2f", s.over)
	}
	return ""
}

func (s *spendLog) costs() []float64 {
	var out []float64
	for _, u := range s.reports {
		c := -1.0 // unpriced
		if u.CostUSD != nil {
			c = *u.CostUSD
		}
		out = append(out, c)
	}
	return out
}

// TestLoopReportsItsSpendAfterEveryTurnThatAsksForTools: a loop of three
// turns, two of them asking for tools, tells the session's Spend the
// step's usage so far after each of those two ($0.25, then $0.50), as a
// CLI agent's stream does, so a replica that dies mid-loop has shared its
// spend; the last turn, which answers, is not reported (its usage lands
// with the step). Before, an API agent's loop never reported.
func TestLoopReportsItsSpendAfterEveryTurnThatAsksForTools(t *testing.T) {
	box := &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}}
	s := &scripted{cost: 0.25, replies: []providers.Action{
		{Calls: []providers.ToolCall{readCall("a.go")}},
		{Calls: []providers.ToolCall{readCall("b.go")}},
		{Calls: []providers.ToolCall{providers.NewAnswerCall("fixed")}},
	}}
	spend := &spendLog{}
	req := loopRequest(box, nil)
	req.Spend = spend
	if _, u, err := providers.RunLoop(context.Background(), req, s.turn); err != nil || u.CostUSD == nil || *u.CostUSD != 0.75 {
		t.Fatalf("usage %+v, %v; want the three turns' $0.75", u, err)
	}
	if got := spend.costs(); len(got) != 2 || got[0] != 0.25 || got[1] != 0.5 || spend.reports[1].Input != 200 {
		t.Fatalf("reports %v (%+v); want the usage so far after each turn that asked for tools: $0.25, $0.50", got, spend.reports)
	}
}

// TestAStepOfOneTurnReportsNoSpend: a step whose model answers in its
// first turn, with or without a toolbox, makes no report: its usage is
// known when it lands, and a report would cost a step on a store that
// shares spend a round trip (the overhead benchmark's sim steps are such
// steps). A turn that asks for tools beside its answer ends the step too.
func TestAStepOfOneTurnReportsNoSpend(t *testing.T) {
	for _, box := range []providers.Toolbox{nil, &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}}} {
		for _, reply := range []providers.Action{
			{Calls: []providers.ToolCall{providers.NewAnswerCall("4")}},
			{Calls: []providers.ToolCall{readCall("a.go"), providers.NewAnswerCall("see a.go")}},
		} {
			s := &scripted{cost: 0.25, replies: []providers.Action{reply}}
			spend := &spendLog{}
			req := loopRequest(box, nil)
			req.Spend = spend
			if _, _, err := providers.RunLoop(context.Background(), req, s.turn); err != nil || len(s.seen) != 1 {
				t.Fatalf("toolbox %v, reply %+v: %v after %d turns; want one turn", box != nil, reply, err, len(s.seen))
			}
			if len(spend.reports) != 0 {
				t.Errorf("toolbox %v, reply %+v: reported %v; want no report", box != nil, reply, spend.costs())
			}
		}
	}
}

// TestLoopStopsWhenTheSessionsBudgetIsSpent: a model that would call
// tools for ten turns is stopped once the session's Spend says its budget
// is spent (after the second turn's report): no further turn is made, the
// stopping turn's tools are not run, and the step fails with a budget
// error carrying the two turns' usage, as a CLI agent's step stops. Before,
// only the step's own token budget bounded an API agent's loop.
func TestLoopStopsWhenTheSessionsBudgetIsSpent(t *testing.T) {
	box := &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}}
	var replies []providers.Action
	for range 10 {
		replies = append(replies, providers.Action{Calls: []providers.ToolCall{readCall("a")}})
	}
	s := &scripted{cost: 0.25, replies: replies}
	spend := &spendLog{over: 0.5}
	req := loopRequest(box, nil)
	req.Spend = spend
	_, u, err := providers.RunLoop(context.Background(), req, s.turn)
	if providers.ClassOf(err) != providers.ClassBudget || !strings.Contains(err.Error(), "after 2 model turns: it would take the session past its cost_budget_usd of $0.50") {
		t.Fatalf("err %v; want a budget error saying where the loop stopped and why", err)
	}
	if len(s.seen) != 2 || len(box.Calls()) != 1 || u.CostUSD == nil || *u.CostUSD != 0.5 || u.Input != 200 {
		t.Fatalf("%d turns, %d tool calls, usage %+v; want 2 turns, only the first's tool run, and both turns' usage", len(s.seen), len(box.Calls()), u)
	}
}
