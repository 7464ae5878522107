package coordination

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
)

// Permissions (docs/DESIGN.md, "Permissions"): every toolbox call of a
// server step — run_command, write_file, edit_file, an MCP server's tool —
// and its web search are decided here, before they run, by the agent's
// rules (permissions.Decide). An ask is answered by the policy, else by a
// person: through the Asker the step's context carries (an MCP client's
// elicitation), else through the handshake: rows of a store that keeps it
// (ApprovalBox, approvals.go), or files in the session's directory; with
// nobody to ask, or past the timeout, it is refused. Every decision is
// appended to the session's permission log.

// PermissionLog is implemented by a store that keeps a session's permission
// decisions (the file store's permissions.jsonl).
type PermissionLog interface {
	// AppendPermission appends one decision.
	AppendPermission(ctx context.Context, id string, rec permissions.Record) error
	// Permissions reads them back in order; none for a session that made
	// no decision.
	Permissions(ctx context.Context, id string) ([]permissions.Record, error)
}

// operatorRules are an agent's rules as the operator gave them: its own
// (the team file's, laid over the team's by the loader) over the server's.
func (svc *Service) operatorRules(ag Agent) permissions.Rules {
	r := svc.opts.Permissions
	if ag.Tools != nil && ag.Tools.Permissions != nil {
		r = ag.Tools.Permissions.Over(r)
	}
	return r
}

// agentRules are an agent's permission rules: the operator's, narrowed by
// its client's (narrow.go).
func (svc *Service) agentRules(ag Agent) permissions.Rules {
	r := svc.operatorRules(ag)
	if ag.Narrowing != nil {
		n, err := permissions.Narrow(r, *ag.Narrowing)
		if err != nil {
			// Checked as the session was created; an operator who has
			// since loosened nothing cannot get here, one who tightened
			// their rules under it can: refuse every ask rather than
			// run on rules nobody chose.
			svc.log.Warn().Err(err).Str("agent", ag.ID).Msg("the client's narrowing no longer fits the operator's permissions; its asks are refused")
			n = permissions.Unfit(r, *ag.Narrowing)
		}
		r = n
	}
	// An operator who gave the agent network: true has granted its commands
	// the network; under a role that does not forbid it, the grant is an
	// allow rule, the least specific there is (any ask or deny rule of
	// theirs about hosts still decides), not an ask that, in a headless
	// run, nobody is there to answer.
	if ag.Tools != nil && ag.Tools.Network && r.Role.Or() != permissions.ReadOnly {
		r.Allow = append(slices.Clone(r.Allow), "net")
	}
	return r
}

// guard is one step's decision point.
type guard struct {
	svc     *Service
	session string
	agent   string
	step    int
	lease   int64 // the step lease's version (its claim); 0: none
	rules   permissions.Rules
	// sandboxed tells that run_command runs in the sandbox, whose
	// /workspace is the workspace and /tmp scratch (permissions.Sandboxed).
	sandboxed bool
}

// decide decides what one call would do, gets an ask answered, and records
// the decision. It returns the record (Outcome.Ran says whether to go on).
func (g *guard) decide(ctx context.Context, tool string, actions []permissions.Action) (permissions.Record, permissions.Decision) {
	d := permissions.Decide(g.rules, actions...)
	rec := permissions.Record{Time: g.svc.now(), Agent: g.agent, Step: g.step, Lease: g.lease, Tool: tool, Action: d.Action,
		Risk: d.Risk, Verdict: d.Verdict, Rule: d.Rule, Floor: d.Floor}
	switch d.Verdict {
	case permissions.Allow:
		rec.Outcome = permissions.Allowed
	case permissions.Deny:
		rec.Outcome = permissions.Denied
	default:
		approved, by, req := g.answer(ctx, tool, d, commandOf(actions))
		rec.Outcome, rec.By, rec.Request = permissions.Refused, by, req
		if approved {
			rec.Outcome = permissions.Approved
		}
		rec.Time = g.svc.now()
		if by == askerGoneBy {
			// This step was so late to refuse its own ask that a reader
			// took it for gone and refused it in its stead, and recorded
			// that (expireApprovals): one decision, one record.
			return rec, d
		}
	}
	g.svc.audit(ctx, g.session, rec)
	return rec, d
}

