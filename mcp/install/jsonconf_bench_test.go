package install

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkJSONSetBigClaudeJSON edits a ~/.claude.json of a few MB, the size
// Claude Code grows it to with per-project history.
func BenchmarkJSONSetBigClaudeJSON(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("{\n  \"projects\": {\n")
	for i := range 20000 {
		fmt.Fprintf(&sb, "    \"/home/u/src/p%d\": {\"allowedTools\": [], \"history\": [{\"display\": \"fix the flaky test // in package %d\"}]},\n", i, i)
	}
	sb.WriteString("    \"/last\": {}\n  },\n  \"mcpServers\": {}\n}\n")
	data := []byte(sb.String())
	entry := []byte(`{"type":"stdio","command":"massgen-mcp","args":["serve"]}`)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := jsonSet(data, []string{"mcpServers", ServerName}, entry, false); err != nil {
			b.Fatal(err)
		}
	}
}
