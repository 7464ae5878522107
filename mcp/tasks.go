package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Long runs as MCP tasks: the 2026-07-28 extension io.modelcontextprotocol/tasks
// (SEP-2663). A client that declares the extension in a run_team request's
// _meta gets a task handle at once (resultType "task") instead of waiting up
// to 50 s; it polls tasks/get, whose completed task carries the very result
// run_team would have returned, and tasks/cancel cancels the run as
// cancel_team does. Every other client keeps start-then-poll. mcp-go v1.2.1
// knows neither the "task" result type nor the extension's methods
// (mark3labs/mcp-go#980), so the transports answer tasks/* themselves
// (taskrpc.go) and lift the handle out of the tool result mcp-go writes.

// extTasks is the extension's identifier.
const extTasks = "io.modelcontextprotocol/tasks"

const (
	// taskPollMs is the polling interval a task suggests: a team runs for
	// minutes, and team_status says more than a poll anyway.
	taskPollMs = 3000
	// taskKeep is how long an ended task stays readable; then it is
	// forgotten (its session is not: run_team{session_id} reads it).
	taskKeep = time.Hour
	// maxTasks bounds a tenant's tasks in the table: past it, that
	// tenant's run_team answers as for a client without the extension.
	// Per tenant, so one tenant's calls never take the extension away
	// from another's clients; tenants are the operator's tokens file's.
	maxTasks = 4096
)

// Task states, in the extension's words.
const (
	taskWorking   = "working"
	taskCompleted = "completed"
	taskCancelled = "cancelled"
)

// TaskHandle is a task as the extension writes it: run_team's structured
// content when it returns a task, which the transports lift to the result's
// top level (taskrpc.go).
type TaskHandle struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          *int64 `json:"ttlMs"`
	PollIntervalMs int64  `json:"pollIntervalMs,omitempty"`
}

// detailedTask is tasks/get's answer: the handle and, once completed, the
// tool's result.
type detailedTask struct {
	ResultType string `json:"resultType"`
	TaskHandle
	Result json.RawMessage `json:"result,omitempty"`
}

// teamTask is one run_team call made a task.
type teamTask struct {
	id, tenant, session string
	created, updated    time.Time
	ended               time.Time
	status              string
	message             string
	result              json.RawMessage
	cancelling          bool
}

func (t *teamTask) handle() TaskHandle {
	h := TaskHandle{
		TaskID: t.id, Status: t.status, StatusMessage: t.message,
		CreatedAt: t.created.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.updated.UTC().Format(time.RFC3339Nano),
		PollIntervalMs: taskPollMs,
	}
	// Unlimited while the run goes on; an ended task lives taskKeep more.
	if !t.ended.IsZero() {
		ttl := t.ended.Add(taskKeep).Sub(t.created).Milliseconds()
		h.TTLMs = &ttl
	}
	return h
}

// taskTable holds the tasks of this process, by id. An id is a taskRef
// (taskID) and 128 random bits that make it unique. A task is found only by
// the tenant that made it: another replica, which never saw the task,
// answers for it from its session (storedTask), read through the tenant's
// own store as every session is, so an id reads no more than its session's
// id would.
type taskTable struct {
	mu   sync.Mutex
	byID map[string]*teamTask
	now  func() time.Time
}

func newTaskTable() *taskTable {
	return &taskTable{byID: map[string]*teamTask{}, now: time.Now}
}

// errTaskNotFound is a task id this tenant has no task under (never made,
// forgotten, or another tenant's).
var errTaskNotFound = errors.New("task not found")

// full tells whether a tenant has as many tasks as it may keep: its
// run_team then answers as for a client without the extension.
func (tt *taskTable) full(tenant string) bool {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.forgetLocked(tt.now())
	return tt.heldLocked(tenant) >= maxTasks
}

// heldLocked counts a tenant's tasks.
func (tt *taskTable) heldLocked(tenant string) int {
	n := 0
	for _, t := range tt.byID {
		if t.tenant == tenant {
			n++
		}
	}
	return n
}

// create makes a working task for a session's run; nil when the tenant
// has as many tasks as it may keep.
func (tt *taskTable) create(tenant, session string, full bool, cancels int) *teamTask {
	var b [16]byte
	_, _ = rand.Read(b[:])
	now := tt.now()
	ref := taskRef{session: session, full: full, created: now, cancels: cancels}
	t := &teamTask{id: ref.id(hex.EncodeToString(b[:])), tenant: tenant, session: session, created: now, updated: now, status: taskWorking,
		message: fmt.Sprintf("team %s is running; team_status{session_id: %q} shows its progress", session, session)}
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.forgetLocked(now)
	if tt.heldLocked(tenant) >= maxTasks {
		return nil
	}
	tt.byID[t.id] = t
	return t
}

