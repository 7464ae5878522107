package criteria_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/sim"
)

// fakeModel plays scripted replies (providers.Action or error), one per
// call, and records every request.
type fakeModel struct {
	mu      sync.Mutex
	replies []any
	calls   []providers.Request
}

func (f *fakeModel) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, req)
	u := providers.Free()
	u.Input, u.Output = 100, 50
	if len(f.replies) == 0 {
		return providers.Action{Text: "I have nothing more to say."}, u, nil
	}
	r := f.replies[0]
	f.replies = f.replies[1:]
	if err, ok := r.(error); ok {
		return providers.Action{}, u, err
	}
	return r.(providers.Action), u, nil
}

// submit is a submit_criteria call with the given arguments.
func submit(args any) providers.Action {
	raw, _ := json.Marshal(args)
	return providers.Action{Calls: []providers.ToolCall{{Name: criteria.ToolSubmit, Args: raw}}}
}

// goodItems are n valid criteria, the first must.
func goodItems(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		cat := "should"
		if i == 0 {
			cat = "must"
		}
		out[i] = map[string]any{"id": "E" + string(rune('1'+i)), "text": "criterion " + string(rune('a'+i)), "category": cat,
			"verify_by": "check it", "anti_patterns": []string{"skipping it"}}
	}
	return out
}

