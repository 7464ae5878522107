package coordination

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/criteria"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
)

// Opener returns the provider for a model spec. Host agents never reach it.
type Opener func(spec providers.Spec) (providers.Provider, error)

// Options configure a Service.
type Options struct {
	// Open resolves model specs to providers (required to run server steps).
	Open Opener
	// DefaultTeam names the models used when a team names none.
	DefaultTeam func() ([]string, error)
	// Backends reports what Open can reach from here and the default team
	// (Service.Backends: list_backends, from the same configuration as Open).
	Backends func(ctx context.Context) providers.BackendReport
	// CheckModels, if set, checks a new team's models against their
	// providers' models lists before anything is written: one error per
	// spec, nil when fine or unknown (preflight.go).
	CheckModels func(ctx context.Context, specs []providers.Spec) []error
	// Parallel bounds the provider calls one run makes at once (default 8).
	Parallel int
	// Logger receives diagnostics; the zero value discards them.
	Logger zerolog.Logger
	// Now is the clock (tests); defaults to time.Now.
	Now func() time.Time
	// RelativeDirs makes results show session_dir relative to the state
	// directory (sessions/<id>), never the server's own path: for clients on
	// other machines and tenants, to whom the server's layout is none of
	// their business.
	RelativeDirs bool
	// StateDir is the state directory, never copied from a context
	// directory nor written back to one; defaults to the directory holding
	// the store's sessions/.
	StateDir string
	// Private are the server's own files beside the state directory (a
	// tokens file, the team files): like it, never copied from or listed
	// in a context, shown to a file tool or visible to a command, though a
	// context directory holds them.
	Private []string
	// OnModelCall, if set, is called as each server step's model call goes
	// out and again as it comes back: the process's activity, for a policy
	// that acts while every model is thinking (activity.go). It runs on the
	// step's goroutine and must return at once. It is the process's hook,
	// not a way to hear a session: that is Subscribe.
	OnModelCall func()
	// Reviews gives checkpoint reviews their meaning (review.go):
	// coordination/checkpoint's Reviews, passed by the program that offers
	// reviews. Nil refuses to create a review session, and one already
	// stored can be read but not reviewed in.
	Reviews Reviews
	// RunHeartbeat is how often a run renews its session's run lease, and
	// RunLeaseTTL how long a lease not renewed stays held (at least two
	// heartbeats): DefaultHeartbeat and DefaultLeaseTTL when zero. A run that
	// dies is seen interrupted at once on its host, and after RunLeaseTTL
	// (plus MaxClockSkew) from another one (leaserun.go).
	RunHeartbeat, RunLeaseTTL time.Duration
	// CallLimit bounds the work of a call shared among replicas
	// (sharedcalls.go): DefaultCallLimit when zero.
	CallLimit time.Duration
	// HandOver makes Shutdown leave this service's runs to be taken up
	// again rather than cancel them (serve --resume-interrupted): each
	// stops writing nothing, its lease left to expire, so its session
	// reads interrupted for a server resuming those, another replica or
	// this one started again, to continue.
	HandOver bool
	// Tooling builds each server step's toolbox and starts the agents' MCP
	// servers (tooling.go; coordination/tooling over providers/tools). nil
	// offers the workflow tools alone and refuses agents with MCP servers.
	Tooling Tooling
	// WorkspaceTools is the operator's word on offering the workspace tools
	// (the file tools and run_command): WorkspaceToolsOn, WorkspaceToolsOff,
	// or "" / WorkspaceToolsAuto to decide per session (workspacetools.go).
	WorkspaceTools string
	// Permissions are the server's permission rules (the operator's
	// config), under every agent's own (permissions.go). Zero: the
	// workspace role, risk-based approvals.
	Permissions permissions.Rules
}