// taskRef is what a task's id says of it: its session, its result whole
// (full) or brief, when it was made, and how many cancels the session had
// recorded then (a cancel after those is the task's run's, whatever a
// later run of the session does; counted, since replicas' clocks differ).
type taskRef struct {
	session string
	full    bool
	created time.Time
	cancels int
}

// id is the task's id: session, ".", "f" or "b", created (Unix
// milliseconds) and cancels in base 36 apart by ".", then ".", random.
func (r taskRef) id(random string) string {
	mode := "b"
	if r.full {
		mode = "f"
	}
	return r.session + "." + mode + strconv.FormatInt(r.created.UnixMilli(), 36) + "." + strconv.FormatInt(int64(r.cancels), 36) + "." + random
}

// parseTaskID reads a task's reference out of its id.
func parseTaskID(id string) (taskRef, bool) {
	parts := strings.Split(id, ".")
	if len(parts) != 4 || len(parts[1]) < 2 || (parts[1][0] != 'f' && parts[1][0] != 'b') || coordination.CheckSessionID(parts[0]) != nil || len(parts[3]) != 32 {
		return taskRef{}, false
	}
	ms, err := strconv.ParseInt(parts[1][1:], 36, 64)
	if err != nil {
		return taskRef{}, false
	}
	cancels, err := strconv.ParseInt(parts[2], 36, 32)
	if err != nil || cancels < 0 {
		return taskRef{}, false
	}
	if _, err := hex.DecodeString(parts[3]); err != nil {
		return taskRef{}, false
	}
	return taskRef{session: parts[0], full: parts[1][0] == 'f', created: time.UnixMilli(ms), cancels: int(cancels)}, true
}

// forgetLocked drops tasks ended more than taskKeep ago.
func (tt *taskTable) forgetLocked(now time.Time) {
	for id, t := range tt.byID {
		if !t.ended.IsZero() && now.Sub(t.ended) > taskKeep {
			delete(tt.byID, id)
		}
	}
}

// get is a tenant's task as tasks/get answers it.
func (tt *taskTable) get(tenant, id string) (detailedTask, error) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.forgetLocked(tt.now())
	t, ok := tt.byID[id]
	if !ok || t.tenant != tenant {
		return detailedTask{}, errTaskNotFound
	}
	d := detailedTask{ResultType: string(mcpgo.ResultTypeComplete), TaskHandle: t.handle()}
	if t.status == taskCompleted {
		d.Result = t.result
	}
	return d, nil
}

// markCancelling records a tasks/cancel and returns the task's session;
// the caller cancels the run.
func (tt *taskTable) markCancelling(tenant, id string) (session string, working bool, err error) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	t, ok := tt.byID[id]
	if !ok || t.tenant != tenant {
		return "", false, errTaskNotFound
	}
	if t.status != taskWorking {
		return t.session, false, nil
	}
	t.cancelling = true
	t.updated = tt.now()
	t.message = "cancelling at the client's request"
	return t.session, true, nil
}

// finish ends a task with the run's result; a run that a tasks/cancel
// stopped ends it cancelled (a run that finished first stays completed),
// saying why (cancelReason: by request, an error).
func (tt *taskTable) finish(id string, result json.RawMessage, teamStatus, cancelReason string) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	t, ok := tt.byID[id]
	if !ok {
		return
	}
	// Interrupted: its holder stopped and no run here took it up (no run
	// slot free here, its takeovers spent, or this server handing it over
	// as it stops). The session is for a replica to take up or a run_team
	// to resume, and the task goes on with it: forgotten here, the task is
	// read from its session (storedTask), working until the session ends,
	// as every replica reads it, rather than completed "interrupted" for
	// an hour while the run goes on elsewhere.
	if teamStatus == string(coordination.StatusInterrupted) {
		delete(tt.byID, id)
		return
	}
	now := tt.now()
	t.updated, t.ended = now, now
	// Cancelled, by tasks/cancel or cancel_team: the task is, as a
	// replica reading it from its session says (storedTask).
	if teamStatus == string(coordination.StatusCancelled) {
		t.status = taskCancelled
		t.message = cancelledMessage(t.session, cancelReason)
		return
	}
	t.status, t.result = taskCompleted, result
	t.message = fmt.Sprintf("team %s: %s", t.session, teamStatus)
}

