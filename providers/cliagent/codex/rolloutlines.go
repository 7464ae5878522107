package codex

import (
	"bufio"
	"bytes"
	"errors"
	"slices"
)

// maxRolloutLine bounds a line of a rollout this process reads. A
// token_count event is well under a KiB, and Codex's long lines (a
// command's output, an image) are no usage; but the rollout lies in the
// agent's kept sessions, writable in its sandbox, where a line may be as
// long as the agent's disk allows, and this process reads it outside.
const maxRolloutLine = 4 << 20

// eachLine calls fn with each line r holds, without its newline, up to
// limit bytes long. A longer line is skipped, read through in r's buffer
// only: it cannot be a usage record, and is never held whole.
func eachLine(r *bufio.Reader, limit int, fn func(line []byte)) {
	var line []byte
	skipping := false
	for {
		chunk, err := r.ReadSlice('\n')
		n := len(line) + len(chunk)
		if err == nil {
			n-- // the newline ReadSlice stopped at
		}
		if !skipping && n > limit {
			skipping, line = true, line[:0]
		}
		if !skipping {
			// Doubled, not grown by append's quarter for large
			// slices: a line near the limit costs twice the limit
			// all told, not five times.
			if cap(line)-len(line) < len(chunk) {
				line = slices.Grow(line, max(len(chunk), cap(line)))
			}
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !skipping && len(line) > 0 {
			fn(bytes.TrimSuffix(line, []byte("\n")))
		}
		line, skipping = line[:0], false
		if err != nil {
			return
		}
	}
}
