package cliagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent/relay"
)

// workflow is a step's end of the relay: it listens on the step's Unix
// socket (mode 0600, in a directory of mode 0700), checks each forwarded
// call's shape against the offered tools, and keeps the first call that
// passes. Protocol rules (duplicates, a vote for an agent without an answer)
// are coordination's, which refuses through the next attempt's History.
type workflow struct {
	dir    string
	peers  string   // beside dir: the shown answers' files (peerFiles)
	lock   *os.File // held while dir and peers live (steplock.go)
	socket string
	ln     net.Listener
	tools  []providers.Tool
	extra  *extraTools // nil: the workflow tools only
	lim    *limits     // counts the calls that do not land; nil: none
	gate   *gate       // answers the CLI's permission questions; nil: none asked

	mu     sync.Mutex
	call   *providers.ToolCall
	landed chan struct{} // closed when a call is accepted
	wg     sync.WaitGroup
}

// listenWorkflow opens a step's socket in a fresh private directory: under
// base (the agent's own directory, with its other private files) when the
// socket's path fits there, else under TMPDIR. It first sweeps there what
// killed runs left (sweepSteps).
func listenWorkflow(base string, tools []providers.Tool, extra *extraTools, lim *limits) (*workflow, error) {
	// A Unix socket's path is limited to 108 bytes.
	if base == "" || len(base)+len("/massgen-step-4294967295/relay.sock") > 100 {
		base = ""
	}
	sweepSteps(base)
	dir, lock, err := stepDir(base)
	if err != nil {
		return nil, fmt.Errorf("cannot create the step's socket directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		releaseStep(dir, lock)
		return nil, err
	}
	w := &workflow{dir: dir, peers: dir + ".peers", lock: lock, socket: filepath.Join(dir, "relay.sock"), tools: tools, extra: extra, lim: lim, landed: make(chan struct{})}
	ln, err := net.Listen("unix", w.socket)
	if err != nil {
		releaseStep(dir, lock)
		return nil, fmt.Errorf("cannot listen on the step's socket: %w", err)
	}
	if err := os.Chmod(w.socket, 0o600); err != nil {
		ln.Close()
		releaseStep(dir, lock)
		return nil, err
	}
	w.ln = ln
	w.wg.Add(1)
	go w.serve()
	return w, nil
}

func (w *workflow) serve() {
	defer w.wg.Done()
	for {
		conn, err := w.ln.Accept()
		if err != nil {
			return // closed
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.answer(conn)
		}()
	}
}

// answer reads one call from a connection and writes its verdict.
func (w *workflow) answer(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	r := bufio.NewReaderSize(conn, 64<<10)
	line, err := readLine(r, relay.MaxLine)
	if err != nil {
		return
	}
	var c relay.Call
	v := relay.Verdict{}
	if err := json.Unmarshal(line, &c); err != nil {
		v.Message = "the workflow server sent a call that is not JSON"
	} else if (c.Tool == relay.HookTool || c.Tool == relay.PromptTool) && w.gate != nil {
		// An ask may wait for a person, up to the rules' approval
		// timeout; the verdict's write is bounded again.
		_ = conn.SetDeadline(time.Time{})
		v = w.gate.answer(c)
		_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	} else if w.extra.serves(c.Tool) {
		if done := w.landedCall(); done != nil {
			v.Message = submitted(done.Name)
		} else {
			// An MCP server's tool runs as long as its own call timeout;
			// the verdict's write is bounded again, so a caller that never
			// reads cannot hold the step open.
			_ = conn.SetDeadline(time.Time{})
			v = w.extra.call(c)
			_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
		}
	} else {
		v = w.take(c)
	}
	out, _ := json.Marshal(v)
	_, _ = conn.Write(append(out, '\n'))
}

// take judges one call: the first one of the right shape lands. A call
// that does not land counts against the step's tool calls, so a CLI that
// keeps getting its answer wrong is stopped like one that loops on tools.
func (w *workflow) take(c relay.Call) relay.Verdict {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.call != nil {
		return relay.Verdict{Message: submitted(w.call.Name)}
	}
	refuse := func(msg string) relay.Verdict {
		if w.lim != nil {
			w.lim.ran(c.Tool + " (refused: " + clip(msg, 120) + ")")
		}
		return relay.Verdict{Message: msg}
	}
	i := slices.IndexFunc(w.tools, func(t providers.Tool) bool { return t.Name == c.Tool })
	if i < 0 {
		return refuse(fmt.Sprintf("%s is not offered in this step; call %s.", c.Tool, toolNames(w.tools)))
	}
	if prob := checkShape(w.tools[i], c.Arguments); prob != "" {
		return refuse(prob)
	}
	args := bytes.Clone(c.Arguments)
	w.call = &providers.ToolCall{Name: c.Tool, Args: args}
	close(w.landed)
	return relay.Verdict{Accepted: true, Message: accepted(c)}
}

// submitted refuses any call made after the step's call landed.
func submitted(tool string) string {
	return fmt.Sprintf("This step already submitted %s; it is complete. Stop now, without calling any more tools.", tool)
}

// accepted is the tool result of a call that landed: it ends the step.
func accepted(c relay.Call) string {
	what := "your answer"
	if c.Tool == providers.ToolVote {
		var a struct {
			AgentID string `json:"agent_id"`
		}
		_ = json.Unmarshal(c.Arguments, &a)
		what = "your vote for " + a.AgentID
	}
	return "Recorded " + what + ". Your step is complete: end your turn now, without calling any more tools."
}

// landedCall is the call that landed, or nil.
func (w *workflow) landedCall() *providers.ToolCall {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.call
}

// close stops listening, ends the calls and questions in progress (a
// permission question that waits for a person is refused), waits for them
// and removes the socket's directory and the peers' files.
func (w *workflow) close() {
	w.ln.Close()
	w.extra.end()
	w.gate.end()
	w.wg.Wait()
	releaseStep(w.dir, w.lock)
}

func toolNames(tools []providers.Tool) string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return strings.Join(names, " or ")
}

