package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
	"github.com/massgen-go/massgen-mcp/providers/keys"
)

// errorFix pairs an error a caller can act on with the one line that says
// what to do next.
type errorFix struct {
	err  error
	code string
	fix  string
}

// fixes is the one vocabulary for errors at the MCP surface. Order matters:
// the first match wins, so narrower errors come before broader ones.
var fixes = []errorFix{
	{errClientCLIAgent, "operator_only", "name API models instead (list_backends shows them); the server's operator can " + clientCLIFix + "."},
	{errOperatorOnly, "operator_only", "leave the setting out of the call; the server's operator can " + operatorFix + "."},
	{backends.ErrBaseURLNotAllowed, "base_url_not_allowed", "leave the @base_url out to use the backend's configured endpoint; the server's operator can allow it with serve --allow-base-url URL, or " + operatorFix + "."},
	{errTooManyRuns, "too_many_runs", fmt.Sprintf("call again in %d s or later, once a team running here has ended (any client's), or ask the server's operator to raise --max-runs.", int(coordination.RunSlotRetry.Seconds()))},
	{errCannotElicit, "cannot_ask_user", "call from a client that declares the elicitation capability (form mode): over stdio, or over HTTP with protocol 2026-07-28; or leave out what asks the user (checkpoint's confirm, human agents)."},
	{errBadArguments, "bad_arguments", "send arguments that match the tool's input schema (tools/list shows it): right types, required fields present, no unknown fields."},
	{coordination.ErrSessionNotFound, "session_not_found", "check the session_id (the massgen://sessions resource lists them), or start a new team with run_team or start_team."},
	{coordination.ErrSessionExists, "session_exists", "send the same settings to join that session, leave them out to resume it, choose another session_id, or leave it out to get a generated one."},
	{coordination.ErrDamaged, "session_damaged", "the operator runs `massgen-mcp fsck <session_id>` to see the damage and `fsck --repair` to move it aside (nothing is deleted), or restores the file from a backup."},
	{coordination.ErrStoreUnavailable, "store_unavailable", "call again in a few seconds, or once the server's operator has fixed the cause the message names (a full disk, a database that takes no writes): the server's database is not available now; a run pauses and goes on by itself once it is back, and nothing it recorded is lost."},
	{coordination.ErrDiskFull, "disk_full", "free space on the server's disk (the message says how much), then resume with run_team{session_id}."},
	{coordination.ErrApplyConflict, "apply_conflict", "nothing was written: show the user the conflicting files; once they are as the run read them (or the user decides), call apply_changes again — or run the team again on the project as it is now."},
	{coordination.ErrConfigHeld, "config_held", "nothing was written: show the user each listed file and what it can run (they are in result.changes.config); only if the user asks for them, call apply_changes again with tool_config: \"include\"; tool_config: \"skip\" writes the rest without them."},
	{coordination.ErrNothingToApply, "nothing_to_apply", "team_status shows the session: apply once it has finished with a winner that changed files of a write context (context with permission write)."},
	{coordination.ErrSessionFinished, "session_finished", "read the result with team_status; start a new team to work on the task again."},
	{coordination.ErrSessionStarted, "session_started", "attach criteria before the first step (right after start_team), or start a new team with eval_criteria (generate_eval_criteria without session_id returns them)."},
	{coordination.ErrSessionRunning, "session_running", "it is running in another process: follow it with team_status, or stop it with cancel_team first."},
	{coordination.ErrLeaseLost, "lease_lost", "this call's hold on the session ran out while it worked (a stalled server, or its database away) and another server took the session over: read the session with team_status, then make the same call again — a model agent's step with after_step (team_status's next names it), which joins the step rather than pay for another; a host's submission as it was, which lands once; finalize_team or checkpoint{session_id} as before."},
	{coordination.ErrChangedSinceRead, "session_changed", "the session was cancelled or ended elsewhere, again and again, while this call decided it: read it with team_status, and call again if it still runs."},
	{errTeamNotFound, "team_not_found", "name one of the teams list_backends lists (the operator's files under serve --teams-dir), or give models or agents instead."},
	{errTeamUnusable, "team_unusable", "name another team from list_backends (its teams[].problem says which files are broken), or give models or agents instead; only the server's operator can fix the team's file."},
	{coordination.ErrHostInRunTeam, "host_in_run_team", "create the team with start_team and drive it with step (host agents act through step views)."},
	{coordination.ErrAgentNotFound, "agent_not_found", "use one of the agent ids that start_team and team_status list."},
	{coordination.ErrAgentBusy, "agent_busy", "wait for its step to land (team_status shows agents in flight), then step it again."},
	{coordination.ErrNotNext, "agent_not_next", "step one of next_agents instead (team_status lists them), or wait for the others to act."},
	{coordination.ErrStaleView, "stale_view", "call step for this agent without an action to get a fresh view, then submit with the seen_steps that call returns (top level, beside view)."},
	{coordination.ErrNotHost, "not_host_agent", "call step without action, content, target or reason: the server calls this agent's model itself."},
	{coordination.ErrBadAction, "bad_action", "submit action new_answer with content, or action vote with target set to one of the view's vote_enum and a reason."},
	{criteria.ErrInvalid, "bad_criteria", "correct what is named above and call again: criteria need a text, unique ids and exactly one must (1 to 12 written by you, 3 to 8 generated); kind is code, build, writing, analysis, plan or other."},
	{coordination.ErrBadSettings, "bad_settings", "correct the setting named above and call again (the tool's input schema lists the allowed values)."},
	{keys.ErrMissingKey, "missing_key", "provide the key named above to the server: export it in the environment the server starts in, or write it as NAME=value in .env in the server's working directory or in ~/.env; for an MCP client, put it in the env entry of this server in the client's config (\"env\": {\"NAME\": \"…\"} beside \"command\"), then restart the server. Or name models whose keys are set (list_backends shows them)."},
	{providers.ErrModelNotFound, "model_not_found", "name a model the provider lists: the closest names are above (a typo is the usual cause); nothing was run or paid for."},
	{coordination.ErrKeyRefused, "key_refused", "the key named above is set but the provider refused it (mistyped, revoked or for another project): set a valid one where it is set now (the environment, .env or ~/.env of the server, or the env entry of this server in the MCP client's config), or name models of other providers."},
	{coordination.ErrBadSpec, "bad_model_spec", "name models as backend/model (e.g. openai/gpt-5.4, claude, sim/strong); list_backends shows what is usable here."},
	{providers.ErrBadSpec, "bad_model_spec", "name models as backend/model (e.g. openai/gpt-5.4, claude, sim/strong); list_backends shows what is usable here."},
	{coordination.ErrUnpriced, "unpriced_agent", "use token_budget instead of cost_budget_usd, or name models with a list price (run_team{estimate: true} lists the unpriced agents and spends nothing); the server's operator can give each such agent price_in and price_out in a team file under --teams-dir."},
	{coordination.ErrCriteriaBudget, "budget_too_small", "the session's budget is what its agents may spend, and a criteria call spends it too: attach criteria you wrote (generate_eval_criteria{criteria}), which cost nothing, or start a new team with a larger cost_budget_usd or token_budget."},
	{coordination.ErrBudgetTooSmall, "budget_too_small", "raise cost_budget_usd or token_budget, set max_output_tokens on the agents, or use fewer agents; run_team{estimate: true} shows the figures and spends nothing."},
	{coordination.ErrBadInput, "bad_input", "correct the argument named above and call again."},
	{context.Canceled, "cancelled", "the request was cancelled; a cancelled session resumes with run_team{session_id} (or by stepping it again)."},
	{context.DeadlineExceeded, "timeout", "the request ran out of time; team_status shows where the session stands."},
}

