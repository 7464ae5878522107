package codex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

// UsageFile implements cliagent.CallUsage: the session's rollout,
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl, which
// Codex appends a token_count event to after each model response (codex
// exec --json says nothing of usage until turn.completed). A resumed
// thread's rollout is the one it began in; the newest match wins.
func (CLI) UsageFile(configDir, _, session string) string {
	if configDir == "" || !threadID.MatchString(session) {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(configDir, "sessions", "*", "*", "*", "rollout-*-"+session+".jsonl"))
	var newest string
	var at int64
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && (newest == "" || st.ModTime().UnixNano() > at) {
			newest, at = m, st.ModTime().UnixNano()
		}
	}
	return newest
}

// SessionTotal implements cliagent.SessionTotals: the thread's running
// total as its rollout's last token_count gives it, which a resumed thread
// starts from and its turn.completed reports, earlier runs included.
func (c CLI) SessionTotal(configDir, session string) providers.Usage {
	path := c.UsageFile(configDir, "", session)
	if path == "" {
		return providers.Usage{}
	}
	f, err := cliagent.OpenUsageFile(path)
	if err != nil {
		return providers.Usage{}
	}
	defer f.Close()
	var total *tokenUsage
	// A line past maxRolloutLine is skipped: no token_count event is
	// that long, and the lines after it still count.
	eachLine(bufio.NewReaderSize(f, 64<<10), maxRolloutLine, func(line []byte) {
		if !bytes.Contains(line, []byte(`"token_count"`)) {
			return
		}
		var l rolloutLine
		if json.Unmarshal(line, &l) == nil && l.Type == "event_msg" && l.Payload.Type == "token_count" && l.Payload.Info != nil && l.Payload.Info.Total != nil {
			total = l.Payload.Info.Total
		}
	})
	if total == nil {
		return providers.Usage{}
	}
	return providers.Usage{Input: total.InputTokens, CachedInput: total.CachedInputTokens, Output: total.OutputTokens, Reasoning: total.ReasoningOutputTokens}
}

// threadID is what a Codex thread id looks like (a UUID); anything else
// must not reach the glob.
var threadID = regexp.MustCompile(`^[0-9A-Za-z-]{1,64}$`)

// NewUsageReader implements cliagent.CallUsage.
func (CLI) NewUsageReader() cliagent.UsageReader { return &rolloutReader{} }

// rolloutReader sums the rollout's token_count events: each carries the
// last response's usage (last_token_usage) and the thread's running total,
// which only grows; an event that repeats the total (a rate-limit update)
// adds nothing.
type rolloutReader struct {
	sofar providers.Usage
	total int64
}

// tokenUsage is Codex's usage record: input includes its cached part,
// output its reasoning part, as providers.Usage counts them.
type tokenUsage struct {
	InputTokens           int64 `json:"input_tokens"`
	CachedInputTokens     int64 `json:"cached_input_tokens"`
	OutputTokens          int64 `json:"output_tokens"`
	ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
	TotalTokens           int64 `json:"total_tokens"`
}

type rolloutLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type string `json:"type"`
		Info *struct {
			Total *tokenUsage `json:"total_token_usage"`
			Last  *tokenUsage `json:"last_token_usage"`
		} `json:"info"`
	} `json:"payload"`
}

func (r *rolloutReader) Line(line []byte) (providers.Usage, bool) {
	var l rolloutLine
	if json.Unmarshal(line, &l) != nil || l.Type != "event_msg" || l.Payload.Type != "token_count" {
		return providers.Usage{}, false
	}
	info := l.Payload.Info
	if info == nil || info.Last == nil || info.Total == nil || info.Total.TotalTokens == r.total {
		return providers.Usage{}, false
	}
	r.total = info.Total.TotalTokens
	r.sofar.Input += info.Last.InputTokens
	r.sofar.CachedInput += info.Last.CachedInputTokens
	r.sofar.Output += info.Last.OutputTokens
	r.sofar.Reasoning += info.Last.ReasoningOutputTokens
	return r.sofar, true
}
