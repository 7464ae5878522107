package mcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// Human agents (backend human, providers/human) are people asked through the
// client that runs their team. A human agent's step runs in the run's
// goroutine, long after and apart from any request, so it cannot ask the
// client itself: it posts its question here and waits. A run_team call
// waiting on the session (runwait.go) returns the open questions as an
// input_required result (elicit.go); the client's retry brings the replies,
// which are handed to the waiting steps, and waits on the run again. A
// question nobody collects waits as long as the step may (the session's
// step_timeout_seconds), then fails the step.

// questions are the open questions of human agents, by tenant and session.
// An entry lives while a question is open or a call waits on the session,
// so the map holds no more than the sessions being asked or waited on.
type questions struct {
	mu   sync.Mutex
	seq  int
	byID map[string]*asking
}

// asking is one session's open questions and who waits for them.
type asking struct {
	open    map[string]*question
	posted  chan struct{} // closed when a question is posted, then replaced
	waiters int
}

type question struct {
	params mcpgo.ElicitationParams
	reply  chan providers.Reply // buffered: the first reply wins
}

func newQuestions() *questions { return &questions{byID: map[string]*asking{}} }

func questionsKey(tenant, session string) string { return tenant + "\x00" + session }

// entry returns a session's entry, made if need be (under mu).
func (qs *questions) entry(key string) *asking {
	a, ok := qs.byID[key]
	if !ok {
		a = &asking{open: map[string]*question{}, posted: make(chan struct{})}
		qs.byID[key] = a
	}
	return a
}

// tidy lets a session's entry go once nothing is open or waited on (under mu).
func (qs *questions) tidy(key string) {
	if a, ok := qs.byID[key]; ok && len(a.open) == 0 && a.waiters == 0 {
		delete(qs.byID, key)
	}
}

// asker is the providers.Asker of a session's human agents: it posts the
// question and waits for its reply or for the step's end.
func (qs *questions) asker(tenant, session string) providers.Asker {
	key := questionsKey(tenant, session)
	return func(ctx context.Context, q providers.Question) (providers.Reply, error) {
		qs.mu.Lock()
		qs.seq++
		id := "human_" + strconv.Itoa(qs.seq)
		a := qs.entry(key)
		mine := &question{params: mcpgo.ElicitationParams{Message: q.Message, RequestedSchema: q.Schema}, reply: make(chan providers.Reply, 1)}
		a.open[id] = mine
		close(a.posted)
		a.posted = make(chan struct{})
		qs.mu.Unlock()
		defer func() {
			qs.mu.Lock()
			delete(qs.byID[key].open, id)
			qs.tidy(key)
			qs.mu.Unlock()
		}()
		select {
		case r := <-mine.reply:
			return r, nil
		case <-ctx.Done():
			return providers.Reply{}, fmt.Errorf("nobody answered the question: %w", context.Cause(ctx))
		}
	}
}

// watch keeps a session's entry while a call waits on it; release ends
// the watch.
func (qs *questions) watch(tenant, session string) (release func()) {
	key := questionsKey(tenant, session)
	qs.mu.Lock()
	defer qs.mu.Unlock()
	a := qs.entry(key)
	a.waiters++
	return sync.OnceFunc(func() {
		qs.mu.Lock()
		defer qs.mu.Unlock()
		a.waiters--
		qs.tidy(key)
	})
}

// posted is ready once the session has an open question: at once if it has
// one now. A watched session's channel is its entry's; an unwatched one's is
// never ready.
func (qs *questions) posted(tenant, session string) <-chan struct{} {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	a, ok := qs.byID[questionsKey(tenant, session)]
	switch {
	case !ok:
		return nil
	case len(a.open) > 0:
		done := make(chan struct{})
		close(done)
		return done
	}
	return a.posted
}

// pending are a session's open questions, by id.
func (qs *questions) pending(tenant, session string) map[string]mcpgo.ElicitationParams {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	a, ok := qs.byID[questionsKey(tenant, session)]
	if !ok || len(a.open) == 0 {
		return nil
	}
	out := make(map[string]mcpgo.ElicitationParams, len(a.open))
	for id, q := range a.open {
		out[id] = q.params
	}
	return out
}

// answer hands a reply to an open question; a question no longer open (its
// step ended) or answered already takes none.
func (qs *questions) answer(tenant, session, id string, r providers.Reply) bool {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	a, ok := qs.byID[questionsKey(tenant, session)]
	if !ok {
		return false
	}
	q, ok := a.open[id]
	if !ok {
		return false
	}
	// Answered is no longer open: a call that waits on the session now must
	// not return it as a question again.
	delete(a.open, id)
	q.reply <- r // buffered, and only the one who deletes it sends
	return true
}