// Service is the protocol over a Store: the one road every caller (MCP
// tools, CLI) takes into coordination. Its exported methods are the
// protocol; what it keeps in memory lives in the rooms it composes, most
// with their own state and lock: sessions (setups and derivations), runs (run
// loops and steps' spend), leases, models (opened providers), servers (the
// agents' MCP servers), hosts (host agents' views), sweeps (what the timer
// saw end), statuses (status.json writes) and shown (answers' snapshots).
type Service struct {
	store Store
	files ProjectionStore // the store's projections; nil when it keeps none
	opts  Options
	log   zerolog.Logger

	sessions *sessions     // setups read and states derived, cached while live (sessions.go)
	runs     *runs         // what runs here: run loops and the spend of steps in flight (runs.go)
	leases   *leases       // this service's run and step leases (leaserun.go)
	models   *models       // the providers of the model specs in use (models.go)
	servers  *agentServers // the agents' running MCP servers (mcpservers.go)
	hosts    hosts         // host agents' views and submissions (host.go)
	sweeps   *sweeps       // the sessions the timer has seen end (timer.go)
	// fresh holds the server-driven sessions this service created and has
	// not started yet: their run was asked for before they existed, so it
	// lifts no cancel at all (cancelfence.go). Bounded: a session created
	// and never started here is forgotten, and then counts as a resume.
	fresh *lru[string, struct{}]
	// resumeWaits holds the sessions whose resume failed, and when each
	// may be tried again (resumebackoff.go). Bounded: a wait forgotten
	// is a retry sooner, never a session lost.
	resumeWaits *lru[string, resumeWait]
	// asked holds the sessions whose steps asked a question here since
	// their run began (questions.go): its end closes any left open. An
	// entry lives from a question to its run's end.
	asked    sync.Map
	statuses *statuses   // status.json versions waiting to be written (status.go)
	subs     subscribers // who hears the sessions (observe.go)
	shown    *shown      // snapshots as prompts show them (files.go)
	spool    spool       // spend kept on disk until the store takes it (spendspool.go)
	counts   counts      // what an operator watches (counts.go)

	// The rooms' caches are bounded, so a server that runs for weeks keeps
	// what its live sessions need and not a trace of every session it saw
	// (TestServiceDoesNotGrowWithEverySession). Every one is a cache: an
	// entry let go is read, derived or opened again, never lost.
}