// answer gets an ask answered: the policy, then a person through the
// step's Asker, then through the handshake (the store's rows, else the
// session directory's files); nobody: refused.
func (g *guard) answer(ctx context.Context, tool string, d permissions.Decision, command string) (approved bool, by, request string) {
	policy := g.rules.Approvals.Or()
	if ok, human := policy.Automatic(d); !human {
		return ok, "policy " + string(policy), ""
	}
	timeout := g.rules.Timeout()
	if ask := providers.AskerFrom(ctx); ask != nil {
		actx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		reply, err := ask(actx, approvalQuestion(g.agent, tool, d, command))
		switch {
		case err != nil && actx.Err() != nil && ctx.Err() == nil:
			return false, "timeout (elicitation)", ""
		case err != nil:
			return false, "elicitation failed: " + providers.MaskKeys(err.Error()), ""
		}
		yes, _ := reply.Content["approve"].(bool)
		return reply.Action == providers.ReplyAccept && yes, "elicitation", ""
	}
	dir := g.svc.dir(g.session)
	box, boxed := g.svc.store.(ApprovalBox)
	if dir == "" && !boxed {
		return false, "nobody to ask (no client that elicits, no session directory)", ""
	}
	now := g.svc.now()
	// The request is what people are shown (status, the live view, the web
	// view): its texts are masked and Shown at the source.
	req := permissions.ApprovalRequest{ID: permissions.NewRequestID(), Session: g.session, Agent: g.agent, Tool: tool,
		Action: shownAction(d.Action), Risk: d.Risk, Rule: permissions.Shown(d.Rule), Command: command, Step: g.step, Asked: now, Expires: now.Add(timeout)}
	g.svc.event(ctx, g.session, Event{Type: "approval_requested", Agent: g.agent, Step: g.step,
		Message: g.agent + " asks to " + req.Action.String() + ": massgen-mcp approve " + req.ID + " (or deny)"})
	var resp permissions.ApprovalResponse
	var err error
	if boxed {
		resp, err = askBox(ctx, box, g.session, req)
	} else {
		resp, err = permissions.AskFile(ctx, dir, req)
	}
	if err != nil && resp.By == "" {
		g.svc.log.Warn().Err(err).Str("session", g.session).Str("agent", g.agent).Msg("the approval request could not be written; refused")
		return false, "file handshake failed", req.ID
	}
	if resp.Reason == permissions.AskerGone {
		return false, askerGoneBy, req.ID
	}
	who := "file handshake"
	if resp.By != "" {
		who += " (" + resp.By + ")"
	}
	return resp.Approve, who, req.ID
}

// commandOf is the whole command line a call runs when it is more than the
// action that asks (run_command's: ForCommand puts the line first), masked
// and Shown for a person; "" for a call that is one action.
func commandOf(actions []permissions.Action) string {
	if len(actions) < 2 || actions[0].Kind != permissions.Exec {
		return ""
	}
	return permissions.Shown(providers.MaskKeys(actions[0].Target))
}

// approvalQuestion is the elicitation form of an ask: one boolean. It
// shows the whole command a yes runs, not only the part that asked.
func approvalQuestion(agent, tool string, d permissions.Decision, command string) providers.Question {
	msg := fmt.Sprintf("Agent %s asks to run %s: %s (risk %s; %s). Approve?", agent, tool, shownAction(d.Action), d.Risk, permissions.Shown(d.Rule))
	if command != "" {
		msg = fmt.Sprintf("Agent %s asks to run %s: %s (risk %s; %s), in the whole command: %s — a yes runs all of it. Approve?",
			agent, tool, shownAction(d.Action), d.Risk, permissions.Shown(d.Rule), command)
	}
	return providers.Question{
		Agent:   agent,
		Message: msg,
		Schema: map[string]any{"type": "object", "required": []string{"approve"}, "properties": map[string]any{
			"approve": map[string]any{"type": "boolean", "title": "Approve", "description": "Let the agent run this once"},
		}},
	}
}

