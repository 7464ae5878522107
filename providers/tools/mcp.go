package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/sys/unix"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/keys"
	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

// MCP defaults.
const (
	defaultMCPStart = 30 * time.Second
	defaultMCPCall  = 2 * time.Minute
	// maxMCPResult bounds what a server puts in one tool result, an answer
	// or an error (a proxy's error page): what a command's output may be.
	maxMCPResult = sandbox.DefaultOutputCap
	// maxMCPMessage bounds one JSON-RPC message from a server (a stdio
	// server's line; a streamable-http server's JSON body or SSE event):
	// far above any result the model is shown (maxMCPResult, after images
	// are described), room for a few MB of base64 image, and the relay's
	// bound on one CLI agent's call (relay.MaxLine).
	maxMCPMessage     = 8 << 20
	maxToolName       = 64 // the tightest API limit on a function name (OpenAI's)
	mcpStderrKept     = 4 << 10
	mcpRestartsPerRun = 1
	// mcpWriteGrace: how long past its end a call may still be writing its
	// request before the server is taken for one that reads nothing.
	mcpWriteGrace = time.Second
)

// MCPConfig is what StartMCP needs for one agent of one session.
type MCPConfig struct {
	Servers map[string]MCPServer
	// AllowedTools and ExcludeTools filter by exposed name
	// (mcp__<server>__<tool>), as MassGen's agent-level lists do.
	AllowedTools, ExcludeTools []string
	// Sandbox is where stdio servers run: the agent's workspace, contexts,
	// hidden paths and network setting, as for its commands. A server's
	// env is added to it, and its command and read_only_paths are bound.
	Sandbox sandbox.Spec
	// StartTimeout bounds starting each server (0: 30 s); CallTimeout one
	// tool call (0: 2 min).
	StartTimeout, CallTimeout time.Duration
	// HTTPClient carries streamable-http servers' requests (nil: a client
	// of its own); a copy of it is used, reading each answer through a
	// msgCap.
	HTTPClient *http.Client
	// LookupEnv expands ${VAR} in env and headers (nil: os.LookupEnv).
	LookupEnv func(string) (string, bool)
}

// MCP is one agent's MCP servers for a session: started once (StartMCP),
// their tools offered in every step's Toolbox (Config.MCP), a stdio server
// restarted once if it dies, all closed by Close when the session ends.
type MCP struct {
	servers []*mcpServer // by name
	tools   []providers.Tool
	byName  map[string]mcpTool
	timeout time.Duration
}

type mcpTool struct {
	server *mcpServer
	name   string // the server's own name
}

// StartMCP starts every server, lists and filters its tools, and returns
// them ready. A server that does not start or answer, an allowed or
// excluded tool it does not have, or a stdio server where there is no
// sandbox, is an error naming the server and the fix; nothing is left
// running then.
func StartMCP(ctx context.Context, c MCPConfig) (*MCP, error) {
	if err := ValidateMCPServers(c.Servers); err != nil {
		return nil, err
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = defaultMCPStart
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = defaultMCPCall
	}
	if c.LookupEnv == nil {
		c.LookupEnv = os.LookupEnv
	}
	m := &MCP{byName: map[string]mcpTool{}, timeout: c.CallTimeout}
	names := make([]string, 0, len(c.Servers))
	for n := range c.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	// Servers start in parallel: each may take seconds (npx, a JVM).
	servers := make([]*mcpServer, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		s, err := newServer(n, c.Servers[n], c)
		if err != nil {
			errs[i] = err
			continue
		}
		servers[i] = s
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.start(ctx)
		}()
	}
	wg.Wait()
	for _, s := range servers {
		if s != nil {
			m.servers = append(m.servers, s)
		}
	}
	if err := errors.Join(errs...); err != nil {
		m.Close()
		return nil, err
	}
	if err := m.expose(c); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// expose names and filters the servers' tools.
