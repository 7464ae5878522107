package cliagent

import (
	"bufio"
	"io"
	"os"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/massgen-go/massgen-mcp/providers"
)

// CallUsage is implemented by a CLI whose stream reports usage only when
// its turn ends but which writes each model call's usage to a file while it
// runs (Codex's session rollout, Gemini CLI's chat recording). The step tails that file, so its token
// and cost budgets bind within one model call rather than at the turn's end.
type CallUsage interface {
	// UsageFile is the file the run writes its per-call usage to, where
	// this process reads it, or "" while it cannot be told yet. configDir
	// is the CLI's config directory and runDir the run's directory
	// (Run.RunDir) as this process sees them; session is the CLI's session
	// id ("" until its stream names it).
	UsageFile(configDir, runDir, session string) string
	// NewUsageReader reads that file, from where the run began.
	NewUsageReader() UsageReader
}

// SessionTotals is implemented by a CLI whose stream reports a resumed
// session's usage as the session's running total, earlier runs included:
// Codex's turn.completed carries its thread's total_token_usage, which a
// resumed thread seeds from its rollout. The step reads that total before
// a resumed run and counts only what the run added to it.
type SessionTotals interface {
	// SessionTotal is the session's running total so far (zero when it
	// cannot be told), configDir the CLI's config directory as this
	// process sees it.
	SessionTotal(configDir, session string) providers.Usage
}

// since is a stream's usage less the session's total before the run, when
// the stream counts that total (each count at least its part of it);
// otherwise the stream's own. Both are made sane first, as the API adapters
// make a server's (a CLI's negative count or cost would lower the session's
// spend, an absurd one wrap its sums).
func since(u, before providers.Usage) providers.Usage {
	u, before = u.Sane(), before.Sane()
	if before.Tokens() == 0 || u.Input < before.Input || u.CachedInput < before.CachedInput || u.Output < before.Output || u.Reasoning < before.Reasoning {
		return u
	}
	u.Input -= before.Input
	u.CachedInput -= before.CachedInput
	u.Output -= before.Output
	u.Reasoning -= before.Reasoning
	return u
}

// UsageReader reads a usage file one complete line at a time.
type UsageReader interface {
	// Line reads one line; ok says it reported a model call, and sofar is
	// the usage of every call read so far.
	Line(line []byte) (sofar providers.Usage, ok bool)
}

// maxUsageLine bounds a line of a usage file the tail reads: the file
// lies where the agent writes, and this process reads it outside the
// sandbox, where a line may be as long as the agent's disk allows. Usage
// records are far shorter (a Codex token_count event is under a KiB, a
// Gemini CLI chat message its model's reply and tokens): a longer line
// is read through, never held, and counts as no record.
const maxUsageLine = 8 << 20

// tailEvery is how often a usage file is read: a model call takes seconds,
// so a quarter second adds little to what one call costs past a budget.
const tailEvery = 250 * time.Millisecond

// callTail follows one run's usage file on its own goroutine and reports
// each model call's usage to the step's limits.
type callTail struct {
	src     CallUsage
	cfgDir  string
	runDir  string
	reader  UsageReader
	report  func(providers.Usage)
	mu      sync.Mutex
	session string
	path    string
	offset  int64
	// before is the session's file when a resumed run began, and its size
	// then: what it holds already is earlier runs' calls.
	before     string
	beforeSize int64
	// lines holds the line being written, up to maxUsageLine.
	lines *UsageLines
	sofar providers.Usage
	heard bool
	// watch hears the file's writes once it is found (follow's goroutine
	// owns it; read runs there, or after follow returned).
	watch    *fsnotify.Watcher
	watching bool
	stop     chan struct{}
	done     chan struct{}
}

// startCallTail starts following the run's usage file, or returns nil when
// the CLI writes none. resume is the session the run continues: its file
// already holds earlier runs' calls, which are skipped.
func startCallTail(cli CLI, cfgDir, runDir, resume string, report func(providers.Usage)) *callTail {
	src, ok := cli.(CallUsage)
	if !ok {
		return nil
	}
	t := &callTail{src: src, cfgDir: cfgDir, runDir: runDir, reader: src.NewUsageReader(), lines: NewUsageLines(maxUsageLine), report: report, session: resume,
		stop: make(chan struct{}), done: make(chan struct{})}
	if resume != "" {
		if path := src.UsageFile(cfgDir, runDir, resume); path != "" {
			if st, err := os.Stat(path); err == nil {
				t.before, t.beforeSize = path, st.Size()
			}
		}
	}
	go t.follow()
	return t
}

// setSession names the run's session once the stream tells it.
func (t *callTail) setSession(id string) {
	if t == nil || id == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.session = id
}

// follow reads the file as it grows: on each write fsnotify reports (a
// fake or fast model makes calls milliseconds apart, faster than a poll),
// and every tailEvery in case the watch cannot be had.
func (t *callTail) follow() {
	defer close(t.done)
	tick := time.NewTicker(tailEvery)
	defer tick.Stop()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		events, errs = w.Events, w.Errors
		defer func() { t.watch = nil }()
		t.watch = w
	}
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
			t.read()
		case <-events:
			t.read()
		case <-errs:
		}
	}
}

// read reads what the file gained since the last read and reports the
// usage so far when a call was added.
func (t *callTail) read() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.heard {
		// Until the file reported a call, the run may still start a newer
		// one (a resumed session that writes a file of its own).
		path := t.src.UsageFile(t.cfgDir, t.runDir, t.session)
		if path == "" {
			return
		}
		if path != t.path {
			t.path, t.offset, t.lines, t.watching = path, 0, NewUsageLines(maxUsageLine), false
			if path == t.before {
				t.offset = t.beforeSize
			}
		}
	}
	if t.watch != nil && !t.watching {
		t.watching = t.watch.Add(t.path) == nil
	}
	f, err := OpenUsageFile(t.path)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(t.offset, io.SeekStart); err != nil {
		return
	}
	// Each read reads at most maxLine bytes, through a small buffer: a
	// line past maxUsageLine is read through, never held.
	r := bufio.NewReaderSize(io.LimitReader(f, maxLine), 64<<10)
	added := false
	// What ends the read is the end of what was written so far: a line
	// still being written waits in lines for its end.
	n, _ := t.lines.Read(r, func(line []byte) {
		if u, ok := t.reader.Line(line); ok {
			t.sofar, t.heard, added = u.Sane(), true, true
		}
	})
	t.offset += n
	if added {
		t.report(t.sofar)
	}
}

// close stops following, reads what the run wrote last, and returns the
// usage of every call the file reported (ok false when it reported none).
func (t *callTail) close() (providers.Usage, bool) {
	if t == nil {
		return providers.Usage{}, false
	}
	close(t.stop)
	<-t.done
	t.read()
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sofar, t.heard
}
