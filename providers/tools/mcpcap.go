package tools

import "fmt"

// shown is text from or about the server as a tool result may hold it:
// masked, then cut to maxMCPResult with a note that names the server. A
// message may be 8 MiB (maxMCPMessage) and an error quotes an HTTP error's
// whole body, which would otherwise go whole into the model's context,
// tools.jsonl and the bill.
//
// Masking comes before the cut, so the cut cannot leave the head of a
// secret unmasked; the text is first trimmed to twice the cap, so that
// masking an 8 MiB page does not take seconds of CPU. The trim may cut a
// secret in two, and its head, which masking cannot recognise, ends the
// trimmed text; as masking may shrink the text below the cap (a result
// echoing a secret over and over), as many bytes as the longest secret
// are dropped from that end.
func (s *mcpServer) shown(text string, mask func(string) string) string {
	total := len(text)
	trimmed := total > 2*maxMCPResult
	if trimmed {
		text = text[:runeCut(text, 2*maxMCPResult)]
	}
	text = mask(text)
	if trimmed {
		longest := 0
		for _, v := range s.secrets() {
			longest = max(longest, len(v))
		}
		text = text[:runeCut(text, max(0, len(text)-longest))]
	}
	if total <= maxMCPResult && len(text) <= maxMCPResult {
		return text
	}
	// The note is sized for the largest count it can show, so the result
	// never passes the cap.
	note := func(more int) string {
		return fmt.Sprintf("\n[… %d more bytes from MCP server %s not shown: a tool result holds at most %d KiB]", more, s.name, maxMCPResult>>10)
	}
	cut := runeCut(text, max(0, maxMCPResult-len(note(total))))
	return text[:cut] + note(total-cut)
}

// runeCut is where to cut text to at most n bytes without splitting a
// UTF-8 sequence.
func runeCut(text string, n int) int {
	if n >= len(text) {
		return len(text)
	}
	for n > 0 && !isRuneStart(text[n]) {
		n--
	}
	return n
}

// shownError is an error whose message is cut and masked (shown) and which
// still wraps what went wrong.
type shownError struct {
	msg string
	err error
}

func (e *shownError) Error() string { return e.msg }
func (e *shownError) Unwrap() error { return e.err }