// shownAction is an action as a person is shown it: masked, its target
// Shown.
func shownAction(a permissions.Action) permissions.Action {
	a.Target = permissions.Shown(providers.MaskKeys(a.Target))
	return a
}

func maskAction(a permissions.Action) permissions.Action {
	a.Target = providers.MaskKeys(a.Target)
	return a
}

// audit appends a decision to the session's permission log, masked. A
// failure is logged: the decision stands.
func (svc *Service) audit(ctx context.Context, id string, rec permissions.Record) {
	if err := svc.recordPermission(ctx, id, rec); err != nil {
		svc.log.Warn().Err(err).Str("session", id).Str("agent", rec.Agent).Msg("a permission decision could not be recorded")
	}
}

// recordPermission appends a decision to the session's permission log,
// masked; nil when its store keeps no log.
func (svc *Service) recordPermission(ctx context.Context, id string, rec permissions.Record) error {
	log, ok := svc.store.(PermissionLog)
	if !ok {
		return nil
	}
	return log.AppendPermission(context.WithoutCancel(ctx), id, masked(rec))
}

// masked is rec as the permission log keeps it: keys in its action and
// rule masked.
func masked(rec permissions.Record) permissions.Record {
	rec.Action = maskAction(rec.Action)
	rec.Rule = providers.MaskKeys(rec.Rule)
	return rec
}

// PermissionLog reads a session's permission decisions; none when its store
// keeps no log.
func (svc *Service) PermissionLog(ctx context.Context, id string) ([]permissions.Record, error) {
	log, ok := svc.store.(PermissionLog)
	if !ok {
		return nil, nil
	}
	return log.Permissions(ctx, id)
}

// PendingApprovals lists a session's asks waiting for a person in the
// handshake (the store's rows, or the session directory's files); none when
// its store keeps neither. An ask whose asker is gone (its replica died
// before the ask's timeout) is not among them: it is refused in the
// asker's stead first (expireApprovals).
func (svc *Service) PendingApprovals(ctx context.Context, id string) ([]permissions.ApprovalRequest, error) {
	svc.expireApprovals(ctx, id, false)
	if box, ok := svc.store.(ApprovalBox); ok {
		return box.PendingApprovals(ctx, id)
	}
	dir := svc.dir(id)
	if dir == "" {
		return nil, nil
	}
	return permissions.Pending(dir, svc.lapseCutoff())
}

// lapseCutoff is the file handshake's cutoff for a lapsed ask
// (permissions.ApprovalRequest.Lapsed): its asker refuses it at the expiry
// by its own clock, given MaxClockSkew as a lease's expiry is
// (RunLease.Held). The PostgreSQL store reads its own clock alike.
func (svc *Service) lapseCutoff() time.Time { return svc.now().Add(-MaxClockSkew) }

// expireApprovals refuses, in their askers' stead, a session's asks that
// are still open past their expiry: a live asker refuses its own at the
// expiry (permissions.Await), so such an ask's asker was gone (its replica
// killed) before it, and the ask must neither stay pending for a person to
// approve — the live view answers the oldest by default — nor go
// unrecorded. Each ask refused in its asker's stead is recorded in the
// permission log once, whoever refused it and wherever that process died:
// a store that keeps the handshake as rows records it in the expiry's own
// write (ApprovalBox.ExpireApprovals), so an expiry whose answer was lost
// is recorded all the same; the file handshake hands back a refusal whose
// record a killed or failed expiry may not have written
// (permissions.Expire), which is recorded unless the log holds it
// (recordAskerGone). Best effort: a store that takes no write now leaves
// it to the next look, and the lapsed ask is neither listed nor approvable
// meanwhile.
//
// A listing passes wait false: the file handshake's expiry then returns at
// once while another runs (permissions.ExpireIfIdle), whose record may be
// slow. An answer passes true: it must not land before that other refuses
// the lapsed ask in its asker's stead (permissions.Expire).
func (svc *Service) expireApprovals(ctx context.Context, id string, wait bool) {
	var err error
	if box, ok := svc.store.(ApprovalBox); ok {
		_, err = box.ExpireApprovals(ctx, id, func(r permissions.ApprovalRequest) permissions.Record {
			return masked(svc.askerGoneRecord(r)) // as audit keeps every record
		})
	} else if dir := svc.dir(id); dir != "" {
		expire := permissions.ExpireIfIdle
		if wait {
			expire = permissions.Expire
		}
		_, err = expire(dir, svc.lapseCutoff(), svc.recordAskerGone(ctx, id))
	}
	if err != nil {
		svc.log.Debug().Err(err).Str("session", id).Msg("the lapsed asks could not be refused now; they are neither listed nor approvable")
	}
}