// NewService returns a Service over a store.
func NewService(store Store, opts Options) *Service {
	if opts.Parallel <= 0 {
		opts.Parallel = 8
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	files, _ := store.(ProjectionStore)
	svc := &Service{store: store, files: files, opts: opts, log: opts.Logger,
		sessions: newSessions(store, opts.Reviews), runs: newRuns(), leases: newLeases(store, opts),
		models:  newModels(opts.Open),
		servers: &agentServers{tooling: opts.Tooling, log: opts.Logger, now: opts.Now}, statuses: &statuses{log: opts.Logger},
		sweeps: &sweeps{seen: newLRU[string, uint64](endedMax)}, fresh: newLRU[string, struct{}](endedMax), resumeWaits: newLRU[string, resumeWait](endedMax), shown: &shown{cache: newLRU[string, []providers.FileInfo](shownCacheMax)}}
	svc.hosts = hosts{svc}
	return svc
}

// The caps of the service's caches (the rooms say why each is capped).
const (
	// setupsMax and derivedMax are live sessions stepped here at once (each
	// keeps its prompts, or a ledger and a state); past them a step reads
	// its setup again, builds its prompts and derives again. They are four
	// times the 1,000 concurrent sessions the benchmarks hold a server to
	// (docs/BENCHMARKS.md): at 256, 1,000 sessions stepping in turn found
	// nothing kept (an LRU cycled through by more keys than it holds misses
	// every time), which cost a tenth more CPU per step. Both let a session
	// go when it ends, so only live sessions fill them.
	setupsMax  = 4096
	derivedMax = 4096
	// endedMax is ended step-driven sessions one store lists (an id each).
	endedMax = 1 << 16
	// openedMax is distinct model specs and grants in use at once.
	openedMax = 256
	// tidiedMax is sessions written to here lately (an id each).
	tidiedMax = 1024
	// heldMax is sessions whose calls' holds on their budgets were read
	// lately (a few holds each); holds live only while criteria calls
	// are out, so the cap is reached only by sessions nobody reads again.
	heldMax = 1024
)

// dir is the session's directory, or "" when the store keeps none.
func (svc *Service) dir(id string) string {
	if svc.files != nil {
		return svc.files.Dir(id)
	}
	if ws, ok := svc.store.(WorkspaceStore); ok {
		return ws.WorkDir(id)
	}
	return ""
}

// Store is the service's store.
func (svc *Service) Store() Store { return svc.store }

// DefaultTeam is the models a team that names none gets (Options.DefaultTeam),
// or why there are none: a surface offers the default team only when there
// is one.
func (svc *Service) DefaultTeam() ([]string, error) {
	if svc.opts.DefaultTeam == nil {
		return nil, fmt.Errorf("%w: no models given and no default team; name models such as sim,sim/strong,sim", ErrBadInput)
	}
	return svc.opts.DefaultTeam()
}

// TeamSpec is what a caller gives to create a session.
type TeamSpec struct {
	Task      string
	Models    []string // model specs; or
	Agents    []Agent  // agents with ids and personas
	Rules     Rules
	Context   []string
	Criteria  []criteria.Item
	SessionID string // optional; must match ^[A-Za-z0-9_-]{1,64}$
	Seed      *int64 // optional; random when nil
	Driver    string // DriverRun (default) or DriverStep
	// Review makes the session a checkpoint review (coordination/checkpoint
	// writes it; review.go).
	Review json.RawMessage
	// Contexts are project directories to work on (files.go). A caller
	// that serves clients checks them against its allowed roots first (mcp).
	Contexts []workspace.Context
	// Apply says what happens to a write context as the session finishes:
	// ApplyPreview (the default, "") leaves the winner's changes pending
	// until ApplyChanges; ApplyAuto writes them at once. Only the operator
	// sets it (a team file, the CLI's run --apply).
	Apply string
	// Images come with the task (images.go): sniffed and capped here,
	// stored once through the store's ImageStore, sent to every agent.
	Images []ImageInput
	// ContinueFrom makes the session the next turn of a finished one
	// (turns.go): its final answer, and its winner's files, are where this
	// turn starts; what the spec leaves out (agents, rules, contexts) is the
	// previous turn's.
	ContinueFrom string
	// InheritContext, if set, checks each context directory a follow-up
	// takes from the previous turn: a surface serving clients refuses the
	// ones its client could not have named itself (mcp: the allowed roots).
	InheritContext func(workspace.Context) error
	// Permissions is a client's narrowing of every agent's permission
	// rules (narrow.go): denies and asks added, a stricter role, policy or
	// approval timeout; anything that would widen the operator's refuses
	// the session.
	Permissions *permissions.Rules
	// TeamName, if set, is kept as the session's name for its team
	// (Session.TeamName): a surface that names teams gives it, so that a
	// later request naming the session under another one is refused.
	TeamName string
	// CommandLine says the operator named Models and Agents on its own
	// command line (the CLI's run and checkpoint): their @base_urls are the
	// operator's, and the backend's key goes with them. A surface serving
	// clients leaves it false: their base URLs are a client's, reached
	// without the key (Agent.BaseURLBy). Agents a follow-up turn carries
	// over keep their own mark.
	CommandLine bool
	// CriteriaUsage is what writing Criteria cost before the session
	// existed (run --criteria auto): paid for the session, so recorded as
	// its spend once it is created, in its tokens, cost and budgets.
	CriteriaUsage *providers.Usage
}

var (
	anonIDPattern = regexp.MustCompile(`^agent[0-9]+$`)
)

// ValidSessionID tells whether a client-supplied session id is acceptable.
func ValidSessionID(id string) bool { return validID(id, false) }

// Create validates a team and writes a new session. Nothing is written when
// anything is wrong.
func (svc *Service) Create(ctx context.Context, spec TeamSpec) (*Session, error) {
	if len(spec.Review) > 0 && svc.opts.Reviews == nil {
		return nil, fmt.Errorf("%w: %s", ErrBadInput, noReviewsProblem)
	}
	var prev *previousTurn
	if spec.ContinueFrom != "" {
		var err error
		if prev, err = svc.previousTurn(ctx, &spec); err != nil {
			return nil, err
		}
	}
	s, err := svc.newSession(spec, true)
	if err != nil {
		return nil, err
	}
	if err := svc.narrowAgents(s, spec.Permissions); err != nil {
		return nil, err
	}
	ims, err := svc.withImages(s, spec.Images)
	if err != nil {
		return nil, err
	}
	prev.link(s)
	if err := checkNoNul(s); err != nil {
		return nil, err
	}
	if err := svc.preflight(ctx, s); err != nil {
		return nil, err
	}
	if err := checkBudgetAffordsARound(s); err != nil {
		return nil, err
	}
	if s.Rules.Consensus == RuleWeighted && len(s.Rules.Weights) == 0 {
		ws, err := svc.weightsFromHistory(ctx, s.Agents)
		if err != nil {
			return nil, err
		}
		s.Rules.Weights = ws
	}
	if spec.SessionID != "" {
		s.ID = spec.SessionID
		if err := svc.keepFiles(s); err != nil {
			return nil, err
		}
		if err := svc.store.Create(ctx, s); err != nil {
			have, err := svc.join(ctx, s, spec, err)
			if err != nil {
				return nil, err
			}
			took := svc.takesOverCreation(ctx, have)
			svc.keepCriteriaUsage(ctx, have, spec)
			// A creation that failed after writing the session's row (its
			// images or starting files not stored) is finished by asking
			// again; a base taken before is kept (Team.Start).
			if err := svc.startFiles(have, prev); err != nil {
				return nil, err
			}
			if have.ReadyAt.IsZero() || took {
				if have.ReadyAt.IsZero() {
					if err := svc.putImages(ctx, have, ims); err != nil {
						return nil, err
					}
				}
				var by *Creator
				if took {
					by = thisCreator()
				}
				unlock, err := svc.ready(ctx, have, by)
				if errors.Is(err, errCreatorChanged) {
					// Another process asked again took it over first.
					took = false
				} else if err != nil {
					return nil, err
				}
				if took {
					svc.tookOverCreation(ctx, have)
				}
				unlock()
			}
			svc.settleCriteriaUsage(ctx, have, spec)
			return have, nil
		}
	} else {
		for try := 0; ; try++ {
			s.ID = newSessionID(svc.opts.Now())
			if err := svc.keepFiles(s); err != nil {
				return nil, err
			}
			err := svc.store.Create(ctx, s)
			if err == nil {
				break
			}
			if !isExists(err) || try >= 5 {
				return nil, err
			}
		}
	}
	// What this process kept of a session deleted elsewhere under the
	// same id is not this one's.
	svc.sessions.forget(s.ID)
	svc.keepCriteriaUsage(ctx, s, spec)
	if err := svc.putImages(ctx, s, ims); err != nil {
		return nil, err
	}
	if err := svc.startFiles(s, prev); err != nil {
		return nil, err
	}
	if s.Driver != DriverStep {
		svc.fresh.Put(s.ID, struct{}{})
	}
	svc.turnCreated(s, prev)
	svc.event(ctx, s.ID, Event{Type: "session_created", Message: fmt.Sprintf("team of %s created", Count(len(s.Agents), "agent"))})
	unlock, err := svc.ready(ctx, s, nil)
	if err != nil {
		// No session was made for a run here: its run, when asked, is a
		// resume whose cancels count.
		svc.fresh.DeleteIf(s.ID, func(struct{}) bool { return true })
		return nil, err
	}
	svc.writeStatus(ctx, s, svc.sessions.derive(s, &Ledger{Agents: map[string][]Entry{}}, nil), nil)
	unlock()
	svc.settleCriteriaUsage(ctx, s, spec)
	return s, nil
}

// keepCriteriaUsage records, as s's spend, what writing its criteria cost
// before it was created (TeamSpec.CriteriaUsage), as soon as its row is
// stored: a later step of the creation (its images, its starting files)
// may fail, and the call was paid for all the same. A session joined
// under its id gets it too: this creation's call was paid for it. It is
// not settled here (settleCriteriaUsage): a settle could end a session
// whose creation has not finished.
func (svc *Service) keepCriteriaUsage(ctx context.Context, s *Session, spec TeamSpec) {
	u := spec.CriteriaUsage
	if u == nil {
		return
	}
	r := svc.criteriaUsageRecord(*u, "criteria call, before the session was created")
	if r == nil {
		return
	}
	unlock, err := svc.store.LockSession(ctx, s.ID)
	if err == nil {
		err = svc.writeUsage(context.WithoutCancel(ctx), s.ID, r, false, nil)
		unlock()
	}
	if err != nil {
		// An outage keeps it and records it once the store answers, as
		// it keeps a cancelled call's (recordUsage).
		svc.recordUsage(ctx, s, r, err)
	}
}

// settleCriteriaUsage settles a session created whole with the criteria
// spend keepCriteriaUsage recorded, so its status counts it from the start.
func (svc *Service) settleCriteriaUsage(ctx context.Context, s *Session, spec TeamSpec) {
	if spec.CriteriaUsage == nil {
		return
	}
	if _, err := svc.settle(ctx, s.ID, "", ""); err != nil {
		svc.log.Warn().Err(err).Str("session", s.ID).Msg("could not settle after recording the criteria call's usage")
	}
}

// ready stamps s as stored whole (Session.ReadyAt), the last write of its
// creation, by (if not nil) as its creator, and returns the session lock it
// did so under, still held. A session created for a run counts
// NeverStartedGrace from this stamp: counted from CreatedAt, stamped
// before the models were checked and the starting files stored, a slow
// creation was taken up as one its creator had left while its creator was
// still storing them (neverstarted.go).
func (svc *Service) ready(ctx context.Context, s *Session, by *Creator) (unlock func(), err error) {
	unlock, err = svc.store.LockSession(ctx, s.ID)
	if err != nil {
		return nil, fmt.Errorf("session %s is stored but its creation did not finish: %w", s.ID, err)
	}
	var lost error
	if by != nil {
		// The takeover was decided before the lock: another process asked
		// again for the same team at once may have taken the creation over
		// since (or a run claimed it), so it is decided again on the
		// session as stored now. Two processes both taking it over would
		// each count it created for its own run, and the one refused a
		// slot would record it cancelled as the other starts it.
		if cur, err := svc.store.Session(ctx, s.ID); err != nil || !svc.takesOverCreation(ctx, cur) {
			if !s.ReadyAt.IsZero() {
				return unlock, errCreatorChanged
			}
			by, lost = nil, errCreatorChanged // its creation is still to be ended
		}
	}
	at := svc.now()
	if err := svc.store.SetReady(ctx, s.ID, at, by); err != nil {
		unlock()
		return nil, fmt.Errorf("session %s is stored but its creation did not finish: %w", s.ID, err)
	}
	s.ReadyAt = at
	if by != nil {
		s.Creator = by
	}
	return unlock, lost
}

// errCreatorChanged says a creation ready meant to take over was not
// taken over: decided again under the session lock, it was no longer
// one to take (another process asked again took it first, or a run
// claimed it). The session lock is held all the same.
var errCreatorChanged = errors.New("the creation was taken over by another process first")

// newSession checks a team spec and fills in ids, rules and aliases. With
// open, every agent's provider is opened too, so a missing key or backend
// is refused now (an estimate, which calls nothing, skips that).
func (svc *Service) newSession(spec TeamSpec, open bool) (*Session, error) {
	task := strings.TrimSpace(spec.Task)
	if task == "" {
		return nil, fmt.Errorf("%w: the task is empty; say what the team should do", ErrBadInput)
	}
	if spec.SessionID != "" && !ValidSessionID(spec.SessionID) {
		return nil, fmt.Errorf("%w: session id %q must be 1-64 letters, digits, '_' or '-'", ErrBadInput, spec.SessionID)
	}
	agents := append([]Agent(nil), spec.Agents...)
	if len(agents) > 0 && len(spec.Models) > 0 {
		return nil, fmt.Errorf("%w: give either models or agents, not both", ErrBadInput)
	}
	if len(agents) == 0 {
		models := spec.Models
		if len(models) == 0 {
			var err error
			if models, err = svc.DefaultTeam(); err != nil {
				return nil, err
			}
		}
		for _, m := range models {
			agents = append(agents, Agent{Model: m})
		}
	}
	if len(agents) > MaxAgents {
		return nil, fmt.Errorf("%w: a team has at most %d agents; got %d", ErrBadInput, MaxAgents, len(agents))
	}
	// Models named by the caller: a backend without a key is left out while
	// two or more agents remain, as MassGen's skill skips keyless backends.
	explicit := len(spec.Models) > 0 || len(spec.Agents) > 0
	var keyless []DroppedAgent
	var keylessWhy []error
	seen := map[string]bool{}
	for i := range agents {
		a := &agents[i]
		if a.ID == "" {
			a.ID = defaultAgentID(i)
		}
		switch {
		case !validID(a.ID, false): // stricter than stores, which also read MassGen's dotted ids
			return nil, fmt.Errorf("%w: agent id %q must be 1-64 letters, digits, '_' or '-'", ErrBadInput, a.ID)
		case anonIDPattern.MatchString(a.ID):
			return nil, fmt.Errorf("%w: agent id %q looks like an alias (agentN); choose another, e.g. agent_a", ErrBadInput, a.ID)
		case seen[a.ID]:
			return nil, fmt.Errorf("%w: agent id %q is used twice", ErrBadInput, a.ID)
		}
		seen[a.ID] = true
		sp, err := providers.ParseSpec(a.Model)
		if err != nil {
			return nil, fmt.Errorf("%w: agent %s: %w", ErrBadSpec, a.ID, err)
		}
		a.Model = sp.String()
		a.markBaseURL(sp, spec.CommandLine)
		if sp.Backend != "host" && open {
			// Open now, so a missing key or an unavailable backend is refused
			// before anything is written rather than failing every step.
			if _, err := svc.models.agent(*a); err != nil {
				shown := providers.ShowSpec(a.Model)
				why := fmt.Errorf("agent %s (%s): %w", a.ID, shown, err)
				if errors.Is(err, providers.ErrMissingKey) {
					keyless = append(keyless, DroppedAgent{AgentID: a.ID, Model: shown, Class: ClassMissingKey, Message: why.Error()})
					keylessWhy = append(keylessWhy, why)
					continue
				}
				// A spec that parsed, refused here (no key, no CLI, a
				// backend this build cannot call): its words, ErrBadSpec's class.
				return nil, listedQuietly(ErrBadSpec, "", []error{why})
			}
		}
		if a.Temperature != nil && (*a.Temperature < 0 || *a.Temperature > 2) {
			return nil, fmt.Errorf("%w: agent %s: temperature %g must be between 0 and 2", ErrBadInput, a.ID, *a.Temperature)
		}
		if err := a.checkPrices(); err != nil {
			return nil, err
		}
		if a.MaxOutputTokens < 0 || a.MaxOutputTokens > MaxOutputTokensLimit {
			return nil, fmt.Errorf("%w: agent %s: max_output_tokens %d must be between 0 (the model's default) and %d", ErrBadInput, a.ID, a.MaxOutputTokens, MaxOutputTokensLimit)
		}
		switch a.ReasoningEffort {
		case "", "minimal", "low", "medium", "high":
		default:
			return nil, fmt.Errorf("%w: agent %s: reasoning_effort %q must be minimal, low, medium or high", ErrBadInput, a.ID, a.ReasoningEffort)
		}
	}
	if len(keyless) > 0 {
		if !explicit || spec.Rules.Strict || len(agents)-len(keyless) < 2 {
			return nil, listedQuietly(ErrBadSpec, fmt.Sprintf("%d agents have no key here, so the team was not started:", len(keylessWhy)), keylessWhy)
		}
		agents = slices.DeleteFunc(agents, func(a Agent) bool {
			return slices.ContainsFunc(keyless, func(d DroppedAgent) bool { return d.AgentID == a.ID })
		})
		for _, d := range keyless {
			svc.log.Warn().Str("agent", d.AgentID).Str("model", d.Model).Msg("left out of the team: its backend has no key here")
		}
	}
	if spec.Driver != DriverStep {
		for _, a := range agents {
			if a.IsHost() {
				return nil, fmt.Errorf("%w: %s is a host agent", ErrHostInRunTeam, a.ID)
			}
		}
	}
	rules, err := spec.Rules.Normalize()
	if err != nil {
		return nil, err
	}
	for _, w := range rules.Weights {
		if !slices.ContainsFunc(agents, func(a Agent) bool { return a.ID == w.Agent }) {
			return nil, fmt.Errorf("%w: weights name %s, which is not an agent of this team", ErrBadSettings, w.Agent)
		}
	}
	seed := randomSeed()
	if spec.Seed != nil {
		if seed = *spec.Seed; seed > MaxSeed || seed < -MaxSeed {
			return nil, fmt.Errorf("%w: seed %d is out of range: it must be between -%d and %d (2^53-1), so JSON clients read it exactly", ErrBadInput, seed, MaxSeed, MaxSeed)
		}
	}
	s := &Session{
		Task:      task,
		Context:   spec.Context,
		Criteria:  spec.Criteria,
		Rules:     rules,
		Seed:      seed,
		Agents:    agents,
		CreatedAt: svc.opts.Now().UTC(),
		Driver:    DriverRun,
		Review:    spec.Review,
		Dropped:   keyless,
		TeamName:  spec.TeamName,
		Creator:   thisCreator(),
		reviews:   svc.opts.Reviews,
	}
	if spec.Driver == DriverStep {
		s.Driver = DriverStep
	}
	switch spec.Apply {
	case "", ApplyPreview:
	case ApplyAuto:
		s.Apply = ApplyAuto
	default:
		return nil, fmt.Errorf("%w: apply %q: write %s (write the winner's changes as the session finishes) or %s (the default: leave them pending until they are applied)", ErrBadInput, spec.Apply, ApplyAuto, ApplyPreview)
	}
	s.Aliases = assignAliases(s.AgentIDs(), seed, rules.Aliases)
	if len(spec.Contexts) > 0 {
		cs, err := workspace.Resolve(spec.Contexts, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		blocks, err := svc.contextBlocks(cs)
		if err != nil {
			return nil, err
		}
		s.Contexts = cs
		s.Context = append(append([]string(nil), s.Context...), blocks...)
	}
	return s, nil
}

// defaultAgentID names agents agent_a, agent_b, …, agent_p.
func defaultAgentID(i int) string { return "agent_" + string(rune('a'+i)) }

func newSessionID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "team_" + now.UTC().Format("20060102_150405") + "_" + hex.EncodeToString(b[:])
}

// MaxSeed is the largest seed a session takes: 2^53-1, the largest integer
// a JSON client that reads numbers as float64 (JavaScript) keeps exactly.
const MaxSeed = 1<<53 - 1

// randomSeed draws a seed of 53 bits (see MaxSeed).
func randomSeed() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return int64(binary.LittleEndian.Uint64(b[:]) >> 11)
}