// wantsTask tells whether a run_team call is to be a task: its client
// declared the extension on this very request (the extension forbids a
// task to any other).
func wantsTask(ctx context.Context) bool {
	info := server.RequestProtocolInfoFromContext(ctx)
	if info == nil || !info.Modern || info.ClientCapabilities == nil {
		return false
	}
	_, ok := info.ClientCapabilities.Extensions[extTasks]
	return ok
}

// runAsTask starts a session's run (or follows it where another process
// runs it) and returns a task handle at once; the task completes with the
// result run_team would have returned, full or brief as asked.
//
// The task waits for the run's end as run_team{wait: true} does, through
// the same startOrFollow, past this request: a run followed elsewhere whose
// holder stops is taken up here, or followed on the replica that took it up
// (coordination.Service.StartOrFollow). One nobody here could take up ends
// the task's run interrupted: the task is then read from its session
// (finish, storedTask), as every replica reads it.
func (h *handler) runAsTask(ctx context.Context, req mcpgo.CallToolRequest, id string, full bool) (*mcpgo.CallToolResult, bool, error) {
	if h.tasks.full(tenantOf(ctx)) {
		return nil, false, nil
	}
	bg := context.WithoutCancel(ctx)
	run, _, err := h.startOrFollow(bg, req, id, waitToEnd)
	if err != nil {
		return nil, true, err
	}
	// The cancels the task's run lifts (a run followed elsewhere: those the
	// session had as it was followed): one after them ends the task
	// (storedTask), whichever replica reads it.
	t := h.tasks.create(tenantOf(ctx), id, full, run.Cancels())
	if t == nil { // the table filled meanwhile: the call waits as run_team does
		return nil, false, nil
	}
	go func() {
		<-run.Done()
		out, res := h.endResult(bg, run, id, full)
		raw, err := json.Marshal(out)
		if err != nil {
			raw, _ = json.Marshal(h.errorResult(bg, "run_team", err))
		}
		status, why := "", ""
		if res != nil {
			status, why = res.Status, res.CancelReason
		}
		h.tasks.finish(t.id, raw, status, why)
	}()
	h.tasks.mu.Lock()
	handle := t.handle()
	h.tasks.mu.Unlock()
	return &mcpgo.CallToolResult{Result: mcpgo.Result{ResultType: resultTypeTask}, Content: []mcpgo.Content{}, StructuredContent: handle}, true, nil
}

// resultTypeTask is the result type of a task handle.
const resultTypeTask mcpgo.ResultType = "task"

// endResult is what run_team returns for a run that has ended, and the
// team's result it shows (nil when it could not be read).
func (h *handler) endResult(ctx context.Context, run *coordination.Run, id string, full bool) (*mcpgo.CallToolResult, *coordination.TeamResult) {
	var res *coordination.TeamResult
	err := errNoRun
	if run != nil {
		res, err = run.Result()
	}
	if err != nil {
		// Stopped without a result of its own (cancelled, finalized from
		// elsewhere, failed): the session says how it stands.
		res, err = h.svc(ctx).Result(ctx, id)
	}
	if err != nil {
		return h.errorResult(ctx, "run_team", err), nil
	}
	return withAppLink(teamResultAs(res, full), id), res
}

// errNoRun is endResult's for a session read without a run of its own.
var errNoRun = errors.New("no run here")