func TestGenerateAcceptsAGoodReply(t *testing.T) {
	m := &fakeModel{replies: []any{submit(map[string]any{"criteria": goodItems(4), "aspiration": "The parser\nthe stdlib should have had"})}}
	set, err := criteria.Generate(context.Background(), m, criteria.GenerateRequest{
		Task: "Write a Go function that parses ISO 8601 durations", Count: 4, Model: "openai/gpt-5.4"})
	if err != nil {
		t.Fatal(err)
	}
	if set.Source != criteria.SourceGenerated || set.Kind != criteria.KindCode || set.Model != "openai/gpt-5.4" || len(set.Items) != 4 ||
		set.Must().ID != "E1" || set.Aspiration != "The parser the stdlib should have had" || set.Note != "" {
		t.Errorf("set = %+v", set)
	}
	if set.Usage == nil || set.Usage.Input != 100 || set.Usage.Output != 50 {
		t.Errorf("usage = %+v, want the one call's", set.Usage)
	}
	if len(m.calls) != 1 {
		t.Fatalf("%d calls, want 1", len(m.calls))
	}
	req := m.calls[0]
	if req.Purpose != providers.PurposeCriteria || len(req.Tools) != 1 || req.Tools[0].Name != criteria.ToolSubmit || len(req.History) != 0 {
		t.Errorf("request purpose %q tools %v history %v", req.Purpose, req.Tools, req.History)
	}
	for _, want := range []string{"ISO 8601", "exactly 4", `"must"`, "verify_by", "weakest"} {
		if !strings.Contains(req.Prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, req.Prompt)
		}
	}
	var schema struct {
		Properties struct {
			Criteria struct{ MinItems, MaxItems int } `json:"criteria"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(req.Tools[0].Schema, &schema); err != nil || schema.Properties.Criteria.MinItems != 4 || schema.Properties.Criteria.MaxItems != 4 {
		t.Errorf("tool schema asks for %+v (%v), want exactly 4", schema.Properties.Criteria, err)
	}
}

func TestGenerateRetriesOnceWithTheProblemThenFallsBackToDefaults(t *testing.T) {
	twoMusts := goodItems(5)
	twoMusts[1]["category"] = "must"
	first := submit(map[string]any{"criteria": goodItems(3)}) // 3, not 5
	m := &fakeModel{replies: []any{first, submit(map[string]any{"criteria": twoMusts})}}
	set, err := criteria.Generate(context.Background(), m, criteria.GenerateRequest{Task: "Plan the migration of the billing database", Model: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.calls) != 2 {
		t.Fatalf("%d calls, want one try and one corrective retry", len(m.calls))
	}
	retry := m.calls[1]
	if retry.Attempt != 1 || len(retry.History) != 1 || !strings.Contains(retry.History[0].Problem, "3 criteria given; give exactly 5") {
		t.Errorf("retry attempt %d history %+v, want the exact problem", retry.Attempt, retry.History)
	}
	if !reflect.DeepEqual(retry.History[0].Reply, first) {
		t.Errorf("retry does not replay the refused reply: %+v", retry.History[0].Reply)
	}
	want := criteria.Defaults(criteria.KindPlan, 5)
	if set.Source != criteria.SourceDefault || set.Kind != criteria.KindPlan || !reflect.DeepEqual(set.Items, want.Items) {
		t.Errorf("set = %+v, want the plan defaults", set)
	}
	for _, w := range []string{"claude replied with invalid criteria twice", "E1, E2 are all must", "built-in criteria for plan tasks"} {
		if !strings.Contains(set.Note, w) {
			t.Errorf("note %q lacks %q", set.Note, w)
		}
	}
	if set.Usage == nil || set.Usage.Input != 200 {
		t.Errorf("usage = %+v, want both calls counted", set.Usage)
	}
}

func TestGenerateRetryThatFixesTheReplyIsAccepted(t *testing.T) {
	m := &fakeModel{replies: []any{
		providers.Action{Text: "Here are some thoughts about quality."},
		submit(map[string]any{"criteria": goodItems(3)}),
	}}
	set, err := criteria.Generate(context.Background(), m, criteria.GenerateRequest{Task: "Why is the sky blue?", Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	if set.Source != criteria.SourceGenerated || len(set.Items) != 3 {
		t.Errorf("set = %+v", set)
	}
	if p := m.calls[1].History[0].Problem; !strings.Contains(p, "you did not call submit_criteria") {
		t.Errorf("problem %q", p)
	}
}

func TestGenerateReadsCriteriaWrittenAsText(t *testing.T) {
	raw, _ := json.Marshal(map[string]any{"criteria": goodItems(3)})
	for name, text := range map[string]string{
		"a call as text":  `{"tool": "submit_criteria", "arguments": ` + string(raw) + `}`,
		"a fenced object": "Sure.\n```json\n" + string(raw) + "\n```",
	} {
		m := &fakeModel{replies: []any{providers.Action{Text: text}}}
		set, err := criteria.Generate(context.Background(), m, criteria.GenerateRequest{Task: "t", Count: 3})
		if err != nil || set.Source != criteria.SourceGenerated || len(m.calls) != 1 {
			t.Errorf("%s: set %+v err %v after %d calls", name, set, err, len(m.calls))
		}
	}
}

func TestGenerateFallsBackWhenTheModelFails(t *testing.T) {
	m := &fakeModel{replies: []any{&providers.Error{Class: providers.ClassAuth, Message: "invalid API key"}}}
	set, err := criteria.Generate(context.Background(), m, criteria.GenerateRequest{Task: "Write a haiku about Go", Model: "gemini"})
	if err != nil {
		t.Fatal(err)
	}
	if set.Source != criteria.SourceDefault || !strings.Contains(set.Note, "gemini could not be asked") || !strings.Contains(set.Note, "invalid API key") {
		t.Errorf("set = %+v", set)
	}
}

func TestGenerateStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := &fakeModel{replies: []any{context.Canceled}}
	if _, err := criteria.Generate(ctx, m, criteria.GenerateRequest{Task: "t"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Generate = %v, want context.Canceled", err)
	}
}

func TestGenerateRefusesBadRequests(t *testing.T) {
	for name, req := range map[string]criteria.GenerateRequest{
		"empty task": {Task: "  "},
		"count 9":    {Task: "t", Count: 9},
		"count 2":    {Task: "t", Count: 2},
		"kind":       {Task: "t", Kind: "poetry"},
	} {
		m := &fakeModel{}
		if _, err := criteria.Generate(context.Background(), m, req); !errors.Is(err, criteria.ErrInvalid) || len(m.calls) != 0 {
			t.Errorf("%s: Generate = %v after %d calls, want ErrInvalid and no call", name, err, len(m.calls))
		}
	}
}

func TestSimWritesValidCriteriaDeterministically(t *testing.T) {
	spec, err := providers.ParseSpec("sim")
	if err != nil {
		t.Fatal(err)
	}
	p, err := sim.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	req := criteria.GenerateRequest{Task: "Compare Postgres and MySQL for analytics", Count: 6, Model: "sim"}
	a, err := criteria.Generate(context.Background(), p, req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := criteria.Generate(context.Background(), p, req)
	if a.Source != criteria.SourceGenerated || len(a.Items) != 6 || a.Kind != criteria.KindAnalysis || !reflect.DeepEqual(a.Items, b.Items) {
		t.Errorf("sim set = %+v (again: %+v)", a, b)
	}
	if !strings.HasPrefix(a.Items[0].Text, "[simulated]") {
		t.Errorf("sim criteria must say they are simulated: %q", a.Items[0].Text)
	}
}

func TestGeneratedCriteriaPutAnExplicitDemandInTheMust(t *testing.T) {
	spec, _ := providers.ParseSpec("sim")
	p, err := sim.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	task := "Write a Python function that merges two sorted lists, with tests"
	set, err := criteria.Generate(context.Background(), recordingProvider{p}, criteria.GenerateRequest{Task: task, Model: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	if set.Kind != criteria.KindCode || set.Items[0].Category != criteria.Must || !strings.Contains(set.Items[0].Text, "tests the task asks for") {
		t.Errorf("set %+v", set)
	}
	if err := criteria.Validate(set.Items, 5, 5); err != nil {
		t.Error(err)
	}
	if !strings.Contains(lastPrompt, "explicitly asks for: tests") {
		t.Errorf("the prompt does not pass the demand on:\n%s", lastPrompt)
	}
}

var lastPrompt string

type recordingProvider struct{ p providers.Provider }

func (r recordingProvider) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	lastPrompt = req.Prompt
	return r.p.Step(ctx, req)
}

// TestAGenerationCutShortStillReportsItsSpend: a call the caller's ctx
// ended was still paid for (here 150 tokens): the error comes with a set
// holding its usage, for a session to count it.
func TestAGenerationCutShortStillReportsItsSpend(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := providers.Func(func(context.Context, providers.Request) (providers.Action, providers.Usage, error) {
		cancel()
		u := providers.Free()
		u.Input, u.Output = 100, 50
		return providers.Action{}, u, context.Canceled
	})
	set, err := criteria.Generate(ctx, m, criteria.GenerateRequest{Task: "Write a Go function that parses durations", Count: 3})
	if err == nil {
		t.Fatalf("a generation whose ctx ended: want an error, got %+v", set)
	}
	if set.Usage == nil || set.Usage.Tokens() != 150 {
		t.Fatalf("a generation cut short reports usage %+v, want the 150 tokens its call spent", set.Usage)
	}
}

// A base URL's credentials in the criteria model's spec never reach the set
// a caller gets back (its model, its note): the set goes to MCP clients and
// into session files, as the spec shown everywhere else does.
func TestASetNamesItsModelWithoutTheBaseURLsCredentials(t *testing.T) {
	const spec = "openai/gpt-5@https://dummy-user:dummy-pass-not-a-key@proxy.example/v1?code=dummy-code-not-a-key"
	for name, replies := range map[string][]any{
		"generated": {submit(map[string]any{"criteria": goodItems(3)})},
		"fell back": {&providers.Error{Class: providers.ClassAuth, Message: "refused"}},
	} {
		set, err := criteria.Generate(context.Background(), &fakeModel{replies: replies}, criteria.GenerateRequest{Task: "Write a haiku about Go", Count: 3, Model: spec})
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"dummy-user", "dummy-pass-not-a-key", "dummy-code-not-a-key"} {
			if strings.Contains(set.Model, secret) || strings.Contains(set.Note, secret) {
				t.Errorf("%s: the set shows %q: model %q, note %q", name, secret, set.Model, set.Note)
			}
		}
		if !strings.HasPrefix(set.Model, "openai/gpt-5@https://proxy.example/v1") {
			t.Errorf("%s: model = %q, want the spec shown without its credentials", name, set.Model)
		}
	}
}
