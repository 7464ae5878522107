package coordination_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
)

// TestAStepsToolCallsBindAcrossATakeover: a step taken over from earlier
// tries that did not land (their step lease left unreleased: a process
// that died) has what they left of max_tool_calls_per_step, counted from
// the decisions their guards left in the permission log under the step's
// number and their claims' versions: their calls, refused ones included,
// but not a web search or a CLI's run settings, nor another agent's, an
// earlier step's, or those of a run of the step released before (a
// cancelled call). Tries that spent them all leave the model uncalled.
// Before, every takeover started the count again. A step after a released
// lease starts afresh.
func TestAStepsToolCallsBindAcrossATakeover(t *testing.T) {
	call := func(outcome permissions.Outcome) permissions.Record {
		return permissions.Record{Tool: "run_command", Action: permissions.Action{Kind: permissions.Exec, Target: "go test ./..."}, Outcome: outcome}
	}
	allowed, denied := call(permissions.Allowed), call(permissions.Denied)
	search := permissions.Record{Tool: "web_search", Action: permissions.Action{Kind: permissions.Net, Target: permissions.WebSearch}, Outcome: permissions.Allowed}
	settings := permissions.Record{Tool: permissions.RunSettingsTool("codex"), Action: permissions.Action{Kind: permissions.Exec, Target: "*"}, Outcome: permissions.Allowed}
	for _, tc := range []struct {
		name  string
		tries []leftTry // before the step, in order; their decisions the step's
		given int       // the MaxToolCalls the model is given; 0: not called
		says  string
	}{
		{"part of them used", []leftTry{{decided: []permissions.Record{allowed, denied, search, settings}}}, 1, ""},
		{"all of them used", []leftTry{{decided: []permissions.Record{allowed, call(permissions.Approved), call(permissions.Refused)}}}, 0,
			"the model was not called: its 3 tool calls (max_tool_calls_per_step) spent, 3 of them on earlier tries of the step that did not land"},
		{"two tries died", []leftTry{{owner: "first", decided: []permissions.Record{allowed}}, {owner: "second", decided: []permissions.Record{denied}}}, 1, ""},
		{"a released lease", []leftTry{{decided: []permissions.Record{allowed, allowed, allowed}, released: true}}, 3, ""},
		{"a cancelled run, then a try that died", []leftTry{{owner: "cancelled", decided: []permissions.Record{allowed, allowed}, released: true}, {decided: []permissions.Record{allowed}}}, 2, ""},
		{"none but searches and settings", []leftTry{{decided: []permissions.Record{search, settings}}}, 3, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := memstore.New()
			model := &callsGiven{}
			svc := coordination.NewService(st, coordination.Options{Logger: zerolog.Nop(), Open: model.open})
			ctx := context.Background()
			s := pairStepping(t, svc, coordination.Rules{MaxToolCallsPerStep: 3})
			agent, other := s.Agents[0].ID, s.Agents[1].ID
			lock, err := st.LockStep(ctx, s.ID, agent)
			if err != nil {
				t.Fatal(err)
			}
			step := lock.Step()
			lock.Release()
			for i, try := range tc.tries {
				var decided []permissions.Record
				for _, r := range try.decided {
					decided = append(decided, withStep(r, agent, step))
				}
				if i == len(tc.tries)-1 {
					// Two that are not this step's: another agent's, and
					// the agent's previous step's.
					decided = append(decided, withStep(allowed, other, step), withStep(allowed, agent, step-1))
				}
				try.decided, try.tried = decided, 20*time.Millisecond
				leaveTry(t, st, s.ID, agent, try)
			}

			res, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent})
			if err != nil {
				t.Fatal(err)
			}
			given := model.list()
			switch {
			case tc.given == 0:
				if len(given) != 0 || res.Action != "error" || res.ErrorClass != string(providers.ClassToolCalls) || res.Message != tc.says {
					t.Errorf("the step taken over from tries that made every call: the model was given %v; the step %s %s %q; want no call, and an error of class %s that says %q",
						given, res.Action, res.ErrorClass, res.Message, providers.ClassToolCalls, tc.says)
				}
			case len(given) != 1 || given[0] != tc.given || res.Action != "new_answer":
				t.Errorf("the model was given %v tool calls, and the step %s %q; want [%d] and an answer", given, res.Action, res.Message, tc.given)
			}
		})
	}
}

func withStep(r permissions.Record, agent string, step int) permissions.Record {
	r.Agent, r.Step = agent, step
	return r
}

// callsGiven is a model that answers at once, keeping the MaxToolCalls
// each of its calls was given.
type callsGiven struct {
	mu    sync.Mutex
	given []int
}

func (m *callsGiven) open(providers.Spec) (providers.Provider, error) {
	return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		m.mu.Lock()
		m.given = append(m.given, req.MaxToolCalls)
		m.mu.Unlock()
		return coordtest.Answer("Answer: 391"), providers.Free(), nil
	}), nil
}

func (m *callsGiven) list() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.given)
}

// TestAStepsTakeoverCountsCallsOnlyWhereItsLogIsRead: a permission log
// that cannot be read is logged, and the step runs with its whole limit,
// as before the carry, rather than not at all.
func TestAStepsTakeoverCountsCallsOnlyWhereItsLogIsRead(t *testing.T) {
	st := &unreadableLog{Store: memstore.New()}
	model := &callsGiven{}
	logged := &coordtest.SyncBuffer{}
	svc := coordination.NewService(st, coordination.Options{Logger: zerolog.New(logged), Open: model.open})
	ctx := context.Background()
	s := pairStepping(t, svc, coordination.Rules{MaxToolCallsPerStep: 3})
	agent := s.Agents[0].ID
	leaveTry(t, st, s.ID, agent, leftTry{tried: 20 * time.Millisecond})
	if _, err := svc.Step(ctx, coordination.StepRequest{SessionID: s.ID, AgentID: agent}); err != nil {
		t.Fatal(err)
	}
	if given := model.list(); len(given) != 1 || given[0] != 3 || !strings.Contains(logged.String(), "could not read the permission log") {
		t.Errorf("with the log unreadable the model was given %v tool calls; want [3], and the failure logged: %s", given, logged.String())
	}
}

// unreadableLog is a store whose permission log cannot be read.
type unreadableLog struct{ *memstore.Store }

func (s *unreadableLog) Permissions(ctx context.Context, id string) ([]permissions.Record, error) {
	return nil, errors.New("reading permissions.jsonl: input/output error")
}