// recordAskerGone is permissions.Expire's record for session id: each
// refusal in a gone asker's stead is appended to the permission log, one
// handed back again (its expiry killed before it was known recorded) only
// when the log holds no record of its request. The log is read then alone,
// once a call, so a look with nothing left to record reads none of it.
func (svc *Service) recordAskerGone(ctx context.Context, id string) func(permissions.ApprovalRequest, bool) error {
	var logged map[string]bool
	return func(r permissions.ApprovalRequest, again bool) error {
		if again && logged == nil {
			recs, err := svc.PermissionLog(ctx, id)
			if err != nil {
				return fmt.Errorf("cannot read the permission log to tell whether ask %s's refusal is in it: %w", r.ID, err)
			}
			logged = map[string]bool{}
			for _, rec := range recs {
				logged[rec.Request] = true
			}
		}
		if again && logged[r.ID] {
			return nil
		}
		return svc.recordPermission(ctx, id, svc.askerGoneRecord(r))
	}
}

// askerGoneRecord is the permission log's record of r refused in its gone
// asker's stead.
func (svc *Service) askerGoneRecord(r permissions.ApprovalRequest) permissions.Record {
	return permissions.Record{Time: svc.now(), Agent: r.Agent, Step: r.Step, Tool: r.Tool, Action: r.Action,
		Risk: r.Risk, Verdict: permissions.Ask, Rule: r.Rule, Outcome: permissions.Refused, By: askerGoneBy, Request: r.ID}
}

// askerGoneBy is who answered an ask refused in its gone asker's stead, as
// the permission log records it (the asker's own refusal at the timeout
// reads "file handshake (timeout)").
const askerGoneBy = "file handshake (timeout: the asking step was gone)"