// retryAfter is, by code, how long a refusal that a later call may not
// meet asks the caller to wait: its _meta's massgen/retry_after_seconds,
// for a client that retries by itself (the fix line says it in words).
var retryAfter = map[string]time.Duration{
	"too_many_runs": coordination.RunSlotRetry,
}

// factFix words the fix of err, matched as kind, from the facts its typed
// error carries where they call for more than the kind's line; "" if not.
func factFix(kind, err error) string {
	var fin *coordination.FinishedError
	var e *coordination.StaleViewError
	var rl *runLimitError
	switch {
	case kind == errTooManyRuns && errors.As(err, &rl) && rl.perTenant:
		// Only at its own cap does a client free a slot by stopping a team.
		return fmt.Sprintf("stop one of your running teams with cancel_team, or call again in %d s or later, once one of them has ended; the server's operator can raise --max-runs-per-tenant.", int(coordination.RunSlotRetry.Seconds()))
	case kind == coordination.ErrSessionFinished && errors.As(err, &fin) && fin.Status == coordination.StatusDecided:
		// Decided is not over for the caller, who has the final answer written.
		return "call finalize_team to write the final answer (team_status shows the winner)."
	case kind != coordination.ErrStaleView || !errors.As(err, &e):
		return ""
	}
	switch e.Why {
	case coordination.ViewMissing:
		return "send seen_steps with the submission: call step for this agent without an action for a view, then submit with its seen_steps."
	case coordination.ViewNotIssued:
		return "call step for this agent without an action first to get a view, then submit with its seen_steps."
	case coordination.ViewOutdated:
		return "take a fresh view (step without an action) and vote on what it shows."
	case coordination.ViewUsed:
		return "take a fresh view (step without an action) for another action; resending the same submission returns its result."
	}
	return ""
}

