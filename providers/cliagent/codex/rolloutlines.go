package codex

import (
	"bufio"

	"github.com/massgen-go/massgen-mcp/providers/cliagent"
)

// maxRolloutLine bounds a line of a rollout this process reads. A
// token_count event is well under a KiB, and Codex's long lines (a
// command's output, an image) are no usage; but the rollout lies in the
// agent's kept sessions, writable in its sandbox, where a line may be as
// long as the agent's disk allows, and this process reads it outside.
const maxRolloutLine = 4 << 20

// eachLine calls fn with each line r holds, without its newline, up to
// limit bytes long, the last one needing no newline. A longer line is
// skipped, read through in r's buffer only: it cannot be a usage record,
// and is never held whole.
func eachLine(r *bufio.Reader, limit int, fn func(line []byte)) {
	lines := cliagent.NewUsageLines(limit)
	// Any error ends the file: what was read of its last line still counts.
	_, _ = lines.Read(r, fn)
	lines.Flush(fn)
}
