package cliagent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

// Permissions is what a run's CLI is told of the agent's permission rules
// (Run.Permissions; nil when the request has none).
type Permissions struct {
	// Mode is the coarse mode derived from the rules: what the CLI's
	// one-per-run settings (sandbox, approval mode, disallowed tools) say.
	Mode permissions.CoarseMode
	// Hook is the command line the CLI runs before each of its tool calls,
	// the call's JSON on stdin (the relay in hook mode): it prints the
	// Step's answer in the CLI's wire, or exits 2 to refuse. Each word is
	// a separate argument; a CLI that takes one command string quotes them.
	Hook []string
	// PromptTool is the workflow server's tool the CLI may ask instead
	// (Claude Code's --permission-prompt-tool), as the server names it.
	PromptTool string
}

// HookTimeout is the timeout a CLI is given for its permission hook. Codex
// and Gemini CLI let a call whose hook timed out run, as if the hook had
// no objection (seen with their pinned versions: a hook killed at a
// 3-second timeout while the engine waited, and the shell command ran),
// so the hook must always answer first: it is longer than the relay's
// wait for the Step (relay.GateTimeout), which is longer than any
// approval the rules may ask a person for. A hook answers as soon as the
// Step decides, so the length costs nothing.
const HookTimeout = relay.GateTimeout + 5*time.Minute

// Gatekeeper is a CLI whose tool calls the Step can decide one by one,
// through a hook or a prompt tool (the CLI's own wire both ways), and
// whose coarse settings it can name for the audit.
type Gatekeeper interface {
	// Question reads one permission question, as the CLI's hook or prompt
	// tool sends it: the tool the CLI is about to run and the actions it
	// would take. workspace is the workspace as the CLI sees it. No
	// actions (and no error) is a call of the workflow server, which the
	// Step judges itself (its team MCP tools through the guarded toolbox):
	// it goes on unrecorded here.
	Question(payload json.RawMessage, workspace string) (tool string, actions []permissions.Action, err error)
	// Answer is the CLI's wire for the decision on a question.
	Answer(payload json.RawMessage, ran bool, why string) string
	// UsesPromptTool says the CLI asks through the workflow server's
	// prompt tool (served only then), not a hook.
	UsesPromptTool() bool
	// Coarse are the audit lines of what a run's settings decide up
	// front, one per kind of action: the verdict, and in Rule the CLI's
	// means ("codex --sandbox read-only").
	Coarse(p Permissions, sandboxed bool) []permissions.Record
}

// permitsFor is the run's Permissions for a request, or nil when it has
// no rules or the CLI cannot be told them.
func permitsFor(req providers.Request, cli CLI, hook []string) *Permissions {
	if req.Permits == nil {
		return nil
	}
	if _, ok := cli.(Gatekeeper); !ok {
		return nil
	}
	return &Permissions{Mode: permissions.Coarse(req.Permits.Rules()), Hook: hook, PromptTool: relay.PromptTool}
}

// noteCoarse writes the coarse mode's audit lines once per step, so a CLI
// agent's trail is never empty even when its CLI decides alone.
func noteCoarse(req providers.Request, cli CLI, p *Permissions, sandboxed bool) {
	gk, ok := cli.(Gatekeeper)
	if !ok || p == nil {
		return
	}
	for _, rec := range gk.Coarse(*p, sandboxed) {
		req.Permits.Note(rec)
	}
}

// UnaskedCalls is a Gatekeeper whose CLI runs some calls without asking
// (Claude Code's reads in its own directories) and whose questions name a
// call by the id its stream gives it. The step notes in the audit each
// call the stream reports that was not asked about: the trail is then
// every call the CLI made, and a step taken over counts the calls of the
// try that died whole (coordination's callsbefore.go), not only those
// asked about, as the step's live limit counts them all.
type UnaskedCalls interface {
	// CallID is the stream's id of the call a question asks about; ""
	// when the question names none.
	CallID(payload json.RawMessage) string
	// Asked is the question the CLI would have asked of a call its
	// stream reported, for Question.
	Asked(rec providers.ToolRecord) json.RawMessage
}

