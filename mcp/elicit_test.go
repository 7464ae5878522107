package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
)

// user is a client's user as the tests play them: reply decides each answer,
// and every question asked is kept.
type user struct {
	mu    sync.Mutex
	asked []mcpgo.ElicitationParams
	reply func(n int, q mcpgo.ElicitationParams) *mcpgo.ElicitationResult
}

func (u *user) Elicit(_ context.Context, req mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	u.mu.Lock()
	n := len(u.asked)
	u.asked = append(u.asked, req.Params)
	u.mu.Unlock()
	return u.reply(n, req.Params), nil
}

func (u *user) questions() []mcpgo.ElicitationParams {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.asked)
}

func replyWith(action mcpgo.ElicitationResponseAction, content map[string]any) *mcpgo.ElicitationResult {
	return &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: action, Content: content}}
}

// inProcessAsking connects a client whose user answers questions (u nil: a
// client that declares no elicitation). legacy keeps it on 2025-11-25, where
// mcp-go turns the server's input_required into elicitation/create; else it
// speaks 2026-07-28 and its own driver answers input_required.
func inProcessAsking(t testing.TB, s *Server, legacy bool, u *user) *client.Client {
	t.Helper()
	var opts []client.ClientOption
	if legacy {
		opts = append(opts, client.WithProtocolVersion(mcpgo.LATEST_LEGACY_PROTOCOL_VERSION))
	}
	if u != nil {
		opts = append(opts, client.WithElicitationHandler(u))
	}
	c, err := client.NewInProcessClientWithOptions(s.MCPServer(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcpgo.InitializeRequest
	init.Params.ClientInfo = mcpgo.Implementation{Name: "test", Version: "0"}
	if legacy {
		init.Params.ProtocolVersion = mcpgo.LATEST_LEGACY_PROTOCOL_VERSION
		if u != nil {
			init.Params.Capabilities.Elicitation = &mcpgo.ElicitationCapability{}
		}
	}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func eras() []struct {
	name   string
	legacy bool
} {
	return []struct {
		name   string
		legacy bool
	}{{"2025-11-25 elicitation/create", true}, {"2026-07-28 input_required", false}}
}

const safeChange = "Fix a typo in the README of my local project."

type confirmedResult struct {
	checkpoint.Result
	Confirmation *string `json:"confirmation"`
}

func TestCheckpointConfirmAsksTheUserBeforeAProceed(t *testing.T) {
	for _, era := range eras() {
		for _, action := range []mcpgo.ElicitationResponseAction{mcpgo.ElicitationResponseActionAccept, mcpgo.ElicitationResponseActionDecline, mcpgo.ElicitationResponseActionCancel} {
			t.Run(era.name+"/"+string(action), func(t *testing.T) {
				u := &user{reply: func(int, mcpgo.ElicitationParams) *mcpgo.ElicitationResult {
					return replyWith(action, map[string]any{})
				}}
				c := inProcessAsking(t, newMemServer(t, Options{}), era.legacy, u)
				res := callTool(t, c, "checkpoint", mustJSON(map[string]any{"objective": safeChange, "models": []string{"sim/strong", "sim", "sim"}, "confirm": true}))
				var cr confirmedResult
				decode(t, res, &cr)
				if cr.Verdict == nil || *cr.Verdict != checkpoint.VerdictProceed {
					t.Fatalf("a safe change proceeds: %s", text(res))
				}
				if cr.Confirmation == nil || *cr.Confirmation != string(action) {
					t.Fatalf("confirmation %v, want %s: %s", cr.Confirmation, action, text(res))
				}
				asked := u.questions()
				if len(asked) != 1 || !strings.Contains(asked[0].Message, safeChange) || !strings.Contains(asked[0].Message, cr.SessionID) {
					t.Fatalf("the user is asked once, about the objective and the checkpoint: %+v", asked)
				}
				want := map[mcpgo.ElicitationResponseAction]string{"accept": "The user confirmed", "decline": "The user declined", "cancel": "The user cancelled"}[action]
				if !strings.Contains(text(res), want) {
					t.Fatalf("text lacks %q:\n%s", want, text(res))
				}
				// The retry read the review; it did not run another one.
				list, err := newServiceSessions(t, c)
				if err != nil || list != 1 {
					t.Fatalf("sessions after a confirmed checkpoint: %d (%v), want 1", list, err)
				}
			})
		}
	}
}

// newServiceSessions counts the sessions the massgen://sessions resource
// lists.
func newServiceSessions(t testing.TB, c *client.Client) (int, error) {
	t.Helper()
	res, err := c.ReadResource(context.Background(), mcpgo.ReadResourceRequest{Params: mcpgo.ReadResourceParams{URI: "massgen://sessions"}})
	if err != nil {
		return 0, err
	}
	body := res.Contents[0].(mcpgo.TextResourceContents).Text
	return strings.Count(body, `"session_id"`), nil
}

func TestCheckpointConfirmAsksNothingWhenTheVerdictIsNotProceed(t *testing.T) {
	u := &user{reply: func(int, mcpgo.ElicitationParams) *mcpgo.ElicitationResult { return replyWith("accept", nil) }}
	c := inProcessAsking(t, newMemServer(t, Options{}), true, u)
	res := callTool(t, c, "checkpoint", mustJSON(map[string]any{"objective": "Drop the legacy_orders table from the production database.", "models": []string{"sim/strong", "sim", "sim"}, "confirm": true}))
	var cr confirmedResult
	decode(t, res, &cr)
	if cr.Verdict == nil || *cr.Verdict == checkpoint.VerdictProceed || cr.Confirmation != nil || len(u.questions()) != 0 {
		t.Fatalf("a revise is returned without asking: asked %d, %s", len(u.questions()), text(res))
	}
}

func TestCheckpointConfirmNeedsAClientThatCanAsk(t *testing.T) {
	for _, era := range eras() {
		t.Run(era.name, func(t *testing.T) {
			c := inProcessAsking(t, newMemServer(t, Options{}), era.legacy, nil)
			res := callTool(t, c, "checkpoint", mustJSON(map[string]any{"objective": safeChange, "models": []string{"sim/strong", "sim", "sim"}, "confirm": true}))
			if !res.IsError || errorCode(res) != "cannot_ask_user" || !strings.Contains(text(res), "elicitation") {
				t.Fatalf("confirm from a client without elicitation must be refused, naming what it lacks: %s", text(res))
			}
			if n, _ := newServiceSessions(t, c); n != 0 {
				t.Fatalf("the refusal comes before the review: %d sessions", n)
			}
		})
	}
}

func errorCode(res *mcpgo.CallToolResult) string {
	if res.Meta == nil {
		return ""
	}
	code, _ := res.Meta.AdditionalFields["massgen/error"].(string)
	return code
}

// aHuman answers the way a person in a team might: an answer when only
// that is asked, a vote for the first choice when a vote is possible.
func aHuman(answer string) func(int, mcpgo.ElicitationParams) *mcpgo.ElicitationResult {
	return func(_ int, q mcpgo.ElicitationParams) *mcpgo.ElicitationResult {
		props := formOf(q)["properties"].(map[string]any)
		if vote, ok := props["vote"].(map[string]any); ok {
			choices := vote["enum"].([]any)
			return replyWith("accept", map[string]any{"vote": choices[0], "reason": "it is right"})
		}
		return replyWith("accept", map[string]any{"answer": answer})
	}
}

// formOf is a question's form as JSON reads it (an in-process server hands
// over its Go values as they are).
func formOf(q mcpgo.ElicitationParams) map[string]any {
	var out map[string]any
	body, _ := json.Marshal(q.RequestedSchema)
	_ = json.Unmarshal(body, &out)
	return out
}

func TestHumanAgentIsAskedForItsAnswerAndItsVote(t *testing.T) {
	for _, era := range eras() {
		t.Run(era.name, func(t *testing.T) {
			u := &user{reply: aHuman("391")}
			c := inProcessAsking(t, newMemServer(t, Options{}), era.legacy, u)
			res := callTool(t, c, "run_team", mustJSON(map[string]any{
				"task":   "What is 17 * 23?",
				"agents": []map[string]any{{"id": "me", "model": "human"}, {"id": "bot_a", "model": "sim/strong"}, {"id": "bot_b", "model": "sim/strong"}},
				"wait":   true,
				"detail": "full", // answers whole: results are brief by default
			}))
			var tr coordination.TeamResult
			decode(t, res, &tr)
			if tr.Status != coordination.StatusFinished {
				t.Fatalf("the team with a person finishes: %s", text(res))
			}
			asked := u.questions()
			if len(asked) < 2 {
				t.Fatalf("the person is asked for an answer, then for a vote: %d questions", len(asked))
			}
			first := formOf(asked[0])
			if props := first["properties"].(map[string]any); props["vote"] != nil || props["answer"] == nil || !strings.Contains(asked[0].Message, "17 * 23") {
				t.Fatalf("the first (blind) question asks only for an answer, with the task: %+v", asked[0])
			}
			var voted bool
			for _, q := range asked[1:] {
				props := formOf(q)["properties"].(map[string]any)
				vote, ok := props["vote"].(map[string]any)
				if !ok {
					continue
				}
				voted = true
				choices := fmt.Sprint(vote["enum"])
				for _, alias := range []string{"agent1", "agent2", "agent3"} {
					if !strings.Contains(choices, alias) || !strings.Contains(q.Message, "["+alias+"]") {
						t.Fatalf("a vote's choices are the shown answers' aliases, each summarised: enum %s, message:\n%s", choices, q.Message)
					}
				}
			}
			if !voted {
				t.Fatalf("the person was never offered a vote: %+v", asked)
			}
			var mine *coordination.AnswerView
			for i := range tr.Answers {
				if tr.Answers[i].AgentID == "me" {
					mine = &tr.Answers[i]
				}
			}
			if mine == nil || !strings.Contains(mine.Content, "391") {
				t.Fatalf("the person's answer is in the ledger: %+v", tr.Answers)
			}
		})
	}
}

func TestHumanAgentThatDeclinesFailsItsStepsAndIsDropped(t *testing.T) {
	u := &user{reply: func(int, mcpgo.ElicitationParams) *mcpgo.ElicitationResult { return replyWith("decline", nil) }}
	c := inProcessAsking(t, newMemServer(t, Options{}), false, u)
	res := callTool(t, c, "run_team", mustJSON(map[string]any{
		"task":   "What is 17 * 23?",
		"agents": []map[string]any{{"id": "me", "model": "human"}, {"id": "bot_a", "model": "sim/strong"}, {"id": "bot_b", "model": "sim/strong"}},
		"wait":   true,
	}))
	var tr coordination.TeamResult
	decode(t, res, &tr)
	if tr.Status != coordination.StatusFinished || tr.Winner == nil || tr.Winner.AgentID == "me" {
		t.Fatalf("the models finish without the person: %s", text(res))
	}
	if n := len(u.questions()); n != 2 {
		t.Fatalf("a person who declines is asked max_agent_failures (2) times, then dropped: asked %d", n)
	}
	if !strings.Contains(text(res), "declined") {
		t.Fatalf("the result says the person declined:\n%s", text(res))
	}
}

func TestHumanAgentNeedsAClientThatCanAsk(t *testing.T) {
	for _, era := range eras() {
		t.Run(era.name, func(t *testing.T) {
			c := inProcessAsking(t, newMemServer(t, Options{}), era.legacy, nil)
			res := callTool(t, c, "run_team", mustJSON(map[string]any{"task": "What is 17 * 23?", "models": []string{"human", "sim/strong"}, "wait": true}))
			if !res.IsError || errorCode(res) != "cannot_ask_user" || !strings.Contains(text(res), "human agents (human)") || !strings.Contains(text(res), "elicitation") {
				t.Fatalf("a human agent with a client that cannot ask is refused, naming what it lacks: %s", text(res))
			}
			if n, _ := newServiceSessions(t, c); n != 0 {
				t.Fatalf("the refusal comes before the session is written: %d sessions", n)
			}
		})
	}
}

func TestHumanBackendIsListed(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	res := callTool(t, c, "list_backends", `{}`)
	if !strings.Contains(text(res), "| human | yes | a person, asked each step through an MCP client that declared elicitation") {
		t.Fatalf("list_backends lacks the human backend:\n%s", text(res))
	}
}

func TestAHumanAgentCostsNothingInAnEstimate(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	res := callTool(t, c, "run_team", mustJSON(map[string]any{"task": "What is 17 * 23?", "models": []string{"human", "sim/strong"}, "estimate": true}))
	if res.IsError || strings.Contains(text(res), "no list price") || !strings.Contains(text(res), "agent_a (human): prompt ~") {
		t.Fatalf("an estimate prices a person at zero, not as a model without a list price:\n%s", text(res))
	}
}
