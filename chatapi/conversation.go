package chatapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// conversation turns the messages into the team's task — the latest
// message, which must be the user's — and the earlier turns (system
// messages included) into one context block, oldest first, so every agent
// reads what was said before the question it answers.
func conversation(msgs []message) (task string, context []string, err error) {
	if len(msgs) == 0 {
		return "", nil, badRequest("messages", "messages is empty; send at least one user message, the task")
	}
	texts := make([]string, len(msgs))
	for i, m := range msgs {
		if texts[i], err = text(m.Content); err != nil {
			return "", nil, badRequest(fmt.Sprintf("messages[%d].content", i), err.Error())
		}
	}
	last := msgs[len(msgs)-1]
	task = strings.TrimSpace(texts[len(texts)-1])
	if last.Role != "user" || task == "" {
		return "", nil, badRequest(fmt.Sprintf("messages[%d]", len(msgs)-1),
			"the last message must be the user's, with text: it is the task the team works on")
	}
	if len(task) > MaxTaskBytes {
		return "", nil, badRequest(fmt.Sprintf("messages[%d].content", len(msgs)-1),
			fmt.Sprintf("the latest user message, the team's task, is %s, over the limit of %s; send the part the team needs", kib(len(task)), kib(MaxTaskBytes)))
	}
	if len(msgs) == 1 {
		return task, nil, nil
	}
	var b strings.Builder
	b.WriteString(conversationHeader)
	for i, m := range msgs[:len(msgs)-1] {
		fmt.Fprintf(&b, "\n[%s]\n%s\n", roleName(m.Role), strings.TrimSpace(texts[i]))
	}
	if b.Len() > MaxEarlierBytes {
		return "", nil, badRequest("messages",
			fmt.Sprintf("the %d messages before the latest one come to %s, over the limit of %s for the conversation so far; leave out its oldest turns (or start a new conversation)", len(msgs)-1, kib(b.Len()), kib(MaxEarlierBytes)))
	}
	return task, []string{b.String()}, nil
}

// The caps run_team puts on a task and on one block of context
// (mcp.MaxTaskBytes, mcp.MaxContextBlockBytes; the earlier turns are one
// block), checked here so that a chat client is told of its messages, not
// of run_team's context items and allowed roots
// (TestTheChatCapsAreRunTeams pins them).
const (
	MaxTaskBytes    = 256 << 10
	MaxEarlierBytes = 256 << 10
)

// kib is a size in KiB.
func kib(n int) string { return fmt.Sprintf("%.1f KiB", float64(n)/1024) }

// conversationHeader opens the context block of the earlier turns.
const conversationHeader = "The conversation before this task, oldest first (the task is the user's latest message):\n"

// earlierTurns is the context block of the earlier turns among a
// session's context, "" without one.
func earlierTurns(context []string) string {
	for _, c := range context {
		if strings.HasPrefix(c, conversationHeader) {
			return c
		}
	}
	return ""
}

// sameConversation refuses a stored session asked for under other earlier
// turns than it was started with: the last message alone matching, its
// answer (or its run, joined) would be to a conversation the client did
// not send.
func sameConversation(s *coordination.Session, convo []string) error {
	if earlierTurns(s.Context) == earlierTurns(convo) {
		return nil
	}
	return refusal(http.StatusConflict, "invalid_request_error", "session_exists", "messages",
		fmt.Sprintf("session %s was started with other messages before its task; to resume it or read its answer send the conversation it was started with, else leave out massgen_session_id (or choose another) to start a new session", s.ID))
}

// unkept refuses a request that holds the answer to what a team cannot
// give: more than one choice, content in a JSON format, a tool call. Read
// past, the client would find one free-text answer where it was promised
// otherwise, after the team had run and been paid for.
func unkept(req request) error {
	no := func(param, msg string) error {
		return refusal(http.StatusBadRequest, "invalid_request_error", "unsupported_parameter", param, msg)
	}
	if req.N != nil && *req.N != 1 {
		return no("n", fmt.Sprintf("n is %d: a team gives one answer, so only n 1 (the default) is taken", *req.N))
	}
	if f := req.ResponseFormat; f != nil && f.Type != "" && f.Type != "text" {
		return no("response_format", fmt.Sprintf("response_format %q is not kept here: a team's answer is free text; ask for the format in the message instead", f.Type))
	}
	var choice string
	raw := bytes.TrimSpace(req.ToolChoice)
	switch {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
	case json.Unmarshal(raw, &choice) == nil && (choice == "auto" || choice == "none"):
	default:
		return no("tool_choice", "tool_choice asks for a tool call, which a team never makes: its answer is text; leave tool_choice out, or auto")
	}
	return nil
}

// text reads a message's content: a string, null, or an array of parts of
// which text parts are joined.
func text(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("content is not a valid string: %w", err)
		}
		return s, nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor an array of parts: %w", err)
	}
	var out []string
	for _, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("a %q part is not taken here; send the task as text", p.Type)
		}
		out = append(out, p.Text)
	}
	return strings.Join(out, "\n"), nil
}

// roleName names a turn's speaker for the agents.
func roleName(role string) string {
	switch role {
	case "system", "developer":
		return "instructions"
	case "":
		return "unknown"
	}
	return role
}
