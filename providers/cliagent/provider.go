package cliagent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
	"github.com/massgen-go/massgen-mcp/providers/keys"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

// Provider runs one CLI as a team member (providers.Provider).
type Provider struct {
	cli  CLI
	info Info
	opts Options
	dir  string
}

// New returns the provider of a CLI.
func New(cli CLI, opts Options) (*Provider, error) {
	info := cli.Info()
	if opts.Binary == "" {
		return nil, fmt.Errorf("%w: no %s binary given", ErrNotInstalled, info.Binary)
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if opts.Sandbox == nil {
		opts.Sandbox = Plain{}
	}
	if opts.AfterCall <= 0 {
		opts.AfterCall = defaultAfterCall
	}
	dir := opts.Dir
	if dir == "" {
		dir = DefaultDir()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return &Provider{cli: cli, info: info, opts: opts, dir: abs}, nil
}

// maxLine bounds one line of a CLI's stream; a longer line is not its
// stream (a tool's output is kept far below this by every CLI).
const maxLine = 32 << 20

// maxStream bounds all a run writes to its stream: four times the most an
// API adapter reads of one response (providers.MaxResponseBody), as a run
// is many model calls and its stream echoes its tools' results. A run past
// it is a CLI gone wrong (a loop), and its text would otherwise be read and
// kept until the step's deadline. A variable for the tests.
var maxStream int64 = 4 * providers.MaxResponseBody

// Step runs the CLI once for the request (twice when a session it was to
// resume is gone) and reports its workflow call.
func (p *Provider) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	slots := p.opts.Slots
	if slots == nil {
		slots = sharedSlots()
	}
	if err := slots.Acquire(ctx, 1); err != nil {
		return providers.Action{}, providers.Usage{}, fmt.Errorf("waiting for a free CLI slot (--max-cli-agents %d): %w", MaxProcesses(), context.Cause(ctx))
	}
	defer slots.Release(1)
	ag, err := p.agentFor(req)
	if err != nil {
		return providers.Action{}, providers.Usage{}, err
	}
	resume := ag.session()
	noteCoarse(req, p.cli, permitsFor(req, p.cli, nil), p.opts.Sandbox.Confined())
	lim := newLimits(&req)
	res, err := p.run(ctx, req, ag, resume, lim)
	usage := p.usage(res.out)
	if err == nil && res.call == nil && res.failed() && res.overflow == nil && resume != "" && lim.err() == nil {
		// The session it continued may be gone (a CLI reinstalled, its
		// config directory cleared): start afresh once.
		ag.saveSession("")
		resume = ""
		lim.ranBefore(usage)
		res, err = p.run(ctx, req, ag, "", lim)
		usage = usage.Add(p.usage(res.out))
	}
	if res.out.SessionID != "" {
		ag.saveSession(res.out.SessionID)
	}
	if err != nil {
		return providers.Action{}, usage, err
	}
	final := p.mask(strings.TrimSpace(res.out.Final))
	if res.call != nil {
		call := *res.call
		call.Args = json.RawMessage(p.mask(string(call.Args)))
		return providers.Action{Calls: []providers.ToolCall{call}, Text: final}, usage, nil
	}
	if why := lim.err(); why != nil {
		// Stopped by a limit before it answered: what it spent is the
		// step's, and its tool records are kept, as at a timeout. A CLI
		// stopped before its stream or its usage file told any usage
		// made model calls that cost something unknown, not nothing.
		if usage.Tokens() == 0 {
			usage = providers.Usage{}
		}
		return providers.Action{}, usage, &providers.Error{Class: why.Class,
			Message: p.mask(fmt.Sprintf("%s was stopped: it %s", p.info.Binary, why.Message))}
	}
	if len(req.History) > 0 {
		if act, ok := providers.ParseTextCallsFor(final, req.Tools); ok {
			return act, usage, nil
		}
	}
	if res.failed() {
		return providers.Action{}, usage, p.failure(res)
	}
	return providers.Action{Text: final}, usage, nil
}

// result is what one run of the CLI did.
type result struct {
	call      *providers.ToolCall
	out       Outcome
	exit      int
	malformed string // the first line that was not the CLI's stream
	overflow  error  // errLineTooLong or errStreamTooLong: the run was stopped there
	stderr    string
}

// failed says the run ended in a way that is an error when no workflow call
// landed: a non-zero exit, a line that is not the stream, an error the
// stream reported, or no final event at all.
func (r result) failed() bool {
	return r.exit != 0 || r.malformed != "" || r.overflow != nil || r.out.Error != "" || !r.out.Done
}

// failure is a failed run as a classified error, in the CLI's own words.
func (p *Provider) failure(r result) error {
	bin := p.info.Binary
	var msg string
	switch {
	case errors.Is(r.overflow, errLineTooLong):
		// Checked first: the run was killed there, so its exit and its
		// missing result are the overflow's doing.
		return &providers.Error{Class: providers.ClassBadOutput, Message: p.mask(fmt.Sprintf(
			"%s printed a line longer than %d MiB, the most read of one line of its stream, so its run was stopped; a line that long is a CLI gone wrong: try again, or update %s",
			bin, maxLine>>20, bin))}
	case r.overflow != nil:
		return &providers.Error{Class: providers.ClassBadOutput, Message: p.mask(fmt.Sprintf(
			"%s wrote more than %d MiB to its stream, the most read of one run, so its run was stopped and what it spent is charged; a run that long is a CLI gone wrong (a loop): try again with a narrower task, or update %s",
			bin, maxStream>>20, bin))}
	case r.out.Error != "":
		msg = fmt.Sprintf("%s failed: %s", bin, r.out.Error)
	case r.malformed != "":
		msg = fmt.Sprintf("%s printed a line that is not its JSON stream: %s", bin, clip(r.malformed, 300))
	case r.exit != 0:
		msg = fmt.Sprintf("%s exited with status %d", bin, r.exit)
	default:
		msg = fmt.Sprintf("%s ended its stream without a final result", bin)
	}
	if r.exit != 0 && r.out.Error != "" {
		msg += fmt.Sprintf(" (exit status %d)", r.exit)
	}
	if tail := lastLines(r.stderr, 3); tail != "" && r.out.Error == "" {
		msg += "; its stderr ends: " + tail
	}
	msg = p.mask(msg)
	return &providers.Error{Class: classify(r.out.Status, msg), Message: msg, Status: r.out.Status}
}

// classify maps a CLI's failure to an error class: by the API status behind
// it when the stream gives one, else by its words.
func classify(status int, msg string) providers.Class {
	switch {
	case status == 401 || status == 403:
		return providers.ClassAuth
	case status == 429:
		return providers.ClassRateLimit
	case status == 529:
		return providers.ClassOverloaded
	case status >= 500:
		return providers.ClassProvider
	}
	low := strings.ToLower(msg)
	switch {
	case strings.Contains(low, "rate limit") || strings.Contains(low, "429"):
		return providers.ClassRateLimit
	case strings.Contains(low, "overloaded"):
		return providers.ClassOverloaded
	case strings.Contains(low, "invalid api key") || strings.Contains(low, "authentication") || strings.Contains(low, "not logged in") ||
		strings.Contains(low, "please run /login") || strings.Contains(low, "unauthorized"):
		return providers.ClassAuth
	case strings.Contains(low, "quota") || strings.Contains(low, "credit balance"):
		return providers.ClassQuota
	}
	return providers.ClassProvider
}

// usage prices a run: the CLI's own cost figure when it gives one, else the
// price table, else unknown (nil); on a subscription (the stream's word or
// Options.Subscription) the figure is marked an estimate.
func (p *Provider) usage(o Outcome) providers.Usage {
	u := o.Usage
	if u.CostUSD == nil {
		if u.Input == 0 && u.Output == 0 && u.CachedInput == 0 && u.Reasoning == 0 && !o.Done {
			return providers.Free() // nothing was spent
		}
		u = p.priced(u, o.CacheWrites, o.Model)
	}
	if (o.Subscription || p.opts.Subscription) && u.CostUSD != nil {
		u.CostEstimated = true
	}
	return u
}

// priced fills in a usage's cost from the price table when the CLI gave
// none: the model the agent was given, else the one the stream named, its
// cache writes at the cache-write prices.
func (p *Provider) priced(u providers.Usage, writes CacheWrites, streamModel string) providers.Usage {
	if u.CostUSD != nil {
		return u
	}
	model := p.opts.Model
	if model == "" {
		model = streamModel
	}
	// The stream's cache writes are made sane as its usage is (since).
	u.CostUSD = pricing.CostWithCacheWrites(p.info.PriceBackend, model, u, providers.SaneCount(writes.FiveMin), providers.SaneCount(writes.OneHour))
	return u
}

func (p *Provider) mask(s string) string { return keys.Mask(s, p.opts.Secrets...) }

// run runs the CLI once, its tool calls and usage counted in lim, which
// ends it (as a timeout does) once a limit is past. err is set only when the
// run could not start or the context ended it; everything else is in the
// result.
func (p *Provider) run(ctx context.Context, req providers.Request, ag agentDirs, resume string, lim *limits) (result, error) {
	if req.Record != nil {
		req.Record = &maskedRecorder{r: req.Record, mask: p.mask}
	}
	wf, err := listenWorkflow(ag.root, req.Tools, newExtraTools(ctx, &req, lim), lim)
	if err != nil {
		return result{}, err
	}
	defer wf.close()
	work := req.Workspace
	if work == "" {
		work = ag.scratch
	}
	removeImages, err := placeImages(req, work)
	if err != nil {
		return result{}, err
	}
	// Removed before the step returns, so the answer's snapshot, taken
	// after, never holds them.
	defer removeImages()
	cmd, stdin, sent, logins, err := p.command(ctx, req, ag, resume, wf)
	if err != nil {
		return result{}, err
	}
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	ev := &events{req: &req, mask: p.mask, lim: lim, price: p.priced, gate: wf.gate, sent: sent}
	cfgUser, cfgState, cfgErr := p.configDirs(ag)
	// The resumed session's total is read before the CLI starts, which
	// may add to it at once.
	if st, ok := p.cli.(SessionTotals); ok && resume != "" && cfgErr == nil {
		ev.before = st.SessionTotal(cfgState, resume)
	}
	if cm, ok := p.cli.(ConfiguredModel); ok && p.opts.Model == "" && cfgErr == nil {
		ev.configured = cm.ConfigModel(readConfigDir(cfgUser, cfgState))
	}
	stderr := newTail(8 << 10)
	proc, err := startProcess(cmd, stderr, p.opts.Sandbox.Confined())
	if err != nil {
		return result{}, fmt.Errorf("cannot start %s: %w", p.info.Binary, err)
	}
	defer proc.kill()

	parser := p.cli.NewParser()
	var tail *callTail
	if cfgErr == nil {
		tail = startCallTail(p.cli, cfgState, wf.dir, resume, ev.perCall)
	}
	lines := make(chan []byte, 64)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		r := bufio.NewReaderSize(&boundedStream{r: proc.stdout, left: maxStream + 1}, 64<<10)
		for {
			line, err := readLine(r, maxLine)
			if len(line) > 0 {
				lines <- line
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()

	var res result
	landed, exited := wf.landed, proc.exited
	var grace <-chan time.Time
	var ctxErr error
	done, limited := ctx.Done(), lim.stopped()
	for lines != nil || exited != nil {
		select {
		case line, ok := <-lines:
			if !ok {
				lines = nil
				// Sent before lines closed. A line past maxLine, or a
				// stream past maxStream, is a CLI gone wrong, and one
				// left writing to a pipe nobody reads would wait there
				// until the step's deadline.
				if err := <-readErr; errors.Is(err, errLineTooLong) || errors.Is(err, errStreamTooLong) {
					res.overflow = err
					proc.kill()
				}
				continue
			}
			if len(strings.TrimSpace(string(line))) == 0 {
				continue
			}
			if err := parser.Line(line, ev); err != nil && res.malformed == "" {
				res.malformed = string(line)
			}
			if tail != nil && tail.session == "" {
				tail.setSession(parser.Outcome().SessionID)
			}
			if m := parser.Outcome().Model; m != ev.named {
				ev.mu.Lock()
				ev.named = m // for the usage file's reports, which name none
				ev.mu.Unlock()
			}
			// A line that tripped a limit ends the CLI now: select picks
			// among ready cases at random, and with more lines waiting it
			// read on, the CLI running turns past the limit meanwhile.
			if limited != nil && lim.err() != nil {
				limited = nil
				proc.kill() // past a limit: what it wrote and spent is kept
			}
		case <-landed:
			landed = nil
			grace = time.After(p.opts.AfterCall)
		case <-grace:
			grace = nil
			proc.kill() // its call is in and it had its time to finish
		case <-done:
			done = nil
			ctxErr = context.Cause(ctx)
			proc.kill()
		case <-limited:
			limited = nil
			proc.kill() // past a limit: what it wrote and spent is kept
		case <-exited:
			exited = nil
			// The group is dead; what is left in the pipe is read to its
			// end, but a child that left the group must not hold it open.
			stdout := proc.stdout
			time.AfterFunc(2*time.Second, func() { stdout.Close() })
		}
	}
	proc.stdout.Close()
	for _, w := range logins.syncBack() { // the CLI is gone: its refreshed login is final
		req.RecordTool(loginRecord(w))
	}
	res.call = wf.landedCall()
	res.out = parser.Outcome()
	if res.out.Model == "" {
		res.out.Model = ev.configured
	}
	res.out.Usage = since(res.out.Usage, ev.before)
	whole := res.out.Done
	if perCall, ok := tail.close(); ok && perCall.Tokens() > res.out.Usage.Tokens() {
		// Stopped before its turn ended, so its stream never said what
		// it spent; the usage file did, call by call.
		res.out.Usage, res.out.CacheWrites = perCall, CacheWrites{}
		whole = true
	}
	res.out.Usage = charged(res.out.Usage, whole, ev.input(), ev.streamed+callBytes(res.call))
	if lim.err() != nil {
		res.out.Usage = atLeast(res.out.Usage, ev.counted)
	}
	res.exit = proc.exitCode()
	res.stderr = stderr.String()
	if ctxErr != nil && res.call == nil {
		return res, fmt.Errorf("%s was stopped: %w", p.info.Binary, ctxErr)
	}
	if res.call != nil && res.exit != 0 {
		res.exit = 0 // killed after its call landed, as asked
	}
	return res, nil
}

// command builds the run's command: the confinement, the environment, the
// generated files in the run directory, the CLI's arguments.
//
// sent is what the run sends the model, estimated (providers.EstimateInput):
// the system text and prompt it is given and the step's tools the relay
// serves it.
//
// logins is the login a sandboxed run was given, to copy back once it ended
// (nil: none was copied).
func (p *Provider) command(ctx context.Context, req providers.Request, ag agentDirs, resume string, wf *workflow) (cmd *exec.Cmd, stdin string, sent int64, logins *loginCopy, err error) {
	hostWork := req.Workspace
	if hostWork == "" {
		hostWork = ag.scratch
	}
	c := Confinement{Workspace: hostWork, Home: ag.home, Network: true}
	cfgUser, cfgState, err := p.configDirs(ag)
	if err != nil {
		return nil, "", 0, nil, err
	}
	workIn, homeIn := p.opts.Sandbox.Paths(c)
	cfgIn, tmp := cfgState, ag.tmp
	if p.opts.Sandbox.Confined() {
		// A fresh TMPDIR too, for the same reason (freshhome.go).
		if tmp, err = runTmp(wf.dir); err != nil {
			return nil, "", 0, nil, err
		}
		// A fresh HOME (freshhome.go): only the CLI's kept directories
		// come from the agent's own, cfgState, where this process reads
		// its sessions.
		if c.Home, err = runHome(wf.dir); err != nil {
			return nil, "", 0, nil, err
		}
		cfgIn = filepath.Join(homeIn, p.info.ConfigDir)
		private := filepath.Join(c.Home, p.info.ConfigDir)
		if err := os.MkdirAll(filepath.Dir(private), 0o700); err != nil {
			return nil, "", 0, nil, fmt.Errorf("cannot create the run's config directory: %w", err)
		}
		blanks := filepath.Join(ag.root, "blank-setup")
		if logins, err = stageConfig(&c, p.info, cfgUser, private, cfgIn, blanks); err != nil {
			return nil, "", 0, nil, err
		}
		kept, err := filepath.Rel(ag.root, cfgState)
		if err != nil {
			return nil, "", 0, nil, err
		}
		if err := keepDirs(&c, p.info, ag.root, kept, private, cfgIn); err != nil {
			return nil, "", 0, nil, err
		}
		userHome, _ := lookupEnv(p.opts.Env, "HOME")
		if err := stageHome(&c, p.info, userHome, c.Home, homeIn, blanks); err != nil {
			return nil, "", 0, nil, err
		}
		if err := stageShellStartup(&c, homeIn, filepath.Join(blanks, "shell")); err != nil {
			return nil, "", 0, nil, err
		}
	}
	c.ReadWrite = append(c.ReadWrite, Bind{Src: wf.dir, Dst: wf.dir}, Bind{Src: tmp, Dst: tmp})
	c.ReadOnly = append(c.ReadOnly, Bind{Src: installDir(p.opts.Binary), Dst: installDir(p.opts.Binary)})

	relayBin, relayArgs, err := p.opts.relayCommand(filepath.Join(wf.dir, "view.json"))
	if err != nil {
		return nil, "", 0, nil, err
	}
	c.ReadOnly = append(c.ReadOnly, Bind{Src: relayBin, Dst: relayBin})
	perms := permitsFor(req, p.cli, append(append([]string{relayBin}, relayArgs...), "--hook"))
	if perms != nil {
		c.WorkspaceReadOnly = perms.Mode.SandboxReadOnly
		gk := p.cli.(Gatekeeper)
		wf.gate = newGate(ctx, gk, req.Permits, workIn, p.mask)
		if p.opts.Sandbox.Confined() {
			wf.gate.sandboxed = true
			for _, b := range c.ReadWrite {
				wf.gate.bound = append(wf.gate.bound, b.Dst)
			}
		}
		if !gk.UsesPromptTool() {
			perms.PromptTool = ""
		}
	}
	view, _ := json.Marshal(relay.View{Socket: wf.socket, Tools: req.Tools, Extra: wf.extra.offered(), Permission: perms != nil && perms.PromptTool != ""})
	if err := os.WriteFile(filepath.Join(wf.dir, "view.json"), view, 0o600); err != nil {
		return nil, "", 0, nil, err
	}

	peers, contexts := map[string]string{}, map[string]string{}
	var readDirs []string
	for _, sh := range req.Shown {
		if sh.FilesDir == "" {
			continue
		}
		dir, notShown, err := peerFiles(&c, p.opts.Sandbox.Confined(), wf.peers, sh)
		if err != nil {
			return nil, "", 0, nil, err
		}
		peers[sh.Alias] = dir
		if notShown != "" {
			// The prompt's line for the peer says it, so the CLI does not
			// take a missing FIFO for one the peer never made.
			peers[sh.Alias] += "; " + notShown
		}
		readDirs = append(readDirs, dir)
	}
	for _, cx := range req.Contexts {
		contexts[cx.Name] = cx.Path
		readDirs = append(readDirs, cx.Path)
		c.ReadOnly = append(c.ReadOnly, Bind{Src: cx.Path, Dst: cx.Path})
	}
	run := Run{
		Model:         p.opts.Model,
		Prompt:        userTurn(req, resume != ""),
		System:        system(req, workIn, peers, contexts, wf.extra.names()),
		Resume:        resume,
		Workdir:       workIn,
		Home:          homeIn,
		ConfigDir:     cfgIn,
		HostConfigDir: readConfigDir(cfgUser, cfgState),
		RunDir:        wf.dir,
		ReadDirs:      readDirs,
		Workflow:      MCPServer{Name: relay.ServerName, Command: relayBin, Args: relayArgs},
		WorkflowTools: append(toolList(req.Tools), wf.extra.names()...),
		Sandboxed:     p.opts.Sandbox.Confined(),
		UserSetup:     p.opts.UserSetup,
		Permissions:   perms,
	}
	sent = providers.EstimateInput(providers.Request{System: run.System, Prompt: run.Prompt, Tools: req.Tools}, nil)
	inv, err := p.cli.Invocation(run)
	if err != nil {
		return nil, "", 0, nil, err
	}
	for name, data := range inv.Files {
		if !filepath.IsLocal(name) || strings.Contains(name, `\`) || name == "view.json" {
			return nil, "", 0, nil, fmt.Errorf("%s: generated file name %q must be a path inside the run directory", p.info.Backend, name)
		}
		path := filepath.Join(wf.dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, "", 0, nil, err
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, "", 0, nil, err
		}
	}
	writable := slices.Clone(inv.Writable)
	for name, user := range inv.Logins {
		data, ok := inv.Files[name]
		if !ok || !filepath.IsAbs(user) {
			return nil, "", 0, nil, fmt.Errorf("%s: login %q must be a generated file copying a file named by its absolute path, not %q", p.info.Backend, name, user)
		}
		logins = logins.add(p.info, user, wf.dir, name, data)
		writable = append(writable, name)
	}
	pinned := []string{"view.json", filepath.Base(wf.socket)}
	for name := range inv.Files {
		pinned = append(pinned, name)
	}
	slices.Sort(pinned[2:]) // a stable command line
	pinRunFiles(&c, wf.dir, pinned, writable)
	for _, ro := range inv.ReadOnly {
		c.ReadOnly = append(c.ReadOnly, Bind{Src: ro, Dst: ro})
	}
	// GIT_CONFIG_GLOBAL is left unset: in the sandbox git's global config
	// (~/.gitconfig, ~/.config/git/config) is the run's fresh HOME's, so an
	// agent's git config --global holds for its run and no longer.
	fixed := map[string]string{"HOME": homeIn, "TMPDIR": tmp}
	if p.info.ConfigDirEnv != "" {
		fixed[p.info.ConfigDirEnv] = cfgIn
	}
	env := childEnv(p.opts.Env, p.info.Env, fixed)
	if p.opts.Sandbox.Confined() {
		userHome, _ := lookupEnv(p.opts.Env, "HOME")
		env = setupEnv(&c, env, p.info.Env.SetupPaths, userHome)
	}
	c.Env = append(env, inv.Env...)
	argv := append([]string{p.opts.Binary}, inv.Args...)
	cmd, err = p.opts.Sandbox.Command(ctx, c, argv)
	if err != nil {
		return nil, "", 0, nil, fmt.Errorf("cannot sandbox %s: %w", p.info.Binary, err)
	}
	return cmd, inv.Stdin, sent, logins, nil
}

// hostConfigDir is the user's config directory of the CLI: its variable
// when the server's environment sets it, else under the server's HOME.
func (p *Provider) hostConfigDir() string {
	if p.info.ConfigDirEnv != "" {
		if v, ok := lookupEnv(p.opts.Env, p.info.ConfigDirEnv); ok && v != "" {
			return v
		}
	}
	if p.info.ConfigDir == "" {
		return ""
	}
	home, ok := lookupEnv(p.opts.Env, "HOME")
	if !ok || home == "" {
		return ""
	}
	return filepath.Join(home, p.info.ConfigDir)
}

// installDir is what a sandbox binds for a CLI's binary: its npm package
// tree (node_modules, where its runtime files sit beside it) or its
// directory.
func installDir(binary string) string {
	if i := strings.LastIndex(binary, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i >= 0 {
		return binary[:i+len("/node_modules")]
	}
	return filepath.Dir(binary)
}

func toolList(tools []providers.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

// events passes a stream's events to the request, masked, and counts them
// against the step's limits.
type events struct {
	req   *providers.Request
	mask  func(string) string
	lim   *limits
	price func(u providers.Usage, writes CacheWrites, model string) providers.Usage
	gate  *gate // notes the calls its CLI ran unasked; nil: none
	// before is the resumed session's total before the run, which the
	// stream of a SessionTotals CLI counts in its usage; zero otherwise.
	before providers.Usage
	// sent is the estimated input of one model call of the run (what
	// command gave it), its input estimate once for each call.
	sent int64

	// mu guards what follows: the usage file's tail reports from its own
	// goroutine.
	mu sync.Mutex
	// streamed counts the bytes of text and tool calls the stream carried,
	// what the run's output is estimated from when it reports none.
	streamed int
	// calls counts the model calls the stream told apart (Call).
	calls int
	// reported is the run's usage as the stream or the usage file last
	// told it, with its cache writes and model; counted is what the
	// limits last heard: reported, its zeros estimated.
	reported providers.Usage
	writes   CacheWrites
	model    string
	counted  providers.Usage
	// named is the model the stream named so far (Outcome.Model), and
	// configured the one the CLI's config names (ConfiguredModel; "" when
	// the agent was given one): what prices a report naming none, the
	// usage file's, so the cost budget binds mid-run on it.
	named, configured string
}

// input is the run's input as estimated: its prompt once for each model
// call the stream told apart, at least once.
func (e *events) input() int64 { return e.sent * int64(max(e.calls, 1)) }

// count checks the run's usage so far against the step's limits: what the
// stream or the usage file reported, with a count it left at zero
// estimated once the run wrote something, as charged estimates it when
// the run ends (which is never less: its input and output only grow). A
// CLI looping inside one run against a server that reports no usage is so
// stopped mid-run, not when the loop ends. heard is a new report, checked
// again even when it adds nothing (the session's other steps may have
// spent since); an estimate is checked only when it grew. Callers hold mu.
func (e *events) count(heard bool) {
	u := e.reported
	if e.streamed > 0 {
		u = providers.Charge(u, true, e.input(), e.streamed)
	}
	if !heard && u.Input == e.counted.Input && u.Output == e.counted.Output {
		return
	}
	e.counted = u
	model := e.model
	if model == "" {
		model = e.named
	}
	if model == "" {
		model = e.configured
	}
	e.lim.used(e.price(u, e.writes, model))
}

func (e *events) Text(delta string) {
	e.mu.Lock()
	e.streamed += len(delta)
	e.count(false)
	e.mu.Unlock()
	e.req.StreamText(e.mask(delta))
}

func (e *events) Tool(rec providers.ToolRecord) {
	e.mu.Lock()
	e.streamed += len(rec.Name) + len(rec.Arguments)
	e.count(false)
	e.mu.Unlock()
	e.req.RecordTool(rec) // masked by the run's maskedRecorder
	e.gate.noteUnasked(rec)
	if rec.Kind != "web_search" { // searches do not count, as in an API agent's loop
		e.lim.ran(rec.Name)
	}
}

func (e *events) Call() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	e.count(false)
}

func (e *events) Usage(run providers.Usage, writes CacheWrites, model string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reported, e.writes, e.model = since(run, e.before), writes, model
	e.count(true)
}

// perCall hears the run's usage so far from its usage file (callTail),
// which holds the run's own calls only.
func (e *events) perCall(run providers.Usage) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reported, e.writes, e.model = run, CacheWrites{}, ""
	e.count(true)
}

func (e *events) Retry(wait time.Duration, err error) {
	if err != nil {
		err = errors.New(e.mask(err.Error()))
	}
	e.req.StreamRetry(wait, err)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, " | "))
}