// storedTask is a task this process did not make (another replica did, or
// this one before a restart, or it was forgotten), as its session stands
// since the task was made: cancelled if a cancel was recorded since (a
// session resumed after it is a later run's, not the task's), else working
// while the team runs (or is interrupted, for a replica to take up), or
// completed with the result run_team gives for the ended session.
func (h *handler) storedTask(ctx context.Context, id string) (detailedTask, error) {
	ref, ok := parseTaskID(id)
	if !ok {
		return detailedTask{}, errTaskNotFound
	}
	session := ref.session
	svc := h.svc(ctx)
	cancels, err := svc.Cancels(ctx, session)
	if errors.Is(err, coordination.ErrSessionNotFound) {
		return detailedTask{}, errTaskNotFound
	}
	if err != nil {
		return detailedTask{}, fmt.Errorf("could not read the task's session %s: %w", session, err)
	}
	now := h.tasks.now()
	t := teamTask{id: id, session: session, created: ref.created, updated: now, status: taskWorking,
		message: fmt.Sprintf("team %s is running; team_status{session_id: %q} shows its progress", session, session)}
	res, err := svc.Result(ctx, session)
	if err != nil {
		return detailedTask{}, fmt.Errorf("could not read the task's session %s: %w", session, err)
	}
	var result json.RawMessage
	switch {
	case cancels > ref.cancels:
		t.status, t.ended = taskCancelled, now
		t.message = cancelledMessage(session, res.CancelReason)
	case res.Status == coordination.StatusCancelled && !svc.RunHeld(ctx, session):
		// A cancel of before the task, which no run is there to lift.
		t.status, t.ended = taskCancelled, now
		t.message = cancelledMessage(session, res.CancelReason)
	case res.Status == coordination.StatusRunning || res.Status == coordination.StatusDecided, res.Status == coordination.StatusCancelled:
		// Cancelled with no cancel since the task, and its run holds the
		// session: a cancel it has still to lift as it starts.
	case res.Status == coordination.StatusInterrupted:
		t.message = fmt.Sprintf("team %s was interrupted (the server running it stopped): a server resuming interrupted runs takes it up, or run_team{session_id: %q} resumes it", session, session)
	default:
		out, ended := h.endResult(ctx, nil, session, ref.full)
		if result, err = json.Marshal(out); err != nil {
			return detailedTask{}, fmt.Errorf("could not encode the result of session %s: %w", session, err)
		}
		status := ""
		if ended != nil {
			status = ended.Status
		}
		t.status, t.ended = taskCompleted, now
		t.message = fmt.Sprintf("team %s: %s", session, status)
	}
	return detailedTask{ResultType: string(mcpgo.ResultTypeComplete), TaskHandle: t.handle(), Result: result}, nil
}

// cancelledMessage is a cancelled task's status message: why, when the
// session says, and how to resume it.
func cancelledMessage(session, why string) string {
	if why == "" {
		return fmt.Sprintf("cancelled; team_status{session_id: %q} says why, and run_team{session_id: %q} resumes it", session, session)
	}
	return fmt.Sprintf("cancelled (%s); run_team{session_id: %q} resumes it", why, session)
}

// task is a tenant's task as tasks/get answers it: this process's, or
// one read from its session.
func (h *handler) task(ctx context.Context, id string) (detailedTask, error) {
	d, err := h.tasks.get(tenantOf(ctx), id)
	if errors.Is(err, errTaskNotFound) {
		return h.storedTask(ctx, id)
	}
	return d, err
}

// cancelTask cancels a task's run as cancel_team does; the task ends
// cancelled once the run has stopped. A task this process did not make is
// cancelled through its session, wherever its run is.
func (h *handler) cancelTask(ctx context.Context, id string) error {
	tenant := tenantOf(ctx)
	session, working, err := h.tasks.markCancelling(tenant, id)
	if errors.Is(err, errTaskNotFound) {
		return h.cancelStoredTask(ctx, id)
	}
	if err != nil || !working {
		return err
	}
	bg := context.WithoutCancel(ctx)
	go func() {
		h.flights.cancelSession(tenant, session)
		if _, err := h.svc(bg).Cancel(bg, session); err != nil {
			h.log.Warn().Err(err).Str("session", session).Msg("tasks/cancel could not cancel the run")
		}
	}()
	return nil
}

// cancelStoredTask cancels the session of a task another process made,
// while the task works: one that ended (its session ended, or was
// cancelled since, and maybe resumed by a later run) is left as it is.
func (h *handler) cancelStoredTask(ctx context.Context, id string) error {
	d, err := h.storedTask(ctx, id)
	if err != nil {
		return err
	}
	if d.Status != taskWorking {
		return nil
	}
	ref, _ := parseTaskID(id)
	session := ref.session
	_, err = h.svc(ctx).Cancel(ctx, session)
	var fin *coordination.FinishedError
	switch {
	case errors.Is(err, coordination.ErrSessionNotFound):
		return errTaskNotFound
	case errors.As(err, &fin):
		return nil
	case err != nil:
		return fmt.Errorf("could not cancel the task's session %s: %w", session, err)
	}
	// Once the session is cancelled: a decided one, whose final call a
	// flight here may be making, is refused above and keeps it.
	h.flights.cancelSession(tenantOf(ctx), session)
	return nil
}
