package cliagent

import (
	"bufio"
	"slices"
	"strings"
	"testing"
)

// A line exactly at the limit is kept and one byte past it skipped whole;
// a line split across reads is read once its end is written, and the
// bytes read count every byte, skipped ones too; a last line with no
// newline waits for Flush.
func TestUsageLinesKeepsLinesUpToTheLimitAcrossReads(t *testing.T) {
	const limit = 20
	atLimit, past := strings.Repeat("a", limit), strings.Repeat("b", limit+1)
	writes := []string{
		"one\n" + atLimit + "\n" + past + "\nspl",
		"it\n" + strings.Repeat("c", limit-3),
		strings.Repeat("c", 4) + "\nlast",
	}
	lines := NewUsageLines(limit)
	var got []string
	var read int64
	for _, w := range writes {
		// A buffer smaller than the limit makes every long line
		// arrive in pieces, as a big line does through the tail's.
		n, err := lines.Read(bufio.NewReaderSize(strings.NewReader(w), 16), func(line []byte) { got = append(got, string(line)) })
		if err == nil {
			t.Fatalf("Read of %q ended with no error, want the reader's end", w)
		}
		read += n
	}
	want := []string{"one", atLimit, "split"}
	if !slices.Equal(got, want) {
		t.Errorf("lines before Flush %q, want %q", got, want)
	}
	if total := int64(len(strings.Join(writes, ""))); read != total {
		t.Errorf("Read counted %d bytes, want all %d written", read, total)
	}
	lines.Flush(func(line []byte) { got = append(got, string(line)) })
	if want = append(want, "last"); !slices.Equal(got, want) {
		t.Errorf("lines after Flush %q, want %q", got, want)
	}
}
