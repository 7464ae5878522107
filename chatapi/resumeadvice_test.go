package chatapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// An interrupted session is advised what resumes it from here: the chat
// completion that started it, sent again naming the session. Not `run
// --resume`, a command on the server's machine for its file store only,
// nor MCP's run_team, which a chat client has neither of. Both the error a
// run that ended without an answer gets and the trace say so.
func TestAnInterruptedSessionIsAdvisedTheChatRequestThatResumesIt(t *testing.T) {
	alive := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	res := &coordination.TeamResult{SessionID: "chat_x", Status: coordination.StatusInterrupted, LastAlive: &alive}
	const want = `the same chat completion (its model and conversation) sent again with "massgen_session_id": "chat_x"`
	advised := func(where, text string) {
		t.Helper()
		if !strings.Contains(text, "resume it with "+want) || strings.Contains(text, "run --resume") || strings.Contains(text, "run_team") {
			t.Errorf("%s does not advise the chat request alone:\n%s", where, text)
		}
	}

	w := httptest.NewRecorder()
	answer(&whole{w: w}, completion{}, res, "")
	var body struct {
		Error apiError `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != http.StatusUnprocessableEntity {
		t.Fatalf("an interrupted session's reply: %d %s (%v); want a 422 error", w.Code, w.Body, err)
	}
	advised("the error of an interrupted session", body.Error.Message)
	advised("the trace of an interrupted session", trace(res))
}
