package cliagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/massgen-go/massgen-mcp/internal/await"
	"github.com/massgen-go/massgen-mcp/providers"
)

// recorder is a request's Watcher and Recorder.
type recorder struct {
	mu    sync.Mutex
	text  strings.Builder
	tools []providers.ToolRecord
	// seen, when set, is where Record writes seen-<n> for the n-th
	// record: the looping fake waits for it before its next turn.
	seen string
}

func (r *recorder) Text(d string)              { r.mu.Lock(); r.text.WriteString(d + "\n"); r.mu.Unlock() }
func (r *recorder) Retry(time.Duration, error) {}
func (r *recorder) Record(rec providers.ToolRecord) {
	r.mu.Lock()
	r.tools = append(r.tools, rec)
	n := len(r.tools)
	r.mu.Unlock()
	if r.seen != "" {
		os.WriteFile(filepath.Join(r.seen, fmt.Sprintf("seen-%d", n)), nil, 0o644)
	}
}

func testTools() []providers.Tool {
	return []providers.Tool{
		{Name: providers.ToolNewAnswer, Description: "answer", Schema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`)},
		{Name: providers.ToolVote, Description: "vote", Schema: json.RawMessage(`{"type":"object","properties":{"agent_id":{"type":"string","enum":["agent1","agent2"]},"reason":{"type":"string"}},"required":["agent_id","reason"]}`)},
	}
}

type harness struct {
	t    *testing.T
	p    *Provider
	ws   string
	rec  *recorder
	opts Options
}

func newHarness(t *testing.T, mode string, tweak ...func(*Options)) *harness {
	t.Helper()
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	opts := Options{
		Model:  "claude-opus-4-6",
		Binary: self,
		Env:    []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home},
		Dir:    t.TempDir(),
		Relay:  []string{self, "relay-server"},
		Slots:  semaphore.NewWeighted(4),
	}
	for _, f := range tweak {
		f(&opts)
	}
	p, err := New(testCLI{mode: mode}, opts)
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	rec := &recorder{}
	if mode == "loop" {
		rec.seen = ws
	}
	return &harness{t: t, p: p, ws: ws, rec: rec, opts: opts}
}

func (h *harness) request() providers.Request {
	return providers.Request{
		Purpose: providers.PurposeStep, System: "You are agent.", Prompt: "What is 17 * 23? Write answer.txt.",
		Tools: testTools(), Workspace: h.ws, AgentID: "agent_a", SessionSeed: 7, StepNumber: 1,
		VoteEnum: []string{"agent1", "agent2"}, Watch: h.rec, Record: h.rec,
	}
}

// step runs one step with a minute to finish (tests that cancel a step call
// h.p.Step with their own context).
func (h *harness) step(req providers.Request) (providers.Action, providers.Usage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return h.p.Step(ctx, req)
}

func TestStepLandsNewAnswerThroughTheRelay(t *testing.T) {
	h := newHarness(t, "answer")
	act, u, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer || !strings.Contains(string(act.Calls[0].Args), "391") {
		t.Fatalf("action = %+v", act)
	}
	if b, err := os.ReadFile(filepath.Join(h.ws, "answer.txt")); err != nil || string(b) != "391\n" {
		t.Fatalf("answer.txt in the workspace: %q, %v", b, err)
	}
	// Every generated config lives outside the workspace.
	entries, _ := os.ReadDir(h.ws)
	if len(entries) != 1 {
		t.Fatalf("the workspace holds %d entries, want only answer.txt: %v", len(entries), entries)
	}
	if u.Input != 100 || u.Output != 20 || u.CostUSD == nil || *u.CostUSD <= 0 || u.CostEstimated {
		t.Fatalf("usage = %+v (cost %v): want the stream's tokens priced from the table", u, u.CostUSD)
	}
	if !strings.Contains(h.rec.text.String(), "Recorded your answer") {
		t.Fatalf("the relay's verdict did not reach the CLI: %q", h.rec.text.String())
	}
	if len(h.rec.tools) != 1 || h.rec.tools[0].Kind != "file_change" {
		t.Fatalf("tool records = %+v", h.rec.tools)
	}
}

func TestVoteOutsideTheEnumIsRefusedAndTheNextCallLands(t *testing.T) {
	h := newHarness(t, "vote")
	act, _, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolVote || !strings.Contains(string(act.Calls[0].Args), `"agent2"`) {
		t.Fatalf("action = %+v", act)
	}
	text := h.rec.text.String()
	if !strings.Contains(text, `first vote: true vote's "agent_id" must be one of "agent1", "agent2"`) {
		t.Fatalf("the refusal of agent9 did not reach the CLI: %q", text)
	}
	if !strings.Contains(text, "second vote: false Recorded your vote for agent2") {
		t.Fatalf("the second vote was not recorded: %q", text)
	}
}

func TestPlantedSecretNeverReachesTheChild(t *testing.T) {
	h := newHarness(t, "env", func(o *Options) {
		o.Env = append(o.Env, "OPENAI_API_KEY=sk-dummy-planted-secret-not-a-key-0000", "MY_DB_PASSWORD=hunter2hunter2",
			"FAKE_API_KEY=dummy-fake-key-not-a-key", "HTTPS_PROXY=http://proxy.example:3128", "FAKE_CONFIG_DIR=/should/not/stay")
	})
	act, _, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(act.Text, "\n") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for _, bad := range []string{"OPENAI_API_KEY", "MY_DB_PASSWORD"} {
		if _, ok := env[bad]; ok {
			t.Errorf("%s reached the CLI", bad)
		}
	}
	if strings.Contains(act.Text, "sk-dummy-planted-secret-not-a-key-0000") || strings.Contains(act.Text, "hunter2") {
		t.Errorf("a planted secret's value reached the CLI")
	}
	if env["FAKE_API_KEY"] != "dummy-fake-key-not-a-key" || env["HTTPS_PROXY"] != "http://proxy.example:3128" || env["FAKE_TELEMETRY"] != "off" {
		t.Errorf("the CLI's own variables, the proxy or its defaults are missing: %v", env)
	}
	if env["HOME"] == "" || strings.HasPrefix(env["HOME"], h.ws) || !strings.HasPrefix(env["HOME"], h.opts.Dir) {
		t.Errorf("HOME = %q: want a per-agent HOME under %s, outside the workspace", env["HOME"], h.opts.Dir)
	}
	if env["FAKE_CONFIG_DIR"] == "/should/not/stay" || env["FAKE_CONFIG_DIR"] == "" {
		t.Errorf("the config directory variable is %q: the framework sets it", env["FAKE_CONFIG_DIR"])
	}
}

// gone reports whether a process no longer runs (absent, or a zombie
// waiting for a reaper).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && len(s) > i+2 && s[i+2] == 'Z'
}

