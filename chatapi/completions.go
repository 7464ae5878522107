package chatapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// complete answers one chat completion: the session is created (or, named by
// massgen_session_id, resumed or joined), its run started or joined, its
// progress relayed, and its result turned into a completion.
func (h *Handler) complete(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	svc := h.host.RequestService(ctx)
	fail := func(err error) { shown(ctx, svc, err).write(w) }
	if refused := notJSON(r); refused != nil {
		fail(refused)
		return
	}

	var req request
	body, err := io.ReadAll(r.Body) // bufferBody has it in memory, size-capped
	if err != nil {
		fail(badRequest("", "the request body could not be read"))
		return
	}
	if err := json.Unmarshal(body, &req); err != nil {
		fail(badRequest("", "the body is not a chat completion request: "+err.Error()))
		return
	}
	if req.SessionID != "" && coordination.CheckSessionID(req.SessionID) != nil {
		// Checked here, not left to the store, so the refusal names the
		// field as OpenAI's do.
		shownID := req.SessionID
		if len(shownID) > 80 {
			shownID = shownID[:80] + "…"
		}
		fail(badRequest("massgen_session_id", fmt.Sprintf("massgen_session_id %q is not a session id: use 1 to 64 letters, digits, '_' or '-'", shownID)))
		return
	}
	team, err := h.team(svc, req.Model)
	if err != nil {
		fail(err)
		return
	}
	if err := unkept(req); err != nil {
		fail(err)
		return
	}
	task, convo, err := conversation(req.Messages)
	if err != nil {
		fail(err)
		return
	}
	// The model name is the session's name for its team: a stored session
	// asked for under another is refused (shown), since its answer would
	// go out labelled with a team that did not give it. "massgen" and a
	// team file are different names even with the same agents, and a
	// session keeps the agents it was created with whatever the name's
	// team is now.
	s, err := svc.CreateOrResume(ctx, coordination.RunRequest{
		SessionID: req.SessionID, Task: task, Team: true, TeamName: req.Model,
		Spec: func() (coordination.TeamSpec, error) {
			if _, err := svc.DefaultTeam(); team == "" && err != nil {
				return coordination.TeamSpec{}, h.noDefaultTeam(svc)
			}
			spec, err := h.host.TeamSpec(team, task, convo)
			spec.SessionID, spec.TeamName = req.SessionID, req.Model
			return spec, err
		},
	})
	if refused := h.budgetRefusal(svc, err, team); refused != nil {
		fail(refused)
		return
	}
	if err != nil {
		fail(err)
		return
	}
	if err := sameConversation(s, convo); err != nil {
		fail(err)
		return
	}

	var out reply = &whole{w: w}
	base := completion{ID: "chatcmpl-" + s.ID, Created: time.Now().Unix(), Model: req.Model}
	if req.Stream {
		out = newStream(w, base)
	}
	// A named session that has ended is answered as it stands: running it
	// again would change nothing.
	if res, err := svc.Result(ctx, s.ID); err == nil && (res.Status == coordination.StatusFinished || res.Status == coordination.StatusFailed) {
		out.begin(s.ID)
		answer(out, base, res, team)
		return
	}

	// Subscribed before the run starts: with fast models a run can end
	// before a later Subscribe. Not ended by the request: what a run tells
	// while it is cancelled is still read.
	heard, err := svc.Subscribe(context.WithoutCancel(ctx), coordination.Filter{Sessions: []string{s.ID}, Kinds: []coordination.ObservationKind{coordination.ObservedProgress}})
	if err != nil {
		// A session this request created must not be left to read
		// interrupted a minute on, for a replica to run unasked.
		_ = svc.StartRefused(ctx, s.ID, fmt.Errorf("its progress could not be followed: %w", err))
		fail(err)
		return
	}
	defer heard.Close()
	run, started, err := h.start(ctx, svc, s.ID)
	if err != nil {
		fail(err)
		return
	}
	// Only the request that started the run, and did not name its session
	// to come back to, cancels it by going away; one that joined a run
	// started by another just stops waiting.
	owner := started && req.SessionID == ""
	out.begin(s.ID)
	keepAlive := time.NewTicker(h.opts.KeepAlive)
	defer keepAlive.Stop()
waiting:
	for {
		select {
		case <-heard.Ready():
			tell(out, heard.Take())
		case <-run.Done():
			break waiting
		case <-keepAlive.C:
			out.keepAlive()
		case <-ctx.Done():
			if owner {
				run.CallerLeft()
				<-run.Done()
				h.opts.Logger.Info().Str("session", s.ID).Msg("chat client went away; its team is cancelled")
			}
			return
		}
	}
	tell(out, heard.Take()) // published before the run ended: all of it is queued
	res, err := run.Result()
	if err != nil {
		// The run stopped without a result of its own (cancel_team or
		// finalize_team from another request, a session already finished,
		// a failure): the session says how it stands.
		if res, err = svc.Result(context.WithoutCancel(ctx), s.ID); err != nil {
			out.fail(shown(ctx, svc, err))
			return
		}
	}
	answer(out, base, res, team)
}

