package mcp

import (
	"context"
	_ "embed"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
)

//go:embed instructions.md
var instructions string

// Name is the server name announced to clients.
const Name = "massgen-mcp"

// Defaults of Options.
const (
	// DefaultWaitLimit is how long a call blocks before it returns what to
	// call next (run_team without wait, checkpoint, step, finalize_team,
	// generate_eval_criteria): under the 60 s at which Gemini CLI and many
	// other MCP clients cut a call (pending.go).
	DefaultWaitLimit = 50 * time.Second
	// DefaultHeartbeat keeps progress flowing at least every 10 s (under the
	// 15 s the design promises), which resets
	// the idle timeouts of clients that honour progress.
	DefaultHeartbeat = 10 * time.Second
	// DefaultStdioWorkers is the stdio transport's tool-call worker pool. Every
	// blocking run_team holds one worker for its whole wait, and mcp-go's
	// default of 5 would let five of them starve team_status, step and
	// list_backends.
	DefaultStdioWorkers = 64
	// DefaultDeliveryTimeout bounds how long a handler waits for its queued
	// progress notifications to be written before it returns (see progress.go).
	DefaultDeliveryTimeout = 2 * time.Second
)

// Options configure a Server. The zero value is usable: every unset field
// takes its default.
type Options struct {
	// Version is announced in serverInfo.
	Version string
	// WaitLimit is how long a call blocks before it returns what to call
	// next while its work goes on (pending.go).
	WaitLimit time.Duration
	// Tools are the tools offered (serve --tools); the zero value offers
	// every tool.
	Tools ToolSet
	// Heartbeat is the longest gap between two progress notifications while
	// work runs.
	Heartbeat time.Duration
	// Roots are the directories under which context file paths may be read;
	// none means context can only be given as text.
	Roots []string
	// WriteRoots are the directories under which a client may also name a
	// write context (serve --allow-root-write), whose winner's changes are
	// applied back; they are readable too. A client's write context
	// anywhere else is refused: Roots are read-only. A team file's
	// directories are the operator's and need no root.
	WriteRoots []string
	// Private are the server's own paths (the state directory, a tokens
	// file, the team files): a client's context or image path never
	// leads to one, though a root holds it (clientPaths).
	Private []string
	// TeamsDir holds the operator's team files (serve --teams-dir), named by
	// the team argument of run_team and start_team; "" offers none.
	TeamsDir string
	// StrictConfig refuses team files with settings massgen-mcp does not
	// honour (serve --strict-config).
	StrictConfig bool
	// StdioWorkers sizes the stdio tool-call worker pool.
	StdioWorkers int
	// DeliveryTimeout bounds the wait for progress notifications to be written
	// before a result is returned.
	DeliveryTimeout time.Duration
	// ValidateOutput checks every result against its tool's result types
	// (results.go) before it is sent. The tests turn it on, which is where
	// the contract is kept; in production it would double the cost of a
	// cheap call like team_status.
	ValidateOutput bool
	// MaxRuns and MaxRunsPerTenant cap the teams run at once (run_team,
	// checkpoint), server-wide and per tenant; zero means no cap.
	MaxRuns, MaxRunsPerTenant int
	// Tenants opens each tenant's service (its own store); nil serves every
	// caller from the one service New is given (single tenant).
	Tenants TenantServices
	// Logger receives diagnostics (always stderr in the binary).
	Logger zerolog.Logger
}