// checkShape checks a call's arguments against the top level of its tool's
// schema: an object, every required property present, each property of its
// declared type and, with an enum, one of its values (a vote's agent_id).
// It returns what to fix, or "".
func checkShape(t providers.Tool, args json.RawMessage) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return fmt.Sprintf("%s takes a JSON object of arguments: %s", t.Name, schemaHint(t))
	}
	var schema struct {
		Properties map[string]struct {
			Type string            `json:"type"`
			Enum []json.RawMessage `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(t.Schema, &schema) != nil {
		return ""
	}
	for _, name := range schema.Required {
		if _, ok := obj[name]; !ok {
			return fmt.Sprintf("%s needs %q: %s", t.Name, name, schemaHint(t))
		}
	}
	for _, name := range sortedRaw(obj) {
		p, known := schema.Properties[name]
		if !known {
			continue
		}
		raw := bytes.TrimSpace(obj[name])
		if p.Type != "" && !hasType(raw, p.Type) {
			return fmt.Sprintf("%s's %q must be a JSON %s", t.Name, name, p.Type)
		}
		if len(p.Enum) > 0 && !slices.ContainsFunc(p.Enum, func(e json.RawMessage) bool { return jsonEqual(e, raw) }) {
			return fmt.Sprintf("%s's %q must be one of %s", t.Name, name, enumText(p.Enum))
		}
		if p.Type == "string" && name == "content" {
			var s string
			_ = json.Unmarshal(raw, &s)
			if strings.TrimSpace(s) == "" {
				return fmt.Sprintf("%s's content is empty; write your complete answer in it", t.Name)
			}
		}
	}
	return ""
}

func sortedRaw(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func hasType(raw json.RawMessage, typ string) bool {
	if len(raw) == 0 {
		return false
	}
	switch typ {
	case "string":
		return raw[0] == '"'
	case "object":
		return raw[0] == '{'
	case "array":
		return raw[0] == '['
	case "boolean":
		return bytes.Equal(raw, []byte("true")) || bytes.Equal(raw, []byte("false"))
	case "number", "integer":
		return raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')
	}
	return true
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return bytes.Equal(xs, ys)
}

func enumText(enum []json.RawMessage) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		parts[i] = string(e)
	}
	return strings.Join(parts, ", ")
}

func schemaHint(t providers.Tool) string {
	var compact bytes.Buffer
	if json.Compact(&compact, t.Schema) != nil {
		return "see the tool's schema"
	}
	return compact.String()
}

// errLineTooLong is a line past readLine's limit.
var errLineTooLong = errors.New("line too long")

// errStreamTooLong is a stream past maxStream (boundedStream).
var errStreamTooLong = errors.New("stream too long")

// boundedStream reads at most left-1 bytes of r and fails the read after
// them with errStreamTooLong, so a stream of exactly the bound still ends
// with r's own EOF.
type boundedStream struct {
	r    io.Reader
	left int64
}

func (b *boundedStream) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errStreamTooLong
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left <= 0 {
		// The byte past the bound was read: the stream went on.
		return n - 1, errStreamTooLong
	}
	return n, err
}

// readLine reads one line of at most limit bytes.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > limit {
			return nil, errLineTooLong
		}
		if err == nil {
			return bytes.TrimRight(line, "\r\n"), nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > 0 && errors.Is(err, io.EOF) {
				return bytes.TrimRight(line, "\r\n"), nil
			}
			return nil, err
		}
	}
}
