package coordination

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
)

// AgentTools are an agent's tool settings. They come from the operator's
// team file only (mcp refuses every one of them from a client): they decide
// what runs on this machine and what reaches the network.
type AgentTools struct {
	// WebSearch offers the API's own web search tool (web_search: true,
	// MassGen's enable_web_search).
	WebSearch bool `json:"web_search,omitempty"`
	// Allowed, when set, are the only tools offered (MassGen's
	// allowed_tools); Excluded are never offered (exclude_tools).
	Allowed  []string `json:"allowed_tools,omitempty"`
	Excluded []string `json:"exclude_tools,omitempty"`
	// NoSandbox is `sandbox: none`: run_command runs unconfined in the
	// workspace. The team-file loader prints a warning for it.
	NoSandbox bool `json:"sandbox_none,omitempty"`
	// Network lets commands reach the network, loopback services included.
	Network bool `json:"network,omitempty"`
	// MCPServers are the agent's MCP servers (MassGen's mcp_servers),
	// started once per session by the Tooling and offered as
	// mcp__<server>__<tool> (mcpservers.go). Secrets in their env and
	// headers are written as ${VAR} and expand from the server's
	// environment when they start, so session.json holds only the
	// reference.
	MCPServers map[string]MCPServer `json:"mcp_servers,omitempty"`
	// Permissions are the agent's permission rules (permissions.go): its
	// team file's, the team's `permissions:` under the agent's own. Nil:
	// the server's (Options.Permissions) alone.
	Permissions *permissions.Rules `json:"permissions,omitempty"`
}

// stepKit is what a server step gives its provider besides the prompt: the
// toolbox bound to the step's places, its limits, and the recorder of its
// tool calls, which becomes the step's tools.jsonl once the step lands.
type stepKit struct {
	box    providers.Toolbox // nil: no tools this step
	lazy   *lazyToolbox      // box's own, closed at the step's end
	max    int
	budget int64
	web    bool
	rec    toolRecorder
	spend  *stepSpend // the session's budgets as the step sees them; nil: none
	guard  *guard     // the step's decision point, for a CLI agent's own calls
	// triedBefore is how long earlier tries of the step ran on processes
	// that died (stepClaim.before): its timeout counts them. callsBefore
	// is how many tool calls the earlier tries of its run of claims made
	// (callsbefore.go): its max_tool_calls_per_step counts them.
	triedBefore time.Duration
	callsBefore int
}

// before is the kit's triedBefore; 0 for a nil kit.
func (k *stepKit) before() time.Duration {
	if k == nil {
		return 0
	}
	return k.triedBefore
}

// stepKit builds the kit of an agent's step, under claim (nil for a store
// without step leases). A step with no place to read
// or write gets no toolbox, nor does one on a Service without Tooling; a
// session whose workspace tools are off (workspacetools.go) gives its steps
// no places, so only its agents' MCP servers make a toolbox;
// neither does one whose places cannot be bound (logged): it still runs,
// with the workflow tools alone.
func (svc *Service) stepKit(ctx context.Context, s *Session, st *State, v *view, lock StepLock, claim *stepClaim, mcp MCPServers) *stepKit {
	step := lock.Step()
	ag, _ := s.Agent(v.Agent)
	set := AgentTools{}
	if ag.Tools != nil {
		set = *ag.Tools
	}
	g := &guard{svc: svc, session: s.ID, agent: v.Agent, step: step, lease: claim.leaseVersion(), rules: svc.agentRules(ag),
		sandboxed: !set.NoSandbox}
	k := &stepKit{max: s.Rules.MaxToolCallsPerStep, web: set.WebSearch && g.webSearchAllowed(ctx), spend: svc.runs.openSpend(ctx, s, st, lock, svc.log), guard: g,
		triedBefore: claim.before(st.Agent(v.Agent)), callsBefore: svc.callsBefore(ctx, s.ID, v.Agent, step, claim)}
	k.budget = tokensLeft(s, st)
	tooling := svc.opts.Tooling
	p := StepPlaces{SessionID: s.ID, AgentID: v.Agent, Settings: set, Hide: svc.hiddenPaths(s), MCP: mcp, ReadOnly: g.rules.Role.SandboxReadOnly()}
	if workspaceToolsOn(s) {
		p.Workspace, p.Contexts, p.Shown = v.Workspace, v.Contexts, v.Shown
	}
	if tooling == nil || (p.Workspace == "" && len(p.Contexts) == 0 && !showsFiles(p.Shown) && mcp == nil) {
		return k
	}
	k.lazy = &lazyToolbox{build: func() (providers.Toolbox, error) { return tooling.Toolbox(ctx, p) },
		allowed: set.Allowed, excluded: set.Excluded, log: func(err error) {
			svc.log.Warn().Err(err).Str("session", s.ID).Str("agent", v.Agent).Msg("the step's tools could not be set up; it runs with the workflow tools alone")
		}}
	k.box = &guardedToolbox{g: g, inner: k.lazy}
	return k
}

