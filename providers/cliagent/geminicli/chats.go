package geminicli

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

// UsageFile implements cliagent.CallUsage: the run's chat recording,
// $GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.jsonl, where
// Gemini CLI writes each model message with its tokens as soon as the
// response is in (its stream-json tells usage only in its result). Every
// step is a fresh session in a fresh run directory, so the run's file is
// the newest there.
func (CLI) UsageFile(_, runDir, _ string) string {
	if runDir == "" {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(runDir, geminiHome, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	var newest string
	var at int64
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && (newest == "" || st.ModTime().UnixNano() > at) {
			newest, at = m, st.ModTime().UnixNano()
		}
	}
	return newest
}

// NewUsageReader implements cliagent.CallUsage.
func (CLI) NewUsageReader() cliagent.UsageReader {
	return &chatReader{seen: map[string]providers.Usage{}}
}

// chatReader sums the tokens of the recording's model messages. The CLI
// rewrites a message when its tool calls are added, with the same id and
// tokens, so each id counts once.
type chatReader struct {
	seen  map[string]providers.Usage
	sofar providers.Usage
}

type chatMessage struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Tokens *struct {
		Input    int64 `json:"input"`
		Output   int64 `json:"output"`
		Cached   int64 `json:"cached"`
		Thoughts int64 `json:"thoughts"`
	} `json:"tokens"`
}

func (r *chatReader) Line(line []byte) (providers.Usage, bool) {
	var m chatMessage
	if json.Unmarshal(line, &m) != nil || m.Type != "gemini" || m.ID == "" || m.Tokens == nil {
		return providers.Usage{}, false
	}
	// As the stream's result counts them: input with its cached part,
	// output with the thoughts.
	u := providers.Usage{Input: m.Tokens.Input, CachedInput: m.Tokens.Cached,
		Output: m.Tokens.Output + m.Tokens.Thoughts, Reasoning: m.Tokens.Thoughts}
	old, seen := r.seen[m.ID]
	if seen && old == u {
		return providers.Usage{}, false
	}
	r.seen[m.ID] = u
	r.sofar.Input += u.Input - old.Input
	r.sofar.CachedInput += u.CachedInput - old.CachedInput
	r.sofar.Output += u.Output - old.Output
	r.sofar.Reasoning += u.Reasoning - old.Reasoning
	return r.sofar, true
}