func hasEntries(l *Ledger) bool {
	for _, es := range l.Agents {
		if len(es) > 0 {
			return true
		}
	}
	return false
}

// complete tells whether completeLedger would leave l as it is.
func complete(l *Ledger) bool {
	for id, entries := range l.Agents {
		for i := range entries {
			e := &entries[i]
			if e.Agent != id || (i > 0 && e.Step < entries[i-1].Step) ||
				(e.Kind == KindAnswer && (e.AnswerNum == 0 || e.Label == "")) ||
				(e.Kind == KindVote && e.TargetLabel == "" && e.Target != "") {
				return false
			}
		}
	}
	return true
}

// hasEnded tells a state whose session has ended: finished, failed or
// cancelled (until it is resumed).
func hasEnded(st *State) bool {
	switch st.Life.Status {
	case StatusFinished, StatusFailed, StatusCancelled:
		return true
	}
	return false
}

// completeLedger orders entries by step and fills answer numbers and labels
// that a MassGen-written ledger does not store.
func completeLedger(s *Session, l *Ledger) {
	if complete(l) {
		return // nothing to do, and a lent ledger must not be written to
	}
	for id, entries := range l.Agents {
		sort.SliceStable(entries, func(i, j int) bool { return entries[i].Step < entries[j].Step })
		k := 0
		for i := range entries {
			e := &entries[i]
			if e.Agent == "" {
				e.Agent = id
			}
			if e.Kind != KindAnswer {
				continue
			}
			k++
			if e.AnswerNum == 0 {
				e.AnswerNum = k
			}
			if e.Label == "" {
				e.Label = AnswerLabel(s.Aliases[id], e.AnswerNum)
			}
		}
	}
	// MassGen's vote.json names the target but not the label the voter saw:
	// it is the target's answer at the step the voter had seen.
	for _, entries := range l.Agents {
		for i := range entries {
			if e := &entries[i]; e.Kind == KindVote && e.TargetLabel == "" && e.Target != "" {
				e.TargetLabel = labelSeen(l.Agents[e.Target], e.SeenSteps[e.Target])
			}
		}
	}
}