func (m *MCP) expose(c MCPConfig) error {
	offered := map[string]bool{}
	for _, s := range m.servers {
		have := map[string]bool{}
		for _, t := range s.listed {
			have[t.Name] = true
		}
		for _, list := range [][]string{s.conf.AllowedTools, s.conf.ExcludeTools} {
			for _, n := range list {
				if !have[n] {
					return fmt.Errorf("MCP server %s has no tool %q (named in its allowed_tools or exclude_tools); it offers %s", s.name, n, toolNames(s.listed))
				}
			}
		}
		for _, t := range s.listed {
			if !keep(t.Name, s.conf.AllowedTools, s.conf.ExcludeTools) {
				continue
			}
			exposed := exposedName(s.name, t.Name, m.byName)
			offered[exposed] = true
			if !keep(exposed, c.AllowedTools, c.ExcludeTools) {
				continue
			}
			schema, err := toolSchema(t)
			if err != nil {
				return fmt.Errorf("MCP server %s's tool %s has an input schema that cannot be used: %w", s.name, t.Name, err)
			}
			desc := strings.TrimSpace(t.Description)
			if desc == "" {
				desc = t.Name
			}
			m.byName[exposed] = mcpTool{server: s, name: t.Name}
			m.tools = append(m.tools, providers.Tool{Name: exposed, Description: fmt.Sprintf("(MCP server %s) %s", s.name, desc), Schema: schema})
		}
	}
	for _, list := range [][]string{c.AllowedTools, c.ExcludeTools} {
		for _, n := range list {
			if !offered[n] {
				return fmt.Errorf("allowed_tools or exclude_tools names %q, which no MCP server of the agent offers; the tools are named mcp__<server>__<tool>", n)
			}
		}
	}
	return nil
}

