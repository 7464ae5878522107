package chatapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// TestANamedSessionIsNotAnsweredForAnotherConversation: a session named
// with massgen_session_id is the conversation it was started with, not only
// its last message. The same id and last message under other earlier turns
// (another system prompt, another history: a client that reuses an id per
// chat thread, whose last message is "Continue") is 409 session_exists
// naming the messages, as another task is; it was answered with the stored
// session's answer to a conversation the client never sent.
func TestANamedSessionIsNotAnsweredForAnotherConversation(t *testing.T) {
	s := serve(t)
	c := s.client(tokenA)
	named := option.WithJSONSet("massgen_session_id", "chat_thread")
	first := openai.ChatCompletionNewParams{Model: "massgen", Messages: []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("Answer with a number."),
		openai.UserMessage("What is 6 * 7?"),
	}}
	if _, err := c.Chat.Completions.New(context.Background(), first, named); err != nil {
		t.Fatal(err)
	}
	// The same conversation again is answered again.
	if _, err := c.Chat.Completions.New(context.Background(), first, named); err != nil {
		t.Fatalf("the same conversation again: %v", err)
	}
	for what, msgs := range map[string][]openai.ChatCompletionMessageParamUnion{
		"no system message": {openai.UserMessage("What is 6 * 7?")},
		"another system message": {
			openai.SystemMessage("Answer in French."),
			openai.UserMessage("What is 6 * 7?"),
		},
		"other earlier turns": {
			openai.SystemMessage("Answer with a number."),
			openai.UserMessage("What is 17 * 23?"),
			openai.AssistantMessage("391"),
			openai.UserMessage("What is 6 * 7?"),
		},
	} {
		p := openai.ChatCompletionNewParams{Model: "massgen", Messages: msgs}
		res, err := c.Chat.Completions.New(context.Background(), p, named)
		if err == nil {
			t.Errorf("%s: answered with the stored session's answer %q, to a conversation not sent", what, res.Choices[0].Message.Content)
			continue
		}
		e := wantAPIError(t, what, err, http.StatusConflict, "session_exists")
		if e.Param != "messages" || !strings.Contains(e.Message, "chat_thread") {
			t.Errorf("%s: param %q, message %q", what, e.Param, e.Message)
		}
	}
}
