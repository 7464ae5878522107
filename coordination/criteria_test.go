package coordination_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/report"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/sim"
)

const voteRule = "Vote for the answer that best meets the evaluation criteria"

var written = json.RawMessage(`[
	{"text": "The product is exact.", "category": "primary", "verify_by": "multiply it out"},
	{"name": "Brevity", "description": "One line only.", "weight": 0.2}]`)

func TestAttachedCriteriaReachEveryPromptAndTheVoteRule(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 3)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Task: "What is 17 * 23?", Models: models})
	set, err := h.Service.Criteria(context.Background(), coordination.CriteriaRequest{Provided: written, SessionID: s.ID})
	if err != nil {
		t.Fatal(err)
	}
	if set.Source != criteria.SourceProvided || set.Must().ID != "E1" || set.Items[1].Category != criteria.Could {
		t.Fatalf("set = %+v", set)
	}
	res := h.Run(s.ID)
	if res.Status != coordination.StatusFinished {
		t.Fatalf("status %s", res.Status)
	}
	votes := 0
	for i, sc := range scripts {
		for _, req := range sc.Requests() {
			if !strings.Contains(req.StablePrefix, "<EVALUATION CRITERIA>\nE1 [must] The product is exact. (verify by: multiply it out)\nE2 [could] One line only.\n") ||
				!strings.HasPrefix(req.Prompt, req.StablePrefix) {
				t.Errorf("agent %d step %d: the criteria are not in the prompt's stable prefix:\n%s", i, req.StepNumber, req.Prompt)
			}
			if !strings.Contains(req.System, voteRule) {
				t.Errorf("agent %d step %d: the rules do not say to vote by the criteria:\n%s", i, req.StepNumber, req.System)
			}
			if len(req.VoteEnum) > 0 {
				votes++
			}
		}
	}
	if votes == 0 {
		t.Error("no vote step was seen, so the vote instructions were never checked")
	}

	st, err := h.Service.Status(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Criteria) != 2 || !strings.Contains(report.Markdown(st), "- E1 [must] The product is exact.") {
		t.Errorf("team_status lists criteria %+v:\n%s", st.Criteria, report.Markdown(st))
	}
	evs, _ := h.Store.Events(context.Background(), s.ID)
	attached := false
	for _, ev := range evs {
		attached = attached || (ev.Type == "criteria_attached" && strings.Contains(ev.Message, "E1 must"))
	}
	if !attached {
		t.Errorf("no criteria_attached event in %+v", evs)
	}
}

func TestCriteriaCannotBeAttachedOnceAnAgentHasStepped(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	counting := &coordtest.Scripted{}
	provs["sim/strong"] = counting
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep})
	if _, err := h.Service.Step(context.Background(), coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	err := h.Service.AttachCriteria(context.Background(), s.ID, []criteria.Item{{ID: "E1", Text: "x", Category: "must"}})
	if !errors.Is(err, coordination.ErrSessionStarted) || !strings.Contains(err.Error(), "agent_a has stepped in "+s.ID) {
		t.Errorf("AttachCriteria after a step = %v, want ErrSessionStarted naming the agent that stepped", err)
	}
	// Generation is refused before the model is called.
	_, err = h.Service.Criteria(context.Background(), coordination.CriteriaRequest{SessionID: s.ID, Model: "sim/strong"})
	if !errors.Is(err, coordination.ErrSessionStarted) || len(counting.Requests()) != 0 {
		t.Errorf("Criteria for a started session = %v after %d model calls, want ErrSessionStarted and none", err, len(counting.Requests()))
	}
	if got, _ := h.Store.Session(context.Background(), s.ID); len(got.Criteria) != 0 {
		t.Errorf("criteria were written anyway: %+v", got.Criteria)
	}
}