func (o Options) withDefaults() Options {
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.WaitLimit <= 0 {
		o.WaitLimit = DefaultWaitLimit
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.StdioWorkers <= 0 {
		o.StdioWorkers = DefaultStdioWorkers
	}
	if o.DeliveryTimeout <= 0 {
		o.DeliveryTimeout = DefaultDeliveryTimeout
	}
	return o
}

// Server is massgen-mcp's MCP server: the tools, resources and prompt over one
// coordination service, ready to be served over stdio or HTTP.
type Server struct {
	mcp      *server.MCPServer
	handler  *handler
	receipts *receipts
	// sizeRules are each tool's argument caps, by tool name (bounds.go).
	sizeRules map[string]*sizeRule

	mu             sync.Mutex
	tenantReceipts map[string]*receipts // other tenants' (HTTP)
	// cancels are the HTTP requests in flight, by tenant and id (httpcancel.go).
	cancels *httpCancels
}

// handler is what every tool, resource and prompt handler is a method of:
// the tenants' services, the run limits and the server's options.
type handler struct {
	tenants *tenants
	runs    *runLimits
	flights *flights // calls that outlive their wait (pending.go)
	opts    Options
	log     zerolog.Logger
	metrics *metrics // served at /metrics (metrics.go)
	// progressSent, if set (tests), learns how many progress notifications
	// a request queued once its reporting has stopped.
	progressSent func(token any, sent int)
	// questions are human agents' questions for the user (human.go).
	questions *questions
	// tasks are run_team calls made MCP tasks (tasks.go).
	tasks *taskTable
	// serving is the context ServeStdio serves until (nil: not serving
	// stdio): a request ended because it ended, the server's own stop,
	// leaves the run it started to the stop (stopRuns), which cancels it
	// or, with coordination.Options.HandOver, hands it over; a request
	// ended by its client (gone away, or a cancel notification) cancels it.
	serving atomic.Pointer[context.Context]
}

// stopping tells whether the server's own stop ended its requests.
func (h *handler) stopping() bool {
	ctx := h.serving.Load()
	return ctx != nil && (*ctx).Err() != nil
}

// New builds the server over a coordination service: the default tenant's
// (Options.Tenants opens the others').
func New(svc *coordination.Service, opts Options) *Server {
	opts = opts.withDefaults()
	h := &handler{tenants: newTenants(svc, opts.Tenants), runs: newRunLimits(opts.MaxRuns, opts.MaxRunsPerTenant), flights: newFlights(), questions: newQuestions(), tasks: newTaskTable(), opts: opts, log: opts.Logger}
	serverOpts := []server.ServerOption{
		server.WithTitle("MassGen team"),
		server.WithDescription("Runs a team of AI agents on one task until their votes agree (the MassGen protocol)."),
		server.WithInstructions(instructionsFor(opts.Tools)),
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(false, false),
		server.WithPromptCapabilities(false),
		server.WithRecovery(),
		server.WithResourceRecovery(),
		// Input arguments are checked by each handler (arguments.go), with
		// messages a model can act on.
		// The tool list never changes while the server runs.
		server.WithMethodCacheHints(mcpgo.MethodToolsList, 3_600_000, mcpgo.CacheScopePublic),
		server.WithMethodCacheHints(mcpgo.MethodPromptsList, 3_600_000, mcpgo.CacheScopePublic),
	}
	// The consensus map is an MCP App (app.go); run_team becomes a task
	// for a client that declares the extension on its call (tasks.go).
	exts := map[string]any{extApps: map[string]any{"mimeTypes": []string{appMIME}}}
	if opts.Tools.Has("run_team") {
		exts[extTasks] = map[string]any{}
	}
	serverOpts = append(serverOpts, server.WithExtensions(exts))
	if opts.ValidateOutput {
		serverOpts = append(serverOpts, server.WithToolHandlerMiddleware(newResultCheck().middleware))
	}
	h.metrics = newMetrics(h.tenants)
	serverOpts = append(serverOpts, server.WithToolHandlerMiddleware(h.metrics.middleware), server.WithToolHandlerMiddleware(linksForItsProtocol), server.WithToolHandlerMiddleware(linkApp))
	hooks := &server.Hooks{}
	(&listenAcks{deliver: opts.DeliveryTimeout}).hooks(hooks)
	hooks.AddOnRequestInitialization(refuseUnoffered(opts.Tools))
	serverOpts = append(serverOpts, server.WithHooks(hooks))
	s := server.NewMCPServer(Name, opts.Version, serverOpts...)
	var offered []server.ServerTool
	for _, t := range tools(h) {
		if opts.Tools.Has(t.Tool.Name) {
			offered = append(offered, t)
		}
	}
	s.AddTools(offered...)
	s.AddResources(resources(h)...)
	s.AddResourceTemplates(resourceTemplates(h)...)
	if opts.Tools.Has("start_team") && opts.Tools.Has("step") {
		// The prompt walks through start_team and step.
		s.AddPrompts(prompts(h)...)
	}
	rules := map[string]*sizeRule{}
	for _, t := range offered {
		rules[t.Tool.Name] = sizeRules(enforced(t.Tool.RawInputSchema))
	}
	return &Server{mcp: s, handler: h, receipts: newReceipts(), tenantReceipts: map[string]*receipts{}, cancels: newHTTPCancels(), sizeRules: rules}
}

// instructionsFor is the instructions a client reads: the whole surface's,
// and which tools of it this server offers when the operator chose some.
func instructionsFor(set ToolSet) string {
	if set.All() {
		return instructions
	}
	return instructions + "\nThis server offers only these tools: " + strings.Join(set.Names(), ", ") + ".\n"
}

// MCPServer is the underlying mcp-go server, for in-process clients.
func (s *Server) MCPServer() *server.MCPServer { return s.mcp }

// Service is the coordination service behind the tools.
func (s *Server) Service() *coordination.Service { return s.handler.tenants.def }

// TenantService is a tenant's coordination service (opened if need be).
func (s *Server) TenantService(tenant string) (*coordination.Service, error) {
	return s.handler.tenants.service(tenant)
}