// close closes the step's toolbox once its call is over (providers/tools':
// the peers' trees its commands shared); nil for a kit without one.
func (k *stepKit) close() error {
	if k == nil || k.lazy == nil {
		return nil
	}
	return k.lazy.close()
}

// equip puts the kit into the request of one attempt of the step, after
// the step's earlier attempts spent used. The attempts share the step's
// limits (each is a new Provider.Step, whose loop or CLI counts from
// nothing): an attempt gets what the earlier ones left of the tool calls
// (toolCalls: from the step's tool records, and callsBefore: those of
// the earlier tries of its run of claims, which did not land) and of the
// token budget. With
// none left of either, no attempt is made: spent says which (its class and
// why), "" otherwise.
func (k *stepKit) equip(req *providers.Request, used providers.Usage) (class providers.Class, spent string) {
	if k == nil {
		return "", ""
	}
	if k.box != nil {
		req.Toolbox = k.box
	}
	// Always a recorder: a CLI agent records its own tools (its edits and
	// commands) whether or not the session offers API steps the workspace
	// tools, and a step that records nothing writes no tools.jsonl.
	req.Record = &k.rec
	limit := k.max
	if limit <= 0 {
		limit = providers.DefaultMaxToolCalls
	}
	made := k.callsBefore + k.rec.toolCalls()
	if made >= limit {
		if k.callsBefore > 0 {
			return providers.ClassToolCalls, fmt.Sprintf("its %d tool calls (max_tool_calls_per_step) spent, %d of them on earlier tries of the step that did not land", limit, min(k.callsBefore, limit))
		}
		return providers.ClassToolCalls, fmt.Sprintf("its %d tool calls (max_tool_calls_per_step) spent", limit)
	}
	req.MaxToolCalls, req.TokenBudget, req.WebSearch = limit-made, k.budget, k.web
	if k.budget > 0 {
		left := k.budget - used.Tokens()
		if left <= 0 {
			return providers.ClassBudget, fmt.Sprintf("its share of the session's token_budget (%d tokens) spent", k.budget)
		}
		req.TokenBudget = left
	}
	if k.spend != nil { // a nil *stepSpend in the interface would not be nil
		req.Spend = k.spend
	}
	if k.guard != nil {
		req.Permits = k.guard // a CLI agent's own tool calls (clipermits.go)
	}
	return "", ""
}

// hiddenPaths are what no command or file tool may see: the state
// directory and the server's other files (Options.Private).
func (svc *Service) hiddenPaths(s *Session) []string {
	out := slices.Clone(svc.opts.Private)
	if state := svc.stateDir(s.ID); state != "" {
		out = append(out, state)
	}
	return out
}

// stateDir is Options.StateDir, else the directory holding the store's
// sessions/ (the session id's, for a store that keeps one per session);
// "" for a store of no directory.
func (svc *Service) stateDir(id string) string {
	if svc.opts.StateDir != "" {
		return svc.opts.StateDir
	}
	if st, ok := svc.store.(sessionsDirer); ok && st.SessionsDir() != "" {
		return filepath.Dir(st.SessionsDir())
	}
	if dir := svc.dir(id); dir != "" {
		return filepath.Dir(filepath.Dir(dir)) // <state>/sessions/<id>
	}
	return ""
}