func TestCriteriaCannotBeAttachedToAnEndedOrRunningSession(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	items := []criteria.Item{{ID: "E1", Text: "x", Category: "must"}}

	ended := h.Create(coordination.TeamSpec{Models: models})
	h.Run(ended.ID)
	if err := h.Service.AttachCriteria(context.Background(), ended.ID, items); !errors.Is(err, coordination.ErrSessionFinished) {
		t.Errorf("AttachCriteria to a finished session = %v, want ErrSessionFinished", err)
	}

	running := h.Create(coordination.TeamSpec{Models: models})
	unlock, err := h.Store.LockRun(context.Background(), running.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := h.Service.AttachCriteria(context.Background(), running.ID, items); !errors.Is(err, coordination.ErrSessionStarted) {
		t.Errorf("AttachCriteria while a run holds the session = %v, want ErrSessionStarted", err)
	}
}

func TestAttachingAgainBeforeTheFirstStepReplacesTheCriteria(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 2)
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models, Driver: coordination.DriverStep,
		Criteria: []criteria.Item{{ID: "E1", Text: "old", Category: "must"}}})
	// Load (and cache) the setup first, as a status call would.
	if _, err := h.Service.Status(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	if err := h.Service.AttachCriteria(context.Background(), s.ID, []criteria.Item{{ID: "N1", Text: "new", Category: "must"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Service.Step(context.Background(), coordination.StepRequest{SessionID: s.ID, AgentID: "agent_a"}); err != nil {
		t.Fatal(err)
	}
	prefix := scripts[0].Requests()[0].StablePrefix
	if !strings.Contains(prefix, "N1 [must] new") || strings.Contains(prefix, "old") {
		t.Errorf("the step used stale criteria:\n%s", prefix)
	}
}

func TestCriteriaWithoutAModelAreTheDefaultsAndSayWhy(t *testing.T) {
	h := coordtest.New(t, nil)
	set, err := h.Service.Criteria(context.Background(), coordination.CriteriaRequest{
		Task: "Write a Go function that reverses a string", Count: 3,
		NoModel: "no usable model: set OPENAI_API_KEY or ANTHROPIC_API_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	if set.Source != criteria.SourceDefault || set.Kind != criteria.KindCode || len(set.Items) != 3 ||
		!strings.Contains(set.Note, "set OPENAI_API_KEY") || !strings.Contains(set.Note, "built-in criteria for code tasks") {
		t.Errorf("set = %+v", set)
	}
}

func TestCriteriaFromSimJudgeTheSessionsOwnTask(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	simSpec, _ := providers.ParseSpec("sim")
	p, err := sim.New(simSpec)
	if err != nil {
		t.Fatal(err)
	}
	provs[simSpec.String()] = p
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Task: "Plan the migration of the billing database", Models: models, Driver: coordination.DriverStep})
	set, err := h.Service.Criteria(context.Background(), coordination.CriteriaRequest{SessionID: s.ID, Model: "sim", Count: 4})
	if err != nil {
		t.Fatal(err)
	}
	if set.Source != criteria.SourceGenerated || set.Kind != criteria.KindPlan || set.Model != "sim" || len(set.Items) != 4 ||
		!strings.Contains(set.Items[0].Text, "billing database") {
		t.Errorf("set = %+v", set)
	}
	got, _ := h.Store.Session(context.Background(), s.ID)
	if !reflect.DeepEqual(got.Criteria, set.Items) {
		t.Errorf("session criteria = %+v, want the generated set", got.Criteria)
	}
}

func TestCriteriaRequestsThatCannotBeServed(t *testing.T) {
	h := coordtest.New(t, nil)
	for name, tc := range map[string]struct {
		req  coordination.CriteriaRequest
		want error
	}{
		"no task":             {coordination.CriteriaRequest{}, coordination.ErrBadInput},
		"written and a count": {coordination.CriteriaRequest{Task: "t", Provided: written, Count: 5}, coordination.ErrBadInput},
		"written and a model": {coordination.CriteriaRequest{Task: "t", Provided: written, Model: "sim"}, coordination.ErrBadInput},
		"bad kind":            {coordination.CriteriaRequest{Task: "t", Kind: "poetry"}, criteria.ErrInvalid},
		"bad count":           {coordination.CriteriaRequest{Task: "t", Count: 12}, criteria.ErrInvalid},
		"two musts":           {coordination.CriteriaRequest{Task: "t", Provided: json.RawMessage(`[{"text":"a","category":"must"},{"text":"b","category":"must"}]`)}, criteria.ErrInvalid},
		"bad spec":            {coordination.CriteriaRequest{Task: "t", Model: "nope/"}, coordination.ErrBadSpec},
		"unknown session":     {coordination.CriteriaRequest{Task: "t", SessionID: "missing"}, coordination.ErrSessionNotFound},
	} {
		if _, err := h.Service.Criteria(context.Background(), tc.req); !errors.Is(err, tc.want) {
			t.Errorf("%s: Criteria = %v, want %v", name, err, tc.want)
		}
	}
}

// TestCriteriaAttachedElsewhereAfterAnUnsteppedRunAreSeen: a run keeps its
// setup while it runs, but a run that ends before any step lands must not
// keep it: criteria another process attaches then (here, another service on
// the same store) are in the next run's prompts.
func TestCriteriaAttachedElsewhereAfterAnUnsteppedRunAreSeen(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var prompts []string
	blocked := make(chan struct{}, 8)
	hang := true
	p := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		mu.Lock()
		prompts = append(prompts, req.Prompt)
		waits := hang
		mu.Unlock()
		if waits {
			blocked <- struct{}{}
			<-ctx.Done()
			return providers.Action{}, providers.Free(), ctx.Err()
		}
		if coordtest.HasTool(req, providers.ToolVote) && len(req.VoteEnum) > 0 {
			return coordtest.Vote(req.VoteEnum[0]), providers.Free(), nil
		}
		return coordtest.Answer("Answer: 4"), providers.Free(), nil
	})
	models, _, provs := coordtest.Team(t, 2)
	for _, m := range models {
		provs[m] = p
	}
	h := coordtest.New(t, provs)
	s := h.Create(coordination.TeamSpec{Models: models})
	r, _, err := h.Service.Start(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	<-blocked
	<-blocked
	r.Cancel()
	if _, err := r.Result(); err != nil {
		t.Fatal(err)
	}
	other := coordination.NewService(h.Store, coordination.Options{Open: h.Open})
	if err := other.AttachCriteria(ctx, s.ID, []criteria.Item{{ID: "E1", Text: "shows its working", Category: "must"}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	hang, prompts = false, nil
	mu.Unlock()
	h.Run(s.ID)
	mu.Lock()
	defer mu.Unlock()
	if len(prompts) == 0 || !strings.Contains(prompts[0], "shows its working") {
		t.Fatalf("the run after criteria were attached elsewhere prompted without them: %q", prompts)
	}
}
