package coordination

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// ReasonRunes is how long a failure's reason may be on a line.
const ReasonRunes = 160

// apiMessage finds an API's own words in an error that quotes its JSON body
// ({"error":{"message":"Prompt is too long"}}): they say more than the
// envelope around them.
var apiMessage = regexp.MustCompile(`"message"\s*:\s*"((?:[^"\\]|\\.)*)"`)

// Reason is why a step failed as a line shows it: the error's message masked
// of anything shaped like a key (providers.MaskKeys), on one line, the API's own message when it
// quoted one, cut to n runes keeping its head and its tail (a CLI's or an
// SDK's error puts the cause last: "… exited 1: Prompt is too long"). The
// class is the line's to say.
func Reason(msg string, n int) string {
	msg = providers.MaskKeys(msg)
	if m := apiMessage.FindStringSubmatch(msg); m != nil {
		if s, err := strconv.Unquote(`"` + m[1] + `"`); err == nil && strings.TrimSpace(s) != "" {
			msg = s
		}
	}
	msg = strings.Join(strings.Fields(msg), " ")
	r := []rune(msg)
	if n <= 0 || len(r) <= n {
		return msg
	}
	head := (n - 3) / 2
	tail := n - 3 - head
	return strings.TrimSpace(string(r[:head])) + " … " + strings.TrimSpace(string(r[len(r)-tail:]))
}
