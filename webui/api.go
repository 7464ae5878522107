package webui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
)

// sessionRow is one line of the session list.
type sessionRow struct {
	ID       string `json:"id"`
	Task     string `json:"task"`
	Status   string `json:"status"`
	Agents   int    `json:"agents"`
	Steps    int    `json:"steps"`
	Winner   string `json:"winner,omitempty"`
	Cost     string `json:"cost"`
	Created  string `json:"created"`
	Duration string `json:"duration"`
}

// pageSize is the session list's page.
const pageSize = 100

func (h *Handler) listSessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	offset, _ := strconv.Atoi(q.Get("offset"))
	page, err := h.host.RequestService(r.Context()).ListSessions(r.Context(), coordination.SessionQuery{
		Status: q.Get("status"), Text: q.Get("q"), Offset: max(offset, 0), Limit: pageSize,
	})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	out := struct {
		Sessions []sessionRow `json:"sessions"`
		Total    int          `json:"total"`
		Next     int          `json:"next_offset,omitempty"`
		// Unreadable is how many sessions the page could not read
		// (coordination.SessionPage.Unreadable): the page says so, as its
		// rows are fewer than the span it covers.
		Unreadable int `json:"unreadable,omitempty"`
		// Limit is the page's size, for the page before this one.
		Limit int `json:"limit"`
	}{Sessions: []sessionRow{}, Total: page.Total, Next: page.Next, Unreadable: page.Unreadable, Limit: pageSize}
	for _, s := range page.Sessions {
		row := sessionRow{ID: s.SessionID, Task: s.Task, Status: s.Status, Agents: len(s.Agents), Steps: s.Steps,
			Cost: report.Cost(s.CostUSD), Created: s.CreatedAt.UTC().Format("2006-01-02 15:04:05Z"), Duration: report.Duration(s.Duration)}
		if s.Winner != nil {
			row.Winner = s.Winner.AgentID
		}
		out.Sessions = append(out.Sessions, row)
	}
	writeJSON(w, out)
}

func (h *Handler) sessionState(w http.ResponseWriter, r *http.Request) {
	st, err := buildState(r.Context(), h.host.RequestService(r.Context()), r.PathValue("id"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, st)
}

// cancel stops a session as cancel_team does.
func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) {
	res, err := h.host.CancelTeam(r.Context(), r.PathValue("id"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, map[string]string{"status": res.Status, "outcome": viewPlace.Outcome(res)})
}

// resume runs a stored session again as run_team{session_id} does
// (CreateOrResume, then Start under a run slot), without waiting: the page
// hears the run on its event stream.
func (h *Handler) resume(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	svc := h.host.RequestService(ctx)
	id := r.PathValue("id")
	v, err := svc.Inspect(ctx, id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if !resumable(v.Result.Status) {
		// A run of an ended session would return at once: say so rather
		// than answer "running".
		http.Error(w, "session "+id+" is "+v.Result.Status+": there is nothing to resume; start a new team", http.StatusConflict)
		return
	}
	if svc.HeldElsewhere(ctx, id) {
		// Said before anything is tried, in the page's words: the holder's
		// own refusal names a process the page has no use for.
		http.Error(w, "session "+id+" runs on another replica sharing this server's store: there is nothing to resume; this page follows it there, and Cancel reaches it", http.StatusConflict)
		return
	}
	s, err := svc.CreateOrResume(ctx, coordination.RunRequest{SessionID: id})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	// The run outlives this request: the page only asked for it. A run
	// another replica holds is not followed: the page watches the session.
	_, started, err := svc.StartOrFollow(context.WithoutCancel(ctx), s.ID, h.host.AcquireRun, false)
	if ns, ok := errors.AsType[*coordination.NotStartedError](err); ok && ns.AtLimit {
		// The refusal says which limit and what frees a slot (the teams at
		// the server's limit may all be others'); this adds when to ask
		// again, as run_team's too_many_runs and the chat endpoint's 429
		// say it: a slot frees when a team ends, which nothing tells this
		// client.
		retry := int(coordination.RunSlotRetry.Seconds())
		w.Header().Set("Retry-After", strconv.Itoa(retry))
		http.Error(w, fmt.Sprintf("%s; try again in %d s", err, retry), http.StatusTooManyRequests)
		return
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, map[string]any{"status": coordination.StatusRunning, "started": started})
}

// resumable says whether a run of a session in this state would do
// anything: an interrupted or cancelled one (the run lifts the
// cancellation, as run --resume does) or a live one nobody runs. A
// finished or failed session's run would return at once.
func resumable(status string) bool {
	switch status {
	case coordination.StatusRunning, coordination.StatusDecided, coordination.StatusInterrupted, coordination.StatusCancelled:
		return true
	}
	return false
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

// writeError words the core's typed errors for a person: another tenant's
// session is simply not found, as a missing one. The server's paths are
// hidden, as in every tool's error; an unexpected error is logged and
// shown only as such.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, coordination.ErrSessionNotFound):
		status = http.StatusNotFound
	case errors.Is(err, coordination.ErrBadInput), errors.Is(err, coordination.ErrSessionFinished):
		status = http.StatusBadRequest
	case errors.Is(err, coordination.ErrSessionRunning):
		status = http.StatusConflict
	}
	if status == http.StatusInternalServerError && r.Context().Err() != nil && errors.Is(err, r.Context().Err()) {
		// The browser went away (it opened another page): nobody reads
		// the answer, and nothing failed on this side.
		return
	}
	if status == http.StatusInternalServerError {
		h.opts.Logger.Error().Err(err).Str("path", r.URL.Path).Msg("the web view could not answer")
		http.Error(w, "the server could not answer; its log says why", status)
		return
	}
	http.Error(w, h.host.RequestService(r.Context()).HidePaths(err.Error()), status)
}