func keep(name string, allowed, excluded []string) bool {
	if len(allowed) > 0 && !contains(allowed, name) {
		return false
	}
	return !contains(excluded, name)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func toolNames(ts []mcpgo.Tool) string {
	var n []string
	for _, t := range ts {
		n = append(n, t.Name)
	}
	if len(n) == 0 {
		return "no tools"
	}
	return strings.Join(n, ", ")
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// exposedName is mcp__<server>__<tool>, with characters APIs refuse in a
// function name replaced and the name cut to 64 (a short hash keeps cut or
// replaced names apart).
func exposedName(server, tool string, taken map[string]mcpTool) string {
	name := providers.MCPToolPrefix + server + "__" + unsafeName.ReplaceAllString(tool, "_")
	_, clash := taken[name]
	if len(name) > maxToolName || clash || name != providers.MCPToolPrefix+server+"__"+tool {
		sum := sha256.Sum256([]byte(server + "\x00" + tool))
		suffix := "_" + hex.EncodeToString(sum[:3])
		if len(name)+len(suffix) > maxToolName {
			name = name[:maxToolName-len(suffix)]
		}
		name += suffix
	}
	return name
}

// toolSchema is the tool's input schema as JSON, an object schema always.
func toolSchema(t mcpgo.Tool) (json.RawMessage, error) {
	raw := t.RawInputSchema
	if raw == nil {
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if s == nil {
		s = map[string]any{}
	}
	if s["type"] == nil || s["type"] == "" {
		s["type"] = "object"
	}
	if p, ok := s["properties"]; !ok || p == nil {
		s["properties"] = map[string]any{}
	}
	return json.Marshal(s)
}

// Tools lists the servers' tools as offered to the model.
func (m *MCP) Tools() []providers.Tool {
	if m == nil {
		return nil
	}
	return m.tools
}

// MCPTool implements providers.MCPNamer: the server and the own name of
// the tool offered as name.
func (m *MCP) MCPTool(name string) (server, tool string, ok bool) {
	if m == nil {
		return "", "", false
	}
	t, ok := m.byName[name]
	if !ok {
		return "", "", false
	}
	return t.server.name, t.name, true
}

// Call runs one server tool. A server's failure is a result with IsError
// that says what happened; err is only the context ending.
func (m *MCP) Call(ctx context.Context, name string, args json.RawMessage) (providers.ToolResult, error) {
	t, ok := m.byName[name]
	if !ok {
		return providers.ToolResult{Content: fmt.Sprintf("there is no MCP tool %q", name), IsError: true}, nil
	}
	var arguments map[string]any
	if len(strings.TrimSpace(string(args))) > 0 {
		if err := json.Unmarshal(args, &arguments); err != nil {
			return providers.ToolResult{Content: fmt.Sprintf("%s's arguments must be a JSON object: %v", name, err), IsError: true}, nil
		}
	}
	return t.server.call(ctx, t.name, arguments, m.timeout)
}

// Close stops every server (each given a moment to exit on its own, then
// killed with its process group).
func (m *MCP) Close() error {
	if m == nil {
		return nil
	}
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Add(1)
		go func() { defer wg.Done(); s.close() }()
	}
	wg.Wait()
	return nil
}

// mcpServer is one running server and what it takes to restart it.
type mcpServer struct {
	name   string
	conf   MCPServer
	cfg    MCPConfig
	env    []string          // stdio: KEY=VALUE, expanded
	header map[string]string // http, expanded
	given  []string          // the values ${VAR}s expanded to: secrets
	argv0  string            // stdio: the command's host path

	mu     sync.Mutex
	cl     *client.Client
	cmd    *exec.Cmd // stdio: the sandboxed process
	pidfd  int       // stdio: to see it exit without reaping it
	stderr *tail
	// stderrDone closes once the server's stderr is read to its end; its
	// write end is closed here once the process has started (stderrW), so
	// a dead server's last words are all read before they are quoted.
	stderrDone chan struct{}
	stderrW    *os.File
	stderrR    *os.File // closed once the process is stopped and read
	stdout     *msgCap  // stdio: the server's stdout, one message bounded
	// over is set once the current connection has received a message past
	// maxMCPMessage (from a stdio server's stdout or any HTTP answer).
	over     *atomic.Bool
	listed   []mcpgo.Tool
	restarts int
	broken   bool   // the connection closed: the next call restarts
	gone     string // why it is down for good
	life     context.CancelFunc
	closed   bool
	// dropped are remote connections stopped under mu and closed once it
	// is let go (unlock): closing one sends the server a DELETE that mcp-go
	// waits up to 5 s on, which no call or restart should wait behind.
	dropped []*client.Client
}

func newServer(name string, conf MCPServer, c MCPConfig) (*mcpServer, error) {
	s := &mcpServer{name: name, conf: conf, cfg: c, pidfd: -1}
	// What ${VAR} expands to is a secret the server is given (the file
	// keeps only the reference): recorded for masking what it says.
	lookup := func(k string) (string, bool) {
		v, ok := c.LookupEnv(k)
		if ok {
			s.given = append(s.given, v)
		}
		return v, ok
	}
	for _, k := range sortedKeys(conf.Env) {
		v, err := expand(name, "env "+k, conf.Env[k], lookup)
		if err != nil {
			return nil, err
		}
		s.env = append(s.env, k+"="+v)
	}
	if len(conf.Headers) > 0 {
		s.header = map[string]string{}
		for _, k := range sortedKeys(conf.Headers) {
			v, err := expand(name, "header "+k, conf.Headers[k], lookup)
			if err != nil {
				return nil, err
			}
			s.header[k] = v
		}
	}
	if conf.Type == MCPStdio {
		if !c.Sandbox.Unsandboxed {
			if ok, why := probe(); !ok {
				return nil, fmt.Errorf("MCP server %s is a stdio server, which runs in the command sandbox, and the sandbox is not available: %s", name, why)
			}
		}
		p, err := exec.LookPath(conf.Command)
		if err == nil {
			p, err = filepath.Abs(p)
		}
		if err != nil {
			return nil, fmt.Errorf("MCP server %s: command %q is not found: %w; give a path or install it on PATH", name, conf.Command, unwrap(err))
		}
		s.argv0 = p
	}
	return s, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// start connects (a stdio server: spawns it in the sandbox), initializes
// and lists its tools.
func (s *mcpServer) start(ctx context.Context) error {
	s.mu.Lock()
	defer s.unlock()
	return s.startLocked(ctx)
}

func (s *mcpServer) startLocked(ctx context.Context) error {
	// The server outlives the call that starts it: its process and
	// connection hang off a context of its own, ended by close.
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.life = cancel
	s.over = new(atomic.Bool)
	var (
		cl  *client.Client
		err error
	)
	switch s.conf.Type {
	case MCPStdio:
		s.stderr, s.stderrDone = &tail{max: mcpStderrKept}, nil
		var tr *transport.Stdio
		tr, err = s.spawn(life)
		if s.cmd != nil {
			// Its supervisor's report: the server runs, or why it did not
			// start (and, either way, the report's pipe closed).
			if serr := sandbox.Started(s.cmd); err == nil && serr != nil {
				sandbox.Kill(s.cmd)
				err = serr
			}
		}
		if s.stderrW != nil {
			s.stderrW.Close() // the process has its copy (or never started)
			s.stderrW = nil
		}
		if err == nil {
			cl = client.NewClient(tr)
		}
	case MCPHTTP:
		opts := []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(s.httpClient())}
		if len(s.header) > 0 {
			opts = append(opts, transport.WithHTTPHeaders(s.header))
		}
		cl, err = client.NewStreamableHttpClient(s.conf.URL, opts...)
		if err == nil {
			err = cl.Start(life)
		}
	}
	if err == nil {
		s.cl = cl
		if s.cmd != nil && s.cmd.Process != nil {
			if fd, ferr := pidfdOpen(s.cmd.Process.Pid); ferr == nil {
				s.pidfd = fd
			}
		}
		err = s.handshake(ctx)
	}
	if err != nil {
		if s.over.Load() {
			err = fmt.Errorf("it sent a message of more than %d MiB, the limit on one message from an MCP server", maxMCPMessage>>20)
		}
		s.stopLocked() // and its stderr read to the end: its last words say why
		// Cut as a tool result is: after a restart it is one (ready).
		return &shownError{msg: s.shown(fmt.Sprintf("MCP server %s (%s) did not start: %v%s", s.name, s.describe(), err, s.stderrNote()), s.mask), err: err}
	}
	return nil
}

func (s *mcpServer) handshake(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	req := mcpgo.InitializeRequest{}
	req.Params.ClientInfo = mcpgo.Implementation{Name: "massgen-mcp", Version: "1"}
	if _, err := s.cl.Initialize(ctx, req); err != nil {
		return err
	}
	list, err := s.cl.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		return fmt.Errorf("listing its tools: %w", err)
	}
	if s.listed == nil { // a restart keeps the tools offered at the start
		s.listed = list.Tools
	}
	return nil
}

// spawn starts the stdio server and its transport. The process is started
// here, not by mcp-go's transport, so that its stdout is read through a
// msgCap: mcp-go reads a message as one line, however long.
func (s *mcpServer) spawn(life context.Context) (*transport.Stdio, error) {
	cmd, err := s.command(life, s.argv0, s.env, s.conf.Args)
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = pw
	err = cmd.Start()
	pw.Close() // the process has its copy (or never started)
	if err != nil {
		pr.Close()
		return nil, err
	}
	s.stdout = newMsgCap(pr, msgLines, s.over)
	tr := transport.NewIO(s.stdout, stdin, nil)
	if err := tr.Start(life); err != nil {
		return nil, err
	}
	return tr, nil
}

// command is the stdio transport's process: the server under the sandbox.
func (s *mcpServer) command(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
	spec := s.cfg.Sandbox
	spec.Env = append(append([]string{}, spec.Env...), env...)
	if !spec.Unsandboxed {
		spec.ReadOnly = append([]sandbox.Bind{}, spec.ReadOnly...)
		for _, p := range append([]string{command}, s.conf.ReadOnly...) {
			if !visible(p) {
				spec.ReadOnly = append(spec.ReadOnly, sandbox.Bind{Src: p, Dst: p})
			}
		}
	}
	cmd, err := sandbox.Command(ctx, spec, append([]string{command}, args...))
	if err != nil {
		return nil, err
	}
	// The server's stderr is a pipe of our own, read into the tail, rather
	// than a writer exec copies from: exec's copy is done only when someone
	// waits for the process, and a crash's note was quoted, under load,
	// before its last line was read.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	done, t := make(chan struct{}), s.stderr
	go func() {
		defer close(done)
		_, _ = io.Copy(t, pr)
	}()
	cmd.Stderr = pw
	s.cmd, s.stderrW, s.stderrR, s.stderrDone = cmd, pw, pr, done
	return cmd, nil
}

// stderrRead waits, a moment at most, for a server that exited to have
// its stderr read to the end (a child it left may hold the pipe open).
func (s *mcpServer) stderrRead() {
	if s.stderrDone == nil {
		return
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-s.stderrDone:
	case <-t.C:
		s.stderrDone = nil // a child holds it open: not waited for again
	}
}

// visible: paths under the sandbox's read-only system directories need no
// bind (and may not have one).
func visible(p string) bool {
	for _, d := range []string{"/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/etc/"} {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}

func (s *mcpServer) describe() string {
	if s.conf.Type == MCPHTTP {
		return "streamable-http " + redactURL(s.conf.URL)
	}
	return "stdio " + strings.Join(append([]string{s.conf.Command}, s.conf.Args...), " ")
}

// redactURL is a server's URL without what may carry a key (user info, a
// query, a fragment), as a model spec's base URL is shown.
func redactURL(raw string) string { return providers.ShowURL(raw) }

// stderrNote quotes the end of the server's stderr, masked: a server may
// print its own token ("401 for token ghp_…"), and the note reaches the
// model, tools.jsonl and the user's error.
func (s *mcpServer) stderrNote() string {
	if s.stderr == nil {
		return ""
	}
	if t := strings.TrimSpace(s.stderr.String()); t != "" {
		return "; its stderr ends: " + s.mask(t)
	}
	return ""
}

// mask hides the secrets the server was given and anything shaped like a
// key.
func (s *mcpServer) mask(text string) string { return keys.Mask(text, s.secrets()...) }

// secrets are what its ${VAR}s expanded to and its headers' values (an
// Authorization header is a secret however it is written); a literal env
// value (a path, a greeting) is not, and stays readable in a diagnostic.
func (s *mcpServer) secrets() []string {
	secrets := append(make([]string, 0, len(s.given)+2*len(s.header)), s.given...)
	for _, v := range s.header {
		secrets = append(secrets, v, strings.TrimPrefix(v, "Bearer "))
	}
	return secrets
}

// exited tells whether the stdio server's process has ended.
func (s *mcpServer) exited() bool { return s.poll(0) }

// waitExit is exited, waiting up to a second when the connection is known
// to be closed.
func (s *mcpServer) waitExit(closed bool) bool {
	if closed {
		return s.poll(1000)
	}
	return s.poll(0)
}

func (s *mcpServer) poll(ms int) bool {
	if s.pidfd < 0 {
		return false
	}
	fds := []unix.PollFd{{Fd: int32(s.pidfd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, ms)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0
	}
}

// ready returns the client to call, restarting a dead stdio server once.
func (s *mcpServer) ready(ctx context.Context) (*client.Client, string) {
	s.mu.Lock()
	defer s.unlock()
	switch {
	case s.closed:
		return nil, fmt.Sprintf("MCP server %s is closed", s.name)
	case s.gone != "":
		return nil, s.gone
	case s.over != nil && s.over.Load():
		return nil, s.overflowedLocked()
	case s.cl != nil && !s.broken && !s.exited():
		return s.cl, ""
	}
	s.stopLocked() // and its stderr read to the end, for the note
	note := s.stderrNote()
	if s.restarts >= mcpRestartsPerRun {
		s.gone = fmt.Sprintf("MCP server %s stopped again after its restart%s; its tools are unavailable for the rest of the session", s.name, note)
		return nil, s.gone
	}
	s.restarts++
	if err := s.startLocked(ctx); err != nil {
		s.gone = fmt.Sprintf("MCP server %s stopped%s, and restarting it failed: %v; its tools are unavailable for the rest of the session", s.name, note, err)
		return nil, s.gone
	}
	return s.cl, ""
}

func (s *mcpServer) call(ctx context.Context, tool string, args map[string]any, timeout time.Duration) (providers.ToolResult, error) {
	cl, why := s.ready(ctx)
	if cl == nil {
		return providers.ToolResult{Content: why, IsError: true}, nil
	}
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req := mcpgo.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	// The call is made aside: mcp-go stops waiting for its answer when
	// callCtx ends, but not writing its request, and a server that reads
	// nothing (hung, stopped) leaves a request longer than the pipe holds,
	// and every later one behind it, in that write for good.
	type answer struct {
		res *mcpgo.CallToolResult
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := cl.CallTool(callCtx, req)
		answered <- answer{res, err}
	}()
	var a answer
	select {
	case a = <-answered:
	case <-callCtx.Done():
		t := time.NewTimer(mcpWriteGrace)
		select {
		case a = <-answered:
			t.Stop()
		case <-t.C:
			return s.unwritten(ctx, cl, tool, timeout)
		}
	}
	res, err := a.res, a.err
	if ctx.Err() != nil {
		return providers.ToolResult{}, ctx.Err()
	}
	if err != nil {
		s.mu.Lock()
		// Calls run in parallel (a CLI agent's do), so another call may
		// already have found this connection dead and restarted the server:
		// then the pidfd and stderr are the new process's, and this call
		// only says so. Otherwise: the connection closes when the server's
		// stdout does, a moment before its sandbox (the process the pidfd
		// watches) has exited; either way this connection is done.
		closed := errors.Is(err, transport.ErrTransportClosed)
		current := s.cl == cl
		if current && s.over != nil && s.over.Load() {
			why := s.overflowedLocked()
			s.unlock()
			return providers.ToolResult{Content: why, IsError: true}, nil
		}
		if !current && s.gone != "" {
			// Another call in flight found the server gone for good (a
			// message past the limit): this one ended with its connection.
			why := s.gone
			s.unlock()
			return providers.ToolResult{Content: why, IsError: true}, nil
		}
		replaced := !current && s.cl != nil && s.gone == ""
		dead, note := false, ""
		if current {
			dead = s.waitExit(closed) || closed
			s.broken = s.broken || closed
			if dead {
				s.stderrRead()
			}
			note = s.stderrNote()
		}
		again := s.restarts < mcpRestartsPerRun
		s.unlock()
		switch {
		case errors.Is(callCtx.Err(), context.DeadlineExceeded):
			return providers.ToolResult{Content: fmt.Sprintf("MCP server %s did not answer %s within %s", s.name, tool, timeout), IsError: true}, nil
		case replaced:
			return providers.ToolResult{Content: fmt.Sprintf("MCP server %s stopped during the call to %s; it has been restarted, and the call may or may not have taken effect: check before making it again", s.name, tool), IsError: true}, nil
		case dead && again:
			return providers.ToolResult{Content: fmt.Sprintf("MCP server %s stopped during the call to %s%s; it is restarted for the next call", s.name, tool, note), IsError: true}, nil
		case dead:
			return providers.ToolResult{Content: fmt.Sprintf("MCP server %s stopped during the call to %s%s, after its one restart; its tools are unavailable for the rest of the session", s.name, tool, note), IsError: true}, nil
		}
		// The error may quote the server's whole answer: an HTTP error's
		// body (a proxy's page of a few MiB) or a JSON-RPC error's message.
		return providers.ToolResult{Content: s.shown(fmt.Sprintf("MCP server %s: %s failed: %v", s.name, tool, err), s.mask), IsError: true}, nil
	}
	// A server may hand back the secrets it was given (an env or debug tool):
	// they must not reach the model or tools.jsonl. Key shapes in a result
	// are its data (code, docs) and stay.
	return providers.ToolResult{Content: s.shown(resultText(res), func(t string) string { return keys.MaskSecrets(t, s.secrets()...) }), IsError: res.IsError}, nil
}

// unwritten ends a call whose request could not be written by its end: the
// server reads nothing it is sent, so its connection is stopped (which ends
// the write, and those queued behind it), and the next call restarts it.
func (s *mcpServer) unwritten(ctx context.Context, cl *client.Client, tool string, timeout time.Duration) (providers.ToolResult, error) {
	s.mu.Lock()
	if s.cl == cl {
		s.stopLocked()
	}
	again := s.restarts < mcpRestartsPerRun
	s.unlock()
	if ctx.Err() != nil {
		return providers.ToolResult{}, ctx.Err()
	}
	next := "it is restarted for the next call"
	if !again {
		next = "it had been restarted once already, so its tools are unavailable for the rest of the session"
	}
	return providers.ToolResult{Content: fmt.Sprintf("MCP server %s did not answer %s within %s, and it is not reading what it is sent (the call could not even be sent to it): it was stopped, and %s", s.name, tool, timeout, next), IsError: true}, nil
}

// resultText flattens a tool result for the model: text as is, other
// content described, structured content as JSON when there is no text.
func resultText(res *mcpgo.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		switch c := c.(type) {
		case mcpgo.TextContent:
			b.WriteString(c.Text)
		case mcpgo.ImageContent:
			fmt.Fprintf(&b, "[image %s, %d bytes base64]", c.MIMEType, len(c.Data))
		case mcpgo.AudioContent:
			fmt.Fprintf(&b, "[audio %s, %d bytes base64]", c.MIMEType, len(c.Data))
		case mcpgo.ResourceLink:
			fmt.Fprintf(&b, "[resource %s: %s]", c.URI, c.Description)
		case mcpgo.EmbeddedResource:
			if t, ok := c.Resource.(mcpgo.TextResourceContents); ok {
				fmt.Fprintf(&b, "[resource %s]\n%s", t.URI, t.Text)
			} else {
				b.WriteString("[embedded binary resource]")
			}
		default:
			raw, _ := json.Marshal(c)
			b.Write(raw)
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		b.Write(raw)
	}
	return b.String()
}

// overflowedLocked stops a server (a remote one: drops its connection)
// that sent a message past maxMCPMessage (the rest of it is never read) and
// says so, for good.
func (s *mcpServer) overflowedLocked() string {
	s.stopLocked()
	stopped := "it was stopped"
	if s.conf.Type == MCPHTTP {
		stopped = "its connection was closed"
	}
	s.gone = fmt.Sprintf("MCP server %s sent a message of more than %d MiB, the limit on one message from an MCP server; %s, and its tools are unavailable for the rest of the session (a tool that returns so much is asked for less, or the server fixed)", s.name, maxMCPMessage>>20, stopped)
	return s.gone
}

// stopLocked ends the current connection and process.
func (s *mcpServer) stopLocked() {
	switch {
	case s.cl != nil && s.conf.Type == MCPHTTP:
		s.dropped = append(s.dropped, s.cl)
	case s.cl != nil:
		_ = s.cl.Close() // a stdio server's: closes its stdin
	}
	if s.cmd != nil {
		// Given a moment to exit on its stdin's end, as mcp-go's own
		// transport gives it, then killed with all it started, and reaped.
		if s.cl != nil && s.pidfd >= 0 {
			s.poll(2000)
		}
		sandbox.Kill(s.cmd)
		if s.cmd.Process != nil {
			_ = s.cmd.Wait()
		}
	}
	if s.stdout != nil {
		s.stdout.Close() // ends the transport's reader
		s.stdout = nil
	}
	if s.life != nil {
		s.life()
	}
	if s.pidfd >= 0 {
		_ = unix.Close(s.pidfd)
	}
	// Killed, its stderr comes to an end at once (a child it left outside
	// the sandbox may hold it: then it is cut off), and the pipe is closed.
	s.stderrRead()
	if s.stderrR != nil {
		s.stderrR.Close()
		s.stderrR = nil
	}
	s.cl, s.cmd, s.pidfd, s.life, s.broken, s.over = nil, nil, -1, nil, false, nil
}

// unlock lets mu go, then closes the remote connections stopped under it.
func (s *mcpServer) unlock() {
	dropped := s.dropped
	s.dropped = nil
	s.mu.Unlock()
	for _, cl := range dropped {
		_ = cl.Close()
	}
}

func (s *mcpServer) close() {
	s.mu.Lock()
	defer s.unlock()
	s.closed = true
	s.stopLocked()
}

// errMessageTooLong ends the reading of what a server sent once one message
// passed maxMCPMessage.
var errMessageTooLong = errors.New("message too long")

// msgSplit is where one message from a server ends, as mcp-go reads it.
type msgSplit int

const (
	msgLines  msgSplit = iota // a stdio server's stdout: at a newline
	msgEvents                 // an SSE stream: at an empty line
	msgWhole                  // an HTTP body of JSON: the body is one message
)

// msgCap reads what a server sends for mcp-go's transports, which read a
// message whole however long it is (a line, an SSE event, a JSON body):
// past max bytes of one message it fails (for good), having read at most
// one byte more, and sets over, so the transport gives up on it and the
// rest is never read.
type msgCap struct {
	r      io.ReadCloser
	split  msgSplit
	max    int
	n      int  // bytes of the current message
	blank  bool // msgEvents: the current line is empty so far
	failed bool
	over   *atomic.Bool // the connection's
}

func newMsgCap(r io.ReadCloser, split msgSplit, over *atomic.Bool) *msgCap {
	return &msgCap{r: r, split: split, max: maxMCPMessage, blank: true, over: over}
}

func (m *msgCap) Read(p []byte) (int, error) {
	if m.failed {
		return 0, errMessageTooLong
	}
	if room := m.max - m.n + 1; len(p) > room {
		p = p[:room]
	}
	n, err := m.r.Read(p)
	m.count(p[:n])
	if m.n > m.max {
		m.failed = true
		m.over.Store(true)
		return n, errMessageTooLong
	}
	return n, err
}

// count adds what was read to the current message, or starts the next.
func (m *msgCap) count(p []byte) {
	switch m.split {
	case msgLines:
		if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
			m.n = len(p) - 1 - i
		} else {
			m.n += len(p)
		}
	case msgEvents:
		// mcp-go reads lines ended by \n and trims \r: an event ends at a
		// line that is empty once trimmed.
		for _, c := range p {
			m.n++
			switch c {
			case '\n':
				if m.blank {
					m.n = 0
				}
				m.blank = true
			case '\r':
			default:
				m.blank = false
			}
		}
	default:
		m.n += len(p)
	}
}

func (m *msgCap) Close() error { return m.r.Close() }

// httpClient is what a streamable-http server's requests go by: a copy of
// the given client (or one with the call timeout) whose every answer is
// read through a msgCap, an SSE stream's a message (event) at a time.
func (s *mcpServer) httpClient() *http.Client {
	hc := &http.Client{Timeout: s.cfg.CallTimeout}
	if s.cfg.HTTPClient != nil {
		c := *s.cfg.HTTPClient
		hc = &c
	}
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	hc.Transport = capTransport{rt: rt, over: s.over}
	return hc
}

// capTransport hands each response's body on through a msgCap.
type capTransport struct {
	rt   http.RoundTripper
	over *atomic.Bool
}

func (t capTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	split := msgWhole
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		split = msgEvents
	}
	resp.Body = newMsgCap(resp.Body, split, t.over)
	return resp, nil
}

// tail keeps the last max bytes written (a server's stderr).
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), "")
}