// labelSeen is the label of an agent's latest answer at or before a step;
// with none (a vote that saw nothing of its target), its first answer's.
func labelSeen(entries []Entry, step int) string {
	label := ""
	for _, e := range entries {
		if e.Kind != KindAnswer {
			continue
		}
		if label == "" || e.Step <= step {
			label = e.Label
		}
		if e.Step >= step {
			break
		}
	}
	return label
}

func (svc *Service) event(ctx context.Context, id string, ev Event) {
	if ev.Time.IsZero() {
		ev.Time = svc.opts.Now().UTC()
	}
	if err := svc.store.AppendEvent(ctx, id, ev); err != nil {
		svc.log.Warn().Err(err).Str("session", id).Msg("could not append event")
	}
}

// sessionDir is a session's directory as results show it.
func (svc *Service) sessionDir(id string) string {
	dir := svc.dir(id)
	if dir != "" && svc.opts.RelativeDirs {
		return filepath.Join("sessions", filepath.Base(dir))
	}
	return dir
}

// IsHost tells whether the agent is driven by the outer agent. Models are
// stored in canonical form ("host" or "host/label"), so no parsing is needed.
func (a Agent) IsHost() bool {
	return a.Model == "host" || strings.HasPrefix(a.Model, "host/")
}

// IsHuman tells whether the agent is a person (backend human), asked
// through an asker.
func (a Agent) IsHuman() bool {
	return a.Model == "human" || strings.HasPrefix(a.Model, "human/")
}