// answer sends a result: its final answer, or the error of a run that ended
// without one.
func answer(out reply, base completion, res *coordination.TeamResult, team string) {
	if res.FinalAnswer == nil {
		if e := upstreamFailed(res); e != nil {
			out.fail(e)
			return
		}
		out.fail(noAnswer(res, chatPlace.Outcome(res)))
		return
	}
	out.finish(base, res, team)
}

// start starts the session's run, or joins the one going on, or follows
// the one another replica sharing the store holds, as the same request
// sent to that replica would join it (coordination.Service.StartOrFollow:
// a run slot is taken only for a run started here, and a followed run
// whose holder stops is taken up here). A session this request created
// and whose run is refused reads cancelled, saying why: left, it would
// read interrupted once coordination.NeverStartedGrace had passed, and a
// server resuming those would run the team this request was refused.
func (h *Handler) start(ctx context.Context, svc *coordination.Service, id string) (*coordination.Run, bool, error) {
	run, started, err := svc.StartOrFollow(ctx, id, h.host.AcquireRun, true)
	if ns, ok := errors.AsType[*coordination.NotStartedError](err); ok && ns.AtLimit {
		e := refusal(http.StatusTooManyRequests, "rate_limit_error", "too_many_runs", "", fmt.Sprintf("%s; call again in %d s", err, int(coordination.RunSlotRetry.Seconds())))
		e.retryAfter = coordination.RunSlotRetry
		return nil, false, e
	}
	return run, started, err
}

func tell(out reply, heard []coordination.Observation) {
	for _, o := range heard {
		out.progress(o.Progress.Message)
	}
}

// reply is how a completion goes out: whole (one JSON object) or streamed.
type reply interface {
	begin(session string)
	progress(msg string)
	keepAlive()
	fail(*httpError)
	finish(base completion, res *coordination.TeamResult, team string)
}

// trace is the coordination trace after the run: the summary of who
// answered, the votes and how the winner was chosen, as every surface
// renders it (report), its advice in this surface's words (chatPlace).
func trace(res *coordination.TeamResult) string {
	return chatPlace.Summary(res)
}

func finishUsage(res *coordination.TeamResult) *usage {
	u := res.Usage
	return &usage{
		PromptTokens: u.Input, CompletionTokens: u.Output, TotalTokens: u.Input + u.Output,
		PromptTokensDetails:     promptDetails{CachedTokens: u.CachedInput},
		CompletionTokensDetails: completionInfo{ReasoningTokens: u.Reasoning},
	}
}