// humanAgents names a team's human agents.
func humanAgents(agents []coordination.Agent, models []string) []string {
	var out []string
	for _, a := range agents {
		if a.IsHuman() {
			out = append(out, a.ID+" ("+providers.ShowSpec(a.Model)+")")
		}
	}
	for _, m := range models {
		if isHuman(m) {
			out = append(out, m)
		}
	}
	return out
}

func isHuman(model string) bool {
	sp, err := providers.ParseSpec(model)
	return err == nil && sp.Backend == "human"
}

// canAskHumans refuses a team with human agents when the call's client
// cannot ask its user: before anything is written or run.
func canAskHumans(ctx context.Context, agents []coordination.Agent, models []string) error {
	humans := humanAgents(agents, models)
	if len(humans) == 0 {
		return nil
	}
	if err := canElicit(ctx); err != nil {
		return fmt.Errorf("the team has human agents (%s), asked through the client: %w", strings.Join(humans, ", "), err)
	}
	return nil
}

// askingHumans is ctx for a run of a session with human agents, or whose
// client can ask its user: human agents' steps, and an agent's ask for
// approval (coordination/permissions.go), ask through the session's
// questions.
func (h *handler) askingHumans(ctx context.Context, s *coordination.Session) context.Context {
	if len(humanAgents(s.Agents, nil)) == 0 && canElicit(ctx) != nil {
		return ctx
	}
	if ask := h.svc(ctx).SharedAsker(s.ID); ask != nil {
		// Kept by the store (PostgreSQL): a call on any replica finds them.
		return providers.WithAsker(ctx, ask)
	}
	return providers.WithAsker(ctx, h.questions.asker(tenantOf(ctx), s.ID))
}

// sharedQuestionsPoll is how often a call waiting on a session reads a
// store that shares questions for new ones.
const sharedQuestionsPoll = 500 * time.Millisecond

// openQuestions are session id's open questions: the store's when it shares
// them with the other replicas, else this server's.
func (h *handler) openQuestions(ctx context.Context, id string) map[string]mcpgo.ElicitationParams {
	svc := h.svc(ctx)
	if !svc.SharesQuestions() {
		return h.questions.pending(tenantOf(ctx), id)
	}
	qs, err := svc.OpenQuestions(ctx, id)
	if err != nil {
		h.log.Warn().Err(err).Str("session", id).Msg("could not read the session's open questions")
		return nil
	}
	if len(qs) == 0 {
		return nil
	}
	out := make(map[string]mcpgo.ElicitationParams, len(qs))
	for _, q := range qs {
		out[q.ID] = mcpgo.ElicitationParams{Message: q.Message, RequestedSchema: q.Schema}
	}
	return out
}

// answerQuestion hands a reply to an open question of session, where it is
// kept; false if it is no longer open.
func (h *handler) answerQuestion(ctx context.Context, session, id string, r providers.Reply) bool {
	svc := h.svc(ctx)
	if !svc.SharesQuestions() {
		return h.questions.answer(tenantOf(ctx), session, id, r)
	}
	err := svc.AnswerQuestion(ctx, session, id, r)
	if err != nil && !errors.Is(err, coordination.ErrNoQuestion) {
		h.log.Warn().Err(err).Str("session", session).Str("question", id).Msg("could not store a reply")
	}
	return err == nil
}

// deliverReplies hands the replies a retry of run_team brings to the steps
// that asked.
func (h *handler) deliverReplies(ctx context.Context, req mcpgo.CallToolRequest, session string) {
	for id := range req.Params.InputResponses {
		r := server.ElicitationResponse(req.Params.InputResponses, id)
		if r == nil {
			continue
		}
		content, _ := r.Content.(map[string]any)
		if !h.answerQuestion(ctx, session, id, providers.Reply{Action: replyAction(r), Content: content}) {
			h.log.Info().Str("session", session).Str("question", id).Msg("a reply came for a question no longer open")
		}
	}
}

// askHumans is the input_required result asking the session's open
// questions, or nil when there are none or this call has asked enough
// (maxAsksPerCall: the caller then returns the run as it stands).
func (h *handler) askHumans(ctx context.Context, id string, round int) *mcpgo.CallToolResult {
	if round >= maxAsksPerCall || canElicit(ctx) != nil {
		return nil
	}
	open := h.openQuestions(ctx, id)
	if len(open) == 0 {
		return nil
	}
	return inputRequired(roundState{Session: id, Round: round + 1}.String(), open)
}