// showsFiles says whether any answer shown has a snapshot to read.
func showsFiles(shown []providers.ShownAnswer) bool {
	return slices.ContainsFunc(shown, func(a providers.ShownAnswer) bool { return a.FilesDir != "" })
}

// lazyToolbox builds the step's toolbox when the provider first asks for
// its tools: a provider that never asks (sim) costs nothing; a CLI agent
// asks, for the MCP server tools its workflow server serves. It offers only
// the tools the agent's settings allow.
type lazyToolbox struct {
	build             func() (providers.Toolbox, error)
	allowed, excluded []string
	log               func(error)

	once  sync.Once
	box   providers.Toolbox
	tools []providers.Tool
}

func (l *lazyToolbox) load() {
	l.once.Do(func() {
		box, err := l.build()
		if err != nil {
			l.log(err)
			return
		}
		l.box = box
		for _, t := range box.Tools() {
			if l.permits(t.Name) {
				l.tools = append(l.tools, t)
			}
		}
	})
}

// close closes the toolbox built, if it has a Close; none is built after.
func (l *lazyToolbox) close() error {
	l.once.Do(func() {})
	if c, ok := l.box.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (l *lazyToolbox) permits(name string) bool {
	if len(l.allowed) > 0 && !slices.Contains(l.allowed, name) {
		return false
	}
	return !slices.Contains(l.excluded, name)
}

// Tools implements providers.Toolbox.
func (l *lazyToolbox) Tools() []providers.Tool {
	l.load()
	return l.tools
}

// MCPTool implements providers.MCPNamer for the toolbox it builds.
func (l *lazyToolbox) MCPTool(name string) (server, tool string, ok bool) {
	l.load()
	if n, is := l.box.(providers.MCPNamer); is {
		return n.MCPTool(name)
	}
	return "", "", false
}

// Call implements providers.Toolbox.
func (l *lazyToolbox) Call(ctx context.Context, name string, args json.RawMessage) (providers.ToolResult, error) {
	l.load()
	if l.box == nil || !l.permits(name) {
		return providers.ToolResult{IsError: true, Content: fmt.Sprintf("%s is not offered in this step", name)}, nil
	}
	return l.box.Call(ctx, name, args)
}

// toolRecorder keeps a step's tool records, redacted as they arrive.
type toolRecorder struct {
	mu   sync.Mutex
	recs []providers.ToolRecord
}

// Record implements providers.Recorder. Arguments are masked for anything
// shaped like a key (providers.MaskKeys; the provider's own key is masked
// before it gets here, by keys.Redact), so a model that pastes a token into
// a command never puts it on disk.
func (r *toolRecorder) Record(rec providers.ToolRecord) {
	rec.Arguments = providers.MaskJSON(rec.Arguments, providers.MaskKeys)
	r.mu.Lock()
	r.recs = append(r.recs, rec)
	r.mu.Unlock()
}

// toolCalls is how many tool calls the records hold, as the step's limits
// count them: every record but a web search (an API agent's loop and a CLI
// agent's limits both leave searches out).
func (r *toolRecorder) toolCalls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, rec := range r.recs {
		if rec.Kind != "web_search" {
			n++
		}
	}
	return n
}

func (r *toolRecorder) records() []providers.ToolRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.recs)
}

// keepToolLog stores a landed step's tool records, when there are any and
// the store keeps tool logs. A failure is logged, never the step's: the
// entry is already written.
func (svc *Service) keepToolLog(ctx context.Context, s *Session, agent string, step int, k *stepKit) {
	if k == nil {
		return
	}
	recs := k.rec.records()
	log, ok := svc.store.(ToolLog)
	if len(recs) == 0 || !ok {
		return
	}
	if err := log.WriteToolLog(context.WithoutCancel(ctx), s.ID, agent, step, recs); err != nil {
		svc.log.Warn().Err(err).Str("session", s.ID).Str("agent", agent).Int("step", step).Msg("the step's tools.jsonl could not be written")
	}
}