// pidsOf waits for the pids the hanging fake CLI writes once it is up
// with its child; stepEnded (nil once the step has returned) is the
// step's error: a step that ends first fails the test at once. The bound
// is a start's on a loaded machine (the fake is this race-built test
// binary), which 5 s was not always.
func pidsOf(t *testing.T, ws string, stepEnded <-chan error) []int {
	t.Helper()
	var b []byte
	await.Until(t, "the fake CLI writing its pids", await.Slow, func() bool {
		var err error
		b, err = os.ReadFile(filepath.Join(ws, "pids"))
		return err == nil && len(b) > 0
	}, stepEnded)
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		n, _ := strconv.Atoi(f)
		pids = append(pids, n)
	}
	if len(pids) != 2 {
		t.Fatalf("the hanging CLI did not write its pids: %q", b)
	}
	return pids
}

func assertGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for !gone(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d outlived the step", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func TestHangingCLIIsKilledWithItsChildrenAtTheStepTimeout(t *testing.T) {
	h := newHarness(t, "hang")
	// The step's deadline passes 1.5 s after the CLI is up with its child
	// (as a context.WithTimeout's would: done, its cause the deadline): a
	// deadline counted from the Step call could pass on a loaded machine
	// before the CLI had started, leaving no child to check.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	errc := make(chan error, 1)
	go func() { _, _, err := h.p.Step(ctx, h.request()); errc <- err }()
	pids := pidsOf(t, h.ws, errc)
	time.AfterFunc(1500*time.Millisecond, func() { cancel(context.DeadlineExceeded) })
	start := time.Now()
	err := <-errc
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the step's deadline", err)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Fatalf("the step took %v after its deadline", d)
	}
	assertGone(t, pids)
}