// Approve answers a pending ask of a session's handshake; the first answer
// stands. An ask past its expiry is refused at its timeout, its asker's or
// in its gone asker's stead (expireApprovals), and takes no answer
// (permissions.ErrExpired).
func (svc *Service) Approve(ctx context.Context, id, request string, approve bool, by string) error {
	svc.expireApprovals(ctx, id, true)
	var err error
	if box, ok := svc.store.(ApprovalBox); ok {
		err = box.AnswerApproval(ctx, id, permissions.ApprovalResponse{ID: request, Approve: approve, By: by, At: svc.now().UTC()})
	} else {
		dir := svc.dir(id)
		if dir == "" {
			return fmt.Errorf("session %q keeps no directory to answer approvals in: %w", id, ErrBadInput)
		}
		err = permissions.Answer(dir, request, approve, by, "", svc.lapseCutoff())
	}
	if errors.Is(err, permissions.ErrNoRequest) || errors.Is(err, permissions.ErrAnswered) || errors.Is(err, permissions.ErrExpired) {
		// The category first, as every other refusal reads.
		return fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return err
}

// guardedToolbox decides every call of the toolbox it wraps before it runs.
type guardedToolbox struct {
	inner providers.Toolbox
	g     *guard
}

// Tools implements providers.Toolbox.
func (b *guardedToolbox) Tools() []providers.Tool { return b.inner.Tools() }

// Call implements providers.Toolbox: a call not allowed is an is_error
// result the model reads, never run.
func (b *guardedToolbox) Call(ctx context.Context, name string, args json.RawMessage) (providers.ToolResult, error) {
	if !slices.ContainsFunc(b.inner.Tools(), func(t providers.Tool) bool { return t.Name == name }) {
		return b.inner.Call(ctx, name, args) // not offered: refused there, nothing to decide
	}
	actions := permissions.ForTool(name, args)
	if name == permissions.ToolRunCommand && b.g.sandboxed {
		actions = permissions.Sandboxed(actions)
	}
	if n, ok := b.inner.(providers.MCPNamer); ok {
		// Rules name a server's tool by its own name, which the offered
		// one may not spell (characters replaced, cut, hashed); first, so
		// it is the one recorded.
		if server, tool, ok := n.MCPTool(name); ok {
			actions = append([]permissions.Action{{Kind: permissions.MCP, Target: server + "/" + tool}}, actions...)
		}
	}
	rec, d := b.g.decide(ctx, name, actions)
	if !rec.Outcome.Ran() {
		why := ""
		if rec.By != "" {
			why = "; asked, answered no by " + rec.By
		}
		if err := ctx.Err(); err != nil {
			return providers.ToolResult{}, err
		}
		return providers.ToolResult{IsError: true, Content: d.Refusal(why)}, nil
	}
	return b.inner.Call(ctx, name, args)
}

// webSearchAllowed decides a step's web search once, as the step is
// equipped: the API runs the search itself, so it can only be offered or
// not.
func (g *guard) webSearchAllowed(ctx context.Context) bool {
	rec, _ := g.decide(ctx, "web_search", []permissions.Action{{Kind: permissions.Net, Target: permissions.WebSearch}})
	return rec.Outcome.Ran()
}

// PermissionCounts sum up a session's permission log, for status and fsck.
type PermissionCounts struct {
	Decisions int `json:"decisions"`
	Allowed   int `json:"allowed"`
	Denied    int `json:"denied"`
	Approved  int `json:"approved"`
	Refused   int `json:"refused"`
	// Failed are calls a CLI ran unasked whose stream reported an error.
	Failed int `json:"failed,omitempty"`
	Floor  int `json:"floor"`
	// Pending are asks waiting for a person in the file handshake.
	Pending int `json:"pending"`
}

// CountPermissions sums up a session's permission log and pending asks.
func (svc *Service) CountPermissions(ctx context.Context, id string) (PermissionCounts, error) {
	var c PermissionCounts
	// The pending asks first: reading them refuses the lapsed ones in
	// their gone askers' stead (expireApprovals), which the log then
	// counts.
	pending, perr := svc.PendingApprovals(ctx, id)
	recs, err := svc.PermissionLog(ctx, id)
	if err != nil {
		return c, err
	}
	for _, r := range recs {
		c.Decisions++
		switch r.Outcome {
		case permissions.Allowed:
			c.Allowed++
		case permissions.Denied:
			c.Denied++
		case permissions.Approved:
			c.Approved++
		case permissions.Refused:
			c.Refused++
		case permissions.Failed:
			c.Failed++
		}
		if r.Floor {
			c.Floor++
		}
	}
	c.Pending = len(pending)
	return c, perr
}

// String is the counts as one line: "7 decisions: 3 allowed, 2 denied (1
// floor), 1 approved, 1 refused; 1 pending".
func (c PermissionCounts) String() string {
	s := fmt.Sprintf("%d decisions: %d allowed, %d denied", c.Decisions, c.Allowed, c.Denied)
	if c.Floor > 0 {
		s += fmt.Sprintf(" (%d floor)", c.Floor)
	}
	s += fmt.Sprintf(", %d approved, %d refused", c.Approved, c.Refused)
	if c.Failed > 0 {
		s += fmt.Sprintf(", %d failed unasked", c.Failed)
	}
	if c.Pending > 0 {
		s += fmt.Sprintf("; %d pending", c.Pending)
	}
	return s
}