// Unasked is the By of an audit line of a call its CLI ran without asking;
// UnaskedFailed of one its stream reported as an error (outcome failed),
// which may not have run: Claude Code refuses an edit whose input it finds
// wrong before it would ask.
const (
	Unasked       = "not asked: the CLI's own settings let it run"
	UnaskedFailed = "not asked: the CLI reported it failed (it may not have run)"
)

// gate is a run's end of the permission questions its CLI asks.
type gate struct {
	// ctx ends with the run (its exit, or a kill at a limit, at the
	// grace after its call or at the step's end), not with the step: a
	// question still waiting for a person then refuses itself ("step
	// ended"), so it neither holds the step open until the approval
	// timeout nor stays pending for a person to approve a call that will
	// never run.
	ctx       context.Context
	stop      context.CancelFunc
	cli       Gatekeeper
	permits   providers.Permits
	workspace string // as the CLI sees it
	// sandboxed tells that the CLI runs in the sandbox, whose /workspace
	// is the workspace and /tmp a tmpfs, so its writes there are local
	// (permissions.Sandboxed) as an API agent's run_command's are; bound
	// are the host directories bound writable into it, whose writes are
	// the host's.
	sandboxed bool
	bound     []string
	mask      func(string) string

	mu    sync.Mutex
	asked map[string]bool // the stream ids of the calls asked about
	// idless is set by a question that named no call: from then on no
	// call is noted unasked, for a call both decided and noted would
	// count twice against the step's limit after a takeover.
	idless bool
}

// newGate is a run's gate; end ends its questions.
func newGate(ctx context.Context, cli Gatekeeper, permits providers.Permits, workspace string, mask func(string) string) *gate {
	g := &gate{cli: cli, permits: permits, workspace: workspace, mask: mask}
	g.ctx, g.stop = context.WithCancel(ctx)
	return g
}

// local are a call's actions as they run where the CLI does: in the
// sandbox, its writes to the workspace and scratch dropped.
func (g *gate) local(actions []permissions.Action) []permissions.Action {
	if !g.sandboxed {
		return actions
	}
	return permissions.Sandboxed(actions, g.bound...)
}

// end refuses the questions still waiting, nil-safe.
func (g *gate) end() {
	if g != nil {
		g.stop()
	}
}

// answer decides one question; the verdict's message is the CLI's wire.
// A question it cannot read is refused (fail closed).
func (g *gate) answer(c relay.Call) relay.Verdict {
	g.sawAsked(c.Arguments)
	tool, actions, err := g.cli.Question(c.Arguments, g.workspace)
	if err != nil {
		return relay.Verdict{Message: "refused: " + g.mask(err.Error())}
	}
	actions = g.local(actions)
	if len(actions) == 0 {
		return relay.Verdict{Accepted: true, Message: g.cli.Answer(c.Arguments, true, "")}
	}
	ran, why := g.permits.Check(g.ctx, tool, actions)
	return relay.Verdict{Accepted: true, Message: g.cli.Answer(c.Arguments, ran, why)}
}

// sawAsked keeps the stream's id of the call a question asks about,
// before it is answered, so before the CLI runs the call and its stream
// reports it.
func (g *gate) sawAsked(payload json.RawMessage) {
	uc, ok := g.cli.(UnaskedCalls)
	if !ok {
		return
	}
	id := uc.CallID(payload)
	g.mu.Lock()
	defer g.mu.Unlock()
	if id == "" {
		g.idless = true
		return
	}
	if g.asked == nil {
		g.asked = map[string]bool{}
	}
	g.asked[id] = true
}

