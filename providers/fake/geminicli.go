package fake

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// isGeminiCLI tells a request of the Gemini CLI (its user agent) from the
// SDK's.
func isGeminiCLI(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("User-Agent"), "GeminiCLI")
}

// NewGeminiCLI returns the Gemini fake as the Gemini CLI meets it (NewAll
// routes the CLI's requests here by its user agent). The workflow tools
// arrive as the MCP tools mcp_workflow_new_answer and mcp_workflow_vote; the
// fake plays the model's script reply with those names (and the vote enum
// their schema offers): new_answer and vote become calls of the MCP tools,
// write_files write_file calls (one per file, in one turn), shell a
// run_shell_command call; once a workflow call has returned, the model ends
// its turn with a final message. Text and the error kinds play as in
// NewGemini, thought signatures included.
func NewGeminiCLI(s *Script) http.Handler { return &geminiCLI{base: NewGemini(s).(*geminiServer)} }

// newGeminiCLI shares a Gemini fake's issued thought signatures.
func newGeminiCLI(base http.Handler) http.Handler { return &geminiCLI{base: base.(*geminiServer)} }

type geminiCLI struct{ base *geminiServer }

// workspaceLine is where the CLI's session context names its workspace.
var workspaceLine = regexp.MustCompile(`Workspace Directories:\*\*\n\s*- (.+)\n`)

func (g *geminiCLI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	model, method, ok := geminiRoute(r.URL.Path)
	if isModelsList(r) || r.Method != http.MethodPost || !ok || r.Header.Get("x-goog-api-key") == "" {
		g.base.ServeHTTP(w, r) // lists, wrong routes and missing keys answer as the API does
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		geminiWriteError(w, geminiError{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Message: "Invalid JSON payload received. " + err.Error()})
		return
	}
	if msg := g.base.check(model, &req); msg != "" {
		geminiWriteError(w, geminiError{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Message: msg})
		return
	}
	stream := method == "streamGenerateContent"
	tools, enum := geminiCLITools(&req)
	if done := geminiCLIAnswered(&req); done != "" {
		g.base.play(w, r, model, stream, len(body), Reply{Kind: ReplyText, Content: cliFinalText(done), Usage: g.base.script.ownUsage()})
		return
	}
	c := Call{Format: "gemini_cli", Model: model, Stream: stream, Tools: tools, VoteEnum: enum, Body: body, Header: r.Header.Clone()}
	rep := g.base.script.Next(c)
	if d := time.Duration(rep.Delay); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	calls := geminiCLICalls(rep, workspaceOf(&req))
	if calls == nil {
		g.base.play(w, r, model, stream, len(body), rep) // text, malformed_args and the error kinds
		return
	}
	g.playCalls(w, model, stream, len(body), rep, calls)
}

// geminiCLITools lists the workflow tools declared (as new_answer and vote)
// and the vote enum.
func geminiCLITools(req *geminiRequest) (names, enum []string) {
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			name, ok := workflowName(d.Name)
			if !ok || !strings.HasPrefix(d.Name, "mcp_") {
				continue
			}
			names = append(names, name)
			if name == "vote" {
				schema := d.ParametersJSONSchema
				if len(schema) == 0 {
					schema = d.Parameters
				}
				enum = voteEnumOf(schema)
			}
		}
	}
	return names, enum
}

// geminiCLIAnswered names the workflow tool whose response ends the request's
// contents; "" when the last turn is not a workflow call's result.
func geminiCLIAnswered(req *geminiRequest) string {
	if len(req.Contents) == 0 {
		return ""
	}
	last := req.Contents[len(req.Contents)-1]
	for _, p := range last.Parts {
		if p.FunctionResponse == nil {
			continue
		}
		if w, ok := workflowName(p.FunctionResponse.Name); ok && strings.HasPrefix(p.FunctionResponse.Name, "mcp_") {
			return w
		}
	}
	return ""
}

// workspaceOf reads the workspace the CLI's session context names, for the
// absolute paths its write_file wants; "" when it names none.
func workspaceOf(req *geminiRequest) string {
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if m := workspaceLine.FindStringSubmatch(p.Text); m != nil {
				return strings.TrimSpace(m[1])
			}
		}
	}
	return ""
}

// geminiCLICalls renders the replies played as function calls; nil for the
// kinds NewGemini plays.
func geminiCLICalls(rep Reply, workspace string) []*geminiFunctionCall {
	mcp := func(tool string) string { return "mcp_" + WorkflowServer + "_" + tool }
	switch rep.Kind {
	case ReplyNewAnswer:
		return []*geminiFunctionCall{{Name: mcp("new_answer"), Args: answerArgs(rep)}}
	case ReplyVote:
		return []*geminiFunctionCall{{Name: mcp("vote"), Args: map[string]any{"agent_id": rep.Agent, "reason": rep.Reason}}}
	case ReplyShell:
		return []*geminiFunctionCall{{Name: "run_shell_command", Args: map[string]any{"command": rep.Content}}}
	case ReplyToolCall:
		var args map[string]any
		_ = json.Unmarshal(rep.Input, &args)
		return []*geminiFunctionCall{{Name: rep.Tool, Args: args}}
	case ReplyWriteFiles:
		var calls []*geminiFunctionCall
		for _, f := range rep.Files {
			path := f.Path
			if workspace != "" && !strings.HasPrefix(path, "/") {
				path = strings.TrimSuffix(workspace, "/") + "/" + path
			}
			calls = append(calls, &geminiFunctionCall{Name: "write_file", Args: map[string]any{"file_path": path, "content": f.Content}})
		}
		return calls
	}
	return nil
}

// playCalls answers with function calls, in one chunk when streaming, the
// first carrying a thought signature for Gemini 3 models.
func (g *geminiCLI) playCalls(w http.ResponseWriter, model string, stream bool, bodyLen int, rep Reply, calls []*geminiFunctionCall) {
	g.base.mu.Lock()
	g.base.n++
	id := fmt.Sprintf("fake-gemini-%d", g.base.n)
	g.base.mu.Unlock()
	parts := make([]geminiPart, len(calls))
	text := 0
	for i, c := range calls {
		parts[i] = geminiPart{FunctionCall: c}
		b, _ := json.Marshal(c.Args)
		text += len(b)
	}
	if geminiSigned(model) {
		sig := base64.StdEncoding.EncodeToString([]byte("fake-signature:" + id))
		g.base.mu.Lock()
		g.base.issued[sig] = true
		g.base.mu.Unlock()
		parts[0].ThoughtSignature = sig
	}
	resp := geminiResponse{
		Candidates:    []geminiCandidate{{Content: &geminiContent{Role: "model", Parts: parts}, FinishReason: "STOP"}},
		UsageMetadata: geminiUsageFor(rep.Usage, bodyLen, text), ModelVersion: model, ResponseID: id,
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	geminiStartSSE(w)
	geminiWriteEvent(w, resp)
}