// errorResult turns any error into an isError tool result: the error's own
// sentence, then a line starting "To fix:". Errors outside the vocabulary are
// logged, since they point at a bug or a broken store rather than a mistake
// the caller can correct. The server's own paths are hidden from clients that
// must not see them (shownError).
func (h *handler) errorResult(ctx context.Context, tool string, err error) *mcpgo.CallToolResult {
	if h.svc(ctx).StoreUnreachable(ctx, err) && !errors.Is(err, coordination.ErrStoreUnavailable) {
		h.log.Warn().Err(err).Str("tool", tool).Msg("tool call met an unreachable store")
		err = fmt.Errorf("%w: %w", coordination.ErrStoreUnavailable, err)
	}
	code, fix := classify(err)
	switch code {
	case "internal":
		h.log.Error().Err(err).Str("tool", tool).Msg("tool call failed unexpectedly")
	case "lease_lost", "session_changed":
		// Not the caller's doing nor a bug: this server stalled, or lost
		// its database, long enough for another to take the session.
		h.log.Warn().Err(err).Str("tool", tool).Msg("tool call lost the session to another server")
	}
	msg := boundEcho(strings.TrimSpace(h.shownError(ctx, err).Error()))
	if msg != "" && !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	res := mcpgo.NewToolResultError(msg + "\nTo fix: " + fix)
	meta := map[string]any{"massgen/error": code}
	if d, ok := retryAfter[code]; ok {
		meta["massgen/retry_after_seconds"] = int(d.Seconds())
	}
	res.Meta = mcpgo.NewMetaFromMap(meta)
	return res
}

// classify names an error and its fix.
func classify(err error) (code, fix string) {
	for _, f := range fixes {
		if errors.Is(err, f.err) {
			return f.code, cmp.Or(factFix(f.err, err), f.fix)
		}
	}
	return "internal", "this is not something the arguments can fix; team_status shows the session's state, and the server log (stderr) has the details."
}

// Limits on how much of a caller's input an error may repeat: a 100 MB
// argument must not come back in the error about it.
const (
	maxEchoQuote = 120  // a quoted value longer than this is shortened
	maxErrorText = 2000 // and the whole message is cut here
)

// boundEcho shortens every quoted value ("…") longer than maxEchoQuote to its
// start and its size, then cuts the message at maxErrorText. Errors quote
// what the caller sent (%q), which is how a long value would be echoed.
func boundEcho(msg string) string {
	if len(msg) <= maxEchoQuote {
		return msg
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		start := strings.IndexByte(msg[i:], '"')
		if start < 0 {
			b.WriteString(msg[i:])
			break
		}
		start += i
		end := closingQuote(msg, start+1)
		if end < 0 {
			end = len(msg) - 1
		}
		b.WriteString(msg[i:start])
		if quoted := msg[start : end+1]; len(quoted) > maxEchoQuote {
			cut := strings.ToValidUTF8(quoted[:maxEchoQuote/2], "")
			fmt.Fprintf(&b, "%s…\" (%s in all)", cut, sizeText(int64(len(quoted)-2)))
		} else {
			b.WriteString(quoted)
		}
		i = end + 1
		if b.Len() > maxErrorText {
			break
		}
	}
	out := b.String()
	if len(out) > maxErrorText {
		out = strings.ToValidUTF8(out[:maxErrorText], "") + "… (message cut)"
	}
	return out
}

// closingQuote finds the quote that ends a %q string starting at i, past
// escaped quotes; -1 if none.
func closingQuote(s string, i int) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// shownError is err as a client may read it: its text with the store's paths
// named by session (Service.HidePaths: over HTTP a path inside the state
// directory, a tenant's included, is none of the client's business; the log
// keeps the real one). errors.Is still sees the cause.
func (h *handler) shownError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if shown := h.svc(ctx).ShownError(ctx, err); shown != msg {
		return shownErr{msg: shown, err: err}
	}
	return err
}

type shownErr struct {
	msg string
	err error
}

func (e shownErr) Error() string { return e.msg }
func (e shownErr) Unwrap() error { return e.err }