func finishMetadata(res *coordination.TeamResult, team string) *metadata {
	m := &metadata{
		SessionID: res.SessionID, Team: team, Status: res.Status,
		HowChosen: coordination.Deref(res.HowChosen), CostUSD: res.CostUSD, CostEstimated: res.CostEstimated,
		Steps: res.Steps, Seconds: res.Duration,
	}
	if m.Team == "" {
		m.Team = "default"
	}
	if res.StopReason != nil {
		m.StopReason = string(*res.StopReason)
	}
	if res.Winner != nil {
		m.Winner, m.WinnerModel = res.Winner.AgentID, res.Winner.Model
	}
	return m
}

var stop = "stop"

// whole collects the progress and answers with one chat.completion.
type whole struct {
	w     http.ResponseWriter
	lines []string
}

func (o *whole) begin(string)        {}
func (o *whole) keepAlive()          {}
func (o *whole) progress(msg string) { o.lines = append(o.lines, msg) }
func (o *whole) fail(e *httpError)   { e.write(o.w) }

func (o *whole) finish(c completion, res *coordination.TeamResult, team string) {
	c.Object = "chat.completion"
	reasoning := trace(res)
	if len(o.lines) > 0 {
		reasoning = strings.Join(o.lines, "\n") + "\n\n" + reasoning
	}
	c.Choices = []choice{{Message: &turn{Role: "assistant", Content: *res.FinalAnswer, ReasoningContent: reasoning}, FinishReason: &stop}}
	c.Usage, c.Metadata = finishUsage(res), finishMetadata(res, team)
	o.w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(o.w).Encode(c)
}

// stream sends server-sent events: a first chunk with the role and the
// session's id, the progress as reasoning_content, then the trace, the
// answer as content, a last chunk with the finish reason, usage and
// metadata, and [DONE].
type stream struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	base completion
}

func newStream(w http.ResponseWriter, base completion) *stream {
	base.Object = "chat.completion.chunk"
	return &stream{w: w, rc: http.NewResponseController(w), base: base}
}

func (o *stream) chunk(d turn, finish *string, u *usage, m *metadata) {
	c := o.base
	c.Choices = []choice{{Delta: &d, FinishReason: finish}}
	c.Usage, c.Metadata = u, m
	o.data(c)
}

func (o *stream) data(v any) {
	b, _ := json.Marshal(v)
	o.write("data: " + string(b) + "\n\n")
}

// streamWriteTimeout bounds one write of a stream: a client that stopped
// reading (its socket's buffers full) held the handler in its write until
// TCP gave up. Past it the write fails, and so does every later one at
// once; the handler ends with the run it follows.
var streamWriteTimeout = 30 * time.Second

func (o *stream) write(s string) {
	_ = o.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	_, _ = io.WriteString(o.w, s)
	_ = o.rc.Flush()
}

func (o *stream) begin(session string) {
	o.w.Header().Set("Content-Type", "text/event-stream")
	o.w.Header().Set("Cache-Control", "no-cache")
	o.w.WriteHeader(http.StatusOK)
	o.chunk(turn{Role: "assistant"}, nil, nil, &metadata{SessionID: session})
}

func (o *stream) progress(msg string) { o.chunk(turn{ReasoningContent: msg + "\n"}, nil, nil, nil) }

// keepAlive is an SSE comment, which clients skip.
func (o *stream) keepAlive() { o.write(": keep-alive\n\n") }

// fail ends the stream with OpenAI's error event: the status line is long
// sent, and OpenAI's clients read an "error" member as the stream's error.
func (o *stream) fail(e *httpError) {
	o.data(map[string]apiError{"error": e.body})
	o.write("data: [DONE]\n\n")
}

func (o *stream) finish(_ completion, res *coordination.TeamResult, team string) {
	o.chunk(turn{ReasoningContent: "\n" + trace(res)}, nil, nil, nil)
	o.chunk(turn{Content: *res.FinalAnswer}, nil, nil, nil)
	o.chunk(turn{}, &stop, finishUsage(res), finishMetadata(res, team))
	o.write("data: [DONE]\n\n")
}
