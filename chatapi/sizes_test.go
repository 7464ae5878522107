package chatapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/massgen-go/massgen-mcp/chatapi"
	"github.com/massgen-go/massgen-mcp/mcp"
)

// TestAConversationOverTheCapsIsRefusedInChatWords: the task and the
// earlier turns go under run_team's text caps (256 KiB each), but a chat
// client sent messages, not run_team's "context item 1", and has no
// "allowed root" to put files under. A long chat (its history past the cap)
// or a long last message is a 400 naming the messages and what to send
// instead; it was run_team's words, with no param.
func TestAConversationOverTheCapsIsRefusedInChatWords(t *testing.T) {
	s := serve(t)
	c := s.client(tokenA)
	long := strings.Repeat("lorem ipsum ", 25000) // 293 KiB
	for what, tc := range map[string]struct {
		msgs  []openai.ChatCompletionMessageParamUnion
		param string
	}{
		"a long history": {[]openai.ChatCompletionMessageParamUnion{
			openai.UserMessage("Summarise this."), openai.AssistantMessage(long), openai.UserMessage("What is 6 * 7?"),
		}, "messages"},
		"a long last message": {[]openai.ChatCompletionMessageParamUnion{openai.UserMessage(long)}, "messages[0].content"},
	} {
		_, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "massgen", Messages: tc.msgs})
		e := wantAPIError(t, what, err, http.StatusBadRequest, "bad_request")
		if e.Param != tc.param {
			t.Errorf("%s: param %q, want %q", what, e.Param, tc.param)
		}
		for _, mcpWords := range []string{"context item", "allowed root", "put the material in context"} {
			if strings.Contains(e.Message, mcpWords) {
				t.Errorf("%s: the refusal speaks run_team's words (%q): %s", what, mcpWords, e.Message)
			}
		}
		if !strings.Contains(e.Message, "KiB") {
			t.Errorf("%s: the refusal does not say the limit: %s", what, e.Message)
		}
	}
}

// TestTheChatCapsAreRunTeams: the surface checks the task and the earlier
// turns against run_team's own caps, so it refuses what run_team would,
// in its own words, and nothing more.
func TestTheChatCapsAreRunTeams(t *testing.T) {
	if chatapi.MaxTaskBytes != mcp.MaxTaskBytes || chatapi.MaxEarlierBytes != mcp.MaxContextBlockBytes {
		t.Errorf("chat caps %d, %d; run_team's %d, %d", chatapi.MaxTaskBytes, chatapi.MaxEarlierBytes, mcp.MaxTaskBytes, mcp.MaxContextBlockBytes)
	}
}
