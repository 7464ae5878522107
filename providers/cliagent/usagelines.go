package cliagent

import (
	"bufio"
	"bytes"
	"errors"
	"slices"
)

// UsageLines splits a usage file into lines up to a bound, read in one go
// (Codex's SessionTotal) or as the file grows (the call tail): the file lies
// where the agent writes, and a line may be as long as its disk allows. A
// longer line is read through in the reader's buffer only, never held, and
// counts as no line. Between reads it keeps the line still being written.
type UsageLines struct {
	limit int
	// line is the line read so far, up to limit; skipping says it is past
	// limit and is being read through.
	line     []byte
	skipping bool
}

// NewUsageLines splits lines of up to limit bytes, the newline not counted.
func NewUsageLines(limit int) *UsageLines {
	return &UsageLines{limit: limit}
}

// Read calls fn with each complete line r holds, without its newline, and
// returns the bytes it read and the error that ended the reading (io.EOF at
// r's end). A line r ends without its newline waits for the next Read, or
// for Flush.
func (l *UsageLines) Read(r *bufio.Reader, fn func(line []byte)) (int64, error) {
	var read int64
	for {
		chunk, err := r.ReadSlice('\n')
		read += int64(len(chunk))
		n := len(l.line) + len(chunk)
		if err == nil {
			n-- // the newline ReadSlice stopped at
		}
		if !l.skipping && n > l.limit {
			l.skipping, l.line = true, nil
		}
		if !l.skipping {
			// Doubled, not grown by append's quarter for large
			// slices: a line near the limit costs twice the limit
			// all told, not five times.
			if cap(l.line)-len(l.line) < len(chunk) {
				l.line = slices.Grow(l.line, max(len(chunk), cap(l.line)))
			}
			l.line = append(l.line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return read, err
		}
		if !l.skipping {
			fn(bytes.TrimSuffix(l.line, []byte("\n")))
		}
		l.line, l.skipping = l.line[:0], false
	}
}

// Flush calls fn with the line the last Read left unterminated, when it
// is within the limit and not empty: a whole file's last line needs no
// newline.
func (l *UsageLines) Flush(fn func(line []byte)) {
	if !l.skipping && len(l.line) > 0 {
		fn(l.line)
	}
	l.line, l.skipping = l.line[:0], false
}
