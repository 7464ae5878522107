package human

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

func request(tools ...string) providers.Request {
	req := providers.Request{Task: "What is 17 * 23?", AgentID: "me"}
	for _, t := range tools {
		req.Tools = append(req.Tools, providers.Tool{Name: t})
	}
	return req
}

func TestABlindStepAsksOnlyForAnAnswer(t *testing.T) {
	q := Ask(request(providers.ToolNewAnswer))
	props := q.Schema["properties"].(map[string]any)
	if props[FieldAnswer] == nil || props[FieldVote] != nil || strings.Join(q.Schema["required"].([]string), ",") != FieldAnswer {
		t.Fatalf("a blind step's form has only a required answer: %v", q.Schema)
	}
	if !strings.Contains(q.Message, "17 * 23") || !strings.Contains(q.Message, "Write your answer") {
		t.Fatalf("the message carries the task and what to do:\n%s", q.Message)
	}
}

func TestAVoteOffersTheShownAliasesAsAnEnum(t *testing.T) {
	req := request(providers.ToolNewAnswer, providers.ToolVote)
	req.VoteEnum = []string{"agent1", "agent2"}
	req.Shown = []providers.ShownAnswer{{Alias: "agent1", Content: "391"}, {Alias: "agent2", Content: strings.Repeat("long ", 1000)}}
	q := Ask(req)
	props := q.Schema["properties"].(map[string]any)
	vote := props[FieldVote].(map[string]any)
	if strings.Join(vote["enum"].([]string), ",") != "agent1,agent2" || props[FieldAnswer] == nil || q.Schema["required"] != nil {
		t.Fatalf("answer or vote, the vote's choices the shown aliases: %v", q.Schema)
	}
	if !strings.Contains(q.Message, "[agent1] 391") || !strings.Contains(q.Message, "[agent2] long") || !strings.Contains(q.Message, "[…cut]") || len(q.Message) > MaxMessage {
		t.Fatalf("every shown answer is summarised, long ones cut:\n%s", q.Message)
	}
	req.Tools = req.Tools[1:]
	if q := Ask(req); strings.Join(q.Schema["required"].([]string), ",") != FieldVote || q.Schema["properties"].(map[string]any)[FieldAnswer] != nil {
		t.Fatalf("at the answer cap only a vote is asked: %v", q.Schema)
	}
}

func TestARefusedReplyIsExplainedInTheNextQuestion(t *testing.T) {
	req := request(providers.ToolNewAnswer)
	req.History = []providers.Turn{{Problem: "that is already agent2's answer — vote for it"}}
	if q := Ask(req); !strings.Contains(q.Message, "Your last reply was refused: that is already agent2's answer") {
		t.Fatalf("the refusal is in the question:\n%s", q.Message)
	}
}

func TestTheReplyBecomesTheCallsAsWritten(t *testing.T) {
	for _, c := range []struct {
		content map[string]any
		want    []string
	}{
		{map[string]any{"answer": "391"}, []string{providers.ToolNewAnswer}},
		{map[string]any{"vote": "agent2", "reason": "right"}, []string{providers.ToolVote}},
		{map[string]any{"answer": "391", "vote": "agent2"}, []string{providers.ToolNewAnswer, providers.ToolVote}},
		{map[string]any{"answer": "  "}, nil},
	} {
		var got []string
		for _, call := range Action(c.content).Calls {
			got = append(got, call.Name)
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%v: calls %v, want %v", c.content, got, c.want)
		}
	}
}

func TestAStepAsksThroughTheContextsAsker(t *testing.T) {
	p, err := New(providers.Spec{Backend: "human"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = p.Step(context.Background(), request(providers.ToolNewAnswer))
	if !errors.Is(err, providers.ErrNoAsker) {
		t.Fatalf("without an Asker the step fails with ErrNoAsker: %v", err)
	}
	for action, wantErr := range map[string]string{providers.ReplyAccept: "", providers.ReplyDecline: "declined", providers.ReplyCancel: "cancelled"} {
		ctx := providers.WithAsker(context.Background(), func(context.Context, providers.Question) (providers.Reply, error) {
			return providers.Reply{Action: action, Content: map[string]any{"answer": "391"}}, nil
		})
		act, usage, err := p.Step(ctx, request(providers.ToolNewAnswer))
		switch {
		case wantErr == "" && (err != nil || len(act.Calls) != 1 || usage.CostUSD == nil || *usage.CostUSD != 0):
			t.Fatalf("accept: %v %v %v", act, usage, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Fatalf("%s: the step fails saying so: %v", action, err)
		}
	}
}

func TestSpecs(t *testing.T) {
	for _, s := range []string{"human", "human/alice"} {
		if sp, err := providers.ParseSpec(s); err != nil || sp.Backend != "human" || sp.String() != s {
			t.Errorf("%s: %+v %v", s, sp, err)
		}
	}
	for _, s := range []string{"human:x=1", "human@http://x", "human/a@b"} {
		if _, err := providers.ParseSpec(s); err == nil || !strings.Contains(err.Error(), "human is a person") {
			t.Errorf("%s is refused as a person's spec: %v", s, err)
		}
	}
}