// noteUnasked notes a call the CLI's stream reported, when the CLI did not
// ask about it: the rules' verdict on it, and that it ran (it has), by the
// CLI's own settings, or, reported as an error, that it failed. A call of
// the workflow server is the step's own, and the guarded toolbox decided
// it.
func (g *gate) noteUnasked(rec providers.ToolRecord) {
	if g == nil || rec.CallID == "" {
		return
	}
	uc, ok := g.cli.(UnaskedCalls)
	if !ok {
		return
	}
	g.mu.Lock()
	skip := g.idless || g.asked[rec.CallID]
	g.mu.Unlock()
	if skip {
		return
	}
	tool, actions, err := g.cli.Question(uc.Asked(rec), g.workspace)
	actions = g.local(actions)
	if err != nil || len(actions) == 0 {
		return
	}
	d := permissions.Decide(g.permits.Rules(), actions...)
	out, by := permissions.Allowed, Unasked
	if rec.IsError {
		out, by = permissions.Failed, UnaskedFailed
	}
	g.permits.Note(permissions.Record{Tool: tool, Action: d.Action, Risk: d.Risk, Verdict: d.Verdict, Rule: d.Rule, Floor: d.Floor,
		Outcome: out, By: by})
}

// ActionsFor classifies one of a CLI's own tool calls, by the kind of its
// tool: a shell command, a file written or read (its path as the CLI gives
// it, made relative to the workspace when inside it), a URL fetched (its
// host), the web searched, an MCP tool (server/tool).
func ActionsFor(kind ToolKind, target, workspace string) []permissions.Action {
	switch kind {
	case KindShell:
		return permissions.ForCommand(target)
	case KindWrite:
		return []permissions.Action{{Kind: permissions.Write, Target: permissions.PathIn(orDot(target), workspace)}}
	case KindRead:
		return []permissions.Action{{Kind: permissions.Read, Target: permissions.PathIn(orDot(target), workspace)}}
	case KindFetch:
		return []permissions.Action{{Kind: permissions.Net, Target: hostOf(target)}}
	case KindSearch:
		return []permissions.Action{{Kind: permissions.Net, Target: permissions.WebSearch}}
	}
	return []permissions.Action{{Kind: permissions.MCP, Target: target}}
}

// ToolKind is what a CLI's tool does, for ActionsFor.
type ToolKind int

// The kinds of a CLI's tools.
const (
	KindOther  ToolKind = iota // an MCP tool or one not known: mcp(target)
	KindShell                  // target: the command line
	KindWrite                  // target: the path
	KindRead                   // target: the path ("" is the workspace)
	KindFetch                  // target: the URL
	KindSearch                 // the web search
)

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// hostOf is a URL's host (a bare host is itself).
func hostOf(u string) string {
	rest := u
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	if h, _, ok := strings.Cut(rest, ":"); ok && !strings.Contains(h, "[") {
		rest = h
	}
	if rest == "" {
		return u
	}
	return strings.ToLower(rest)
}

// CoarseRecord is one coarse audit line: the rules' verdict on a kind of
// action (target "*" or a generic one), whether the CLI's run settings let
// such a call go on (to its per-call hook, where it has one) or refuse it
// outright, and by what means.
func CoarseRecord(backend string, kind permissions.Kind, target string, v permissions.CoarseVerdict, lets bool, means string) permissions.Record {
	a := permissions.Action{Kind: kind, Target: target}
	out := permissions.Denied
	if lets {
		out = permissions.Allowed
	}
	return permissions.Record{Tool: permissions.RunSettingsTool(backend), Action: a, Risk: permissions.RiskOf(a), Verdict: v.Verdict,
		Rule: means, Outcome: out}
}

// ShellLine quotes argv as one command line for the shell a CLI runs a
// hook's command string with.
func ShellLine(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// WorkspaceWrites is the audit line of writes to the workspace for a CLI
// asked per call: refused by the OS when the sandbox binds the workspace
// read-only (the read-only role), else left to the per-call check.
func WorkspaceWrites(backend string, m permissions.CoarseMode, sandboxed bool, perCall string) permissions.Record {
	if sandboxed && m.SandboxReadOnly {
		return CoarseRecord(backend, permissions.Write, ".", m.WriteWorkspace, false, "refused: the sandbox binds the workspace read-only (the OS refuses); "+perCall)
	}
	return CoarseRecord(backend, permissions.Write, ".", m.WriteWorkspace, true, perCall)
}