func TestCancelLeavesNoProcess(t *testing.T) {
	h := newHarness(t, "hang")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, _, err := h.p.Step(ctx, h.request()); errc <- err }()
	pids := pidsOf(t, h.ws, errc)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancelled", err)
	}
	assertGone(t, pids)
}

func TestFailuresAreErrorsInTheCLIsOwnWords(t *testing.T) {
	cases := []struct {
		mode  string
		class providers.Class
		want  []string
	}{
		{"malformed", providers.ClassProvider, []string{"fake printed a line that is not its JSON stream: panic: this is not the stream", "fatal: the fake CLI crashed"}},
		{"apierror", providers.ClassProvider, []string{"fake failed: API Error: 500 scripted error", "exit status 1"}},
		{"exit3", providers.ClassAuth, []string{"fake exited with status 3", "Error: not logged in; run fake login"}},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			h := newHarness(t, c.mode)
			_, _, err := h.step(h.request())
			var pe *providers.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a provider error", err)
			}
			if pe.Class != c.class {
				t.Errorf("class = %s, want %s (%s)", pe.Class, c.class, pe.Message)
			}
			for _, w := range c.want {
				if !strings.Contains(pe.Message, w) {
					t.Errorf("message %q lacks %q", pe.Message, w)
				}
			}
		})
	}
}

func TestNoCallIsAnActionWithoutCallsAndTheTextConventionAfterARefusal(t *testing.T) {
	h := newHarness(t, "textcall")
	req := h.request()
	act, _, err := h.step(req)
	if err != nil || len(act.Calls) != 0 {
		t.Fatalf("first attempt: %+v, %v: a call written as text counts only after a refusal", act, err)
	}
	req.Attempt = 1
	req.History = []providers.Turn{{Reply: act, Problem: "You did not call a workflow tool."}}
	act, _, err = h.step(req)
	if err != nil || len(act.Calls) != 1 || !strings.Contains(string(act.Calls[0].Args), "text answer") {
		t.Fatalf("after a refusal: %+v, %v", act, err)
	}
}

func TestLaterStepsResumeTheCLIsSessionAndHearTheRefusal(t *testing.T) {
	h := newHarness(t, "nocall")
	req := h.request()
	act, _, err := h.step(req)
	if err != nil || !strings.Contains(act.Text, "resume= ") {
		t.Fatalf("first run: %q, %v", act.Text, err)
	}
	req.Attempt = 1
	req.History = []providers.Turn{{Reply: act, Problem: "You did not call a workflow tool."}}
	act, _, err = h.step(req)
	if err != nil || !strings.Contains(act.Text, "resume=sess-") {
		t.Fatalf("second run did not resume: %q, %v", act.Text, err)
	}
	if !strings.Contains(act.Text, "prompt was: Your step is not done: You did not call a workflow tool.") {
		t.Fatalf("a resumed run hears only what was wrong: %q", act.Text)
	}
}

func TestKnownSecretsAreMaskedEverywhere(t *testing.T) {
	const key = "dummy-fake-secret-not-a-key"
	h := newHarness(t, "leak", func(o *Options) {
		o.Env = append(o.Env, "FAKE_API_KEY="+key)
		o.Secrets = []string{key}
	})
	act, _, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	all, _ := json.Marshal(struct {
		A providers.Action
		T string
		R []providers.ToolRecord
	}{act, h.rec.text.String(), h.rec.tools})
	if strings.Contains(string(all), key) {
		t.Fatalf("the key leaked: %s", all)
	}
	if !json.Valid(act.Calls[0].Args) || !strings.Contains(string(act.Calls[0].Args), "[key") {
		t.Fatalf("the answer's key is not masked in valid JSON: %s", act.Calls[0].Args)
	}
}

func TestACLIThatLingersAfterItsCallIsKilledAndItsCallStands(t *testing.T) {
	h := newHarness(t, "linger", func(o *Options) { o.AfterCall = 300 * time.Millisecond })
	start := time.Now()
	act, _, err := h.step(h.request())
	if err != nil || len(act.Calls) != 1 {
		t.Fatalf("%+v, %v", act, err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestAStepWaitsForAFreeCLISlot(t *testing.T) {
	slots := semaphore.NewWeighted(1)
	h := newHarness(t, "answer", func(o *Options) { o.Slots = slots })
	if err := slots.Acquire(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, _, err := h.p.Step(ctx, h.request())
	if err == nil || !strings.Contains(err.Error(), "waiting for a free CLI slot") {
		t.Fatalf("err = %v", err)
	}
	slots.Release(1)
	if _, _, err := h.step(h.request()); err != nil {
		t.Fatalf("with the slot free: %v", err)
	}
}

// sandboxed is the bwrap sandbox, or a skip where it cannot run (CI
// installs bubblewrap, so there it must).
func sandboxed(t *testing.T) Sandbox {
	t.Helper()
	sb := DefaultSandbox()
	if !sb.Confined() {
		if os.Getenv("CI") == "true" {
			t.Fatalf("bwrap cannot run here: %s", SandboxStatus())
		}
		t.Skip(SandboxStatus())
	}
	return sb
}

func TestInTheSandboxTheCLISeesItsWorkspaceAndHomeAndAnswersThroughTheRelay(t *testing.T) {
	sb := sandboxed(t)
	h := newHarness(t, "answer", func(o *Options) { o.Sandbox = sb })
	act, _, err := h.step(h.request())
	if err != nil || len(act.Calls) != 1 {
		t.Fatalf("%+v %v", act, err)
	}
	if b, err := os.ReadFile(filepath.Join(h.ws, "answer.txt")); err != nil || string(b) != "391\n" {
		t.Fatalf("answer.txt: %q %v", b, err)
	}
	h = newHarness(t, "env", func(o *Options) {
		o.Sandbox = sb
		o.Env = append(o.Env, "OPENAI_API_KEY=sk-dummy-planted-secret-not-a-key-0000")
	})
	act, _, err = h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"HOME=/home/agent", "FAKE_CONFIG_DIR=/home/agent/.fake"} {
		if !strings.Contains(act.Text, want+"\n") {
			t.Errorf("the sandboxed CLI's environment lacks %s:\n%s", want, act.Text)
		}
	}
	if strings.Contains(act.Text, "sk-dummy-planted-secret-not-a-key-0000") {
		t.Error("a planted secret reached the sandboxed CLI")
	}
}

// running lists host processes whose command line holds marker.
func running(marker string) []string {
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), marker) && !gone(mustAtoi(d.Name())) {
			out = append(out, d.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

func mustAtoi(s string) int { n, _ := strconv.Atoi(s); return n }

func TestInTheSandboxACancelledCLILeavesNoProcess(t *testing.T) {
	sb := sandboxed(t)
	h := newHarness(t, "hang", func(o *Options) { o.Sandbox = sb })
	secs := fmt.Sprintf("%d.%03d", 700+time.Now().Nanosecond()%200, time.Now().Nanosecond()%1000)
	req := h.request()
	req.Prompt = "hang with sleep=" + secs
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, _, err := h.p.Step(ctx, req); errc <- err }()
	await.Until(t, "the sandboxed CLI starting its child", await.Slow,
		func() bool { return len(running("sleep\x00"+secs)) > 0 }, errc)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := running("sleep\x00" + secs)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes outlived the sandboxed step: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestACLIsCostOnASubscriptionIsAnEstimateAndItsOwnFigureWins(t *testing.T) {
	h := newHarness(t, "subscription")
	_, u, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	if u.CostUSD == nil || *u.CostUSD != 0.5 || !u.CostEstimated {
		t.Fatalf("usage = %+v: want the CLI's own 0.5, marked an estimate", u)
	}
}

func TestUnknownModelWithoutTheCLIsFigureHasAnUnknownCost(t *testing.T) {
	h := newHarness(t, "nocall", func(o *Options) { o.Model = "a-model-no-table-knows" })
	_, u, err := h.step(h.request())
	if err != nil || u.CostUSD != nil || u.Input != 100 {
		t.Fatalf("usage = %+v, %v: unknown is nil, never 0", u, err)
	}
}

func TestASessionThatCannotBeResumedIsStartedAfresh(t *testing.T) {
	h := newHarness(t, "noresume")
	req := h.request()
	act, _, err := h.step(req)
	if err != nil || act.Text != "fresh start" {
		t.Fatalf("first run: %+v %v", act, err)
	}
	act, _, err = h.step(req) // its saved session is refused: once afresh
	if err != nil || act.Text != "fresh start" {
		t.Fatalf("a run whose session is gone: %+v %v", act, err)
	}
}

func TestInTheSandboxOnlyTheCLIsOwnConfigDirOfTheUsersHomeIsThere(t *testing.T) {
	sb := sandboxed(t)
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".fake"), 0o700)
	os.WriteFile(filepath.Join(home, ".fake", "login.json"), []byte("the-login"), 0o600)
	os.WriteFile(filepath.Join(home, ".ssh-key"), []byte("private"), 0o600)
	h := newHarness(t, "config", func(o *Options) {
		o.Sandbox = sb
		o.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	})
	req := h.request()
	req.Prompt = "probe=" + filepath.Join(home, ".ssh-key")
	act, _, err := h.step(req)
	if err != nil {
		t.Fatal(err)
	}
	if act.Text != "login=the-login other=unreadable" {
		t.Fatalf("the CLI saw %q: want its login and nothing else of HOME", act.Text)
	}
}

// A sandboxed CLI cannot write the user's own config directory, whose
// settings and hooks the user's later unsandboxed sessions would run: it
// reads the user's settings, but its write over them and a hook file it
// plants stay out of the user's directory. Only its login's refresh (the
// CLI's declared login file, valid JSON) is copied back, so the user stays
// logged in when the refresh token rotates.
func TestASandboxedCLICannotRewriteTheUsersConfigDir(t *testing.T) {
	sb := sandboxed(t)
	home := t.TempDir()
	cfg := filepath.Join(home, ".fake")
	os.MkdirAll(cfg, 0o700)
	os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(`{"hooks":"the user's"}`), 0o600)
	os.WriteFile(filepath.Join(cfg, "login.json"), []byte(`{"token":"old"}`), 0o600)
	h := newHarness(t, "cfgtamper", func(o *Options) {
		o.Sandbox = sb
		o.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	})
	act, _, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(act.Text, `settings: {"hooks":"the user's"}`) {
		t.Errorf("the CLI did not read the user's settings:\n%s", act.Text)
	}
	if b, _ := os.ReadFile(filepath.Join(cfg, "settings.json")); string(b) != `{"hooks":"the user's"}` {
		t.Errorf("the user's settings.json now holds %q (the CLI said:\n%s)", b, act.Text)
	}
	if _, err := os.Stat(filepath.Join(cfg, "hooks.json")); err == nil {
		t.Errorf("the CLI planted hooks.json in the user's config dir (it said:\n%s)", act.Text)
	}
	if b, _ := os.ReadFile(filepath.Join(cfg, "login.json")); string(b) != `{"token":"refreshed"}` {
		t.Errorf("the user's login.json holds %q: its refresh inside the sandbox did not reach it", b)
	}
}

// A CLI that bills a subscription here (SubscriptionTeller, decided at
// open) has its table-priced cost marked an estimate too.
func TestACostPricedOnASubscriptionLoginIsAnEstimate(t *testing.T) {
	h := newHarness(t, "answer", func(o *Options) { o.Subscription = true })
	_, u, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	if u.CostUSD == nil || *u.CostUSD <= 0 || !u.CostEstimated {
		t.Fatalf("usage = %+v: want the table's price, marked an estimate", u)
	}
}

// A setup file the user does not have is not the agent's to make either: a
// CLI that reloads its settings as they change would take allow rules the
// agent wrote mid-run. In the sandbox it finds an empty one, read-only.
func TestASandboxedCLICannotMakeTheSettingsTheUserHasNone(t *testing.T) {
	sb := sandboxed(t)
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".fake"), 0o700)
	h := newHarness(t, "cfgtamper", func(o *Options) {
		o.Sandbox = sb
		o.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	})
	act, _, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(act.Text, "settings: {}\n") || !strings.Contains(act.Text, "write over settings.json: refused") {
		t.Errorf("the CLI made its own settings:\n%s", act.Text)
	}
	if _, err := os.Stat(filepath.Join(home, ".fake", "settings.json")); err == nil {
		t.Errorf("settings.json appeared in the user's config dir")
	}
}
