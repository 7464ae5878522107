package fake_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// postAs sends a request as a CLI would, with its identifying header.
func postAs(t *testing.T, url, header, value, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-fake-not-a-key-0000")
	req.Header.Set("x-goog-api-key", "fake")
	req.Header.Set(header, value)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// doneItems returns the output items of a Responses stream's
// output_item.done events.
func doneItems(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	var items []map[string]any
	for _, e := range readSSE(t, resp.Body) {
		if e.event != "response.output_item.done" {
			continue
		}
		var d struct {
			Item map[string]any `json:"item"`
		}
		if err := json.Unmarshal([]byte(e.data), &d); err != nil {
			t.Fatal(err)
		}
		items = append(items, d.Item)
	}
	return items
}

const codexSearchOutput = `{"type":"tool_search_output","call_id":"call_s","status":"completed","execution":"client","tools":[` +
	`{"type":"namespace","name":"mcp__workflow","tools":[{"type":"function","name":"vote","parameters":{"type":"object","properties":` +
	`{"agent_id":{"type":"string","enum":["agent2","agent3"]},"reason":{"type":"string"}}}},{"type":"function","name":"new_answer",` +
	`"parameters":{"type":"object","properties":{"content":{"type":"string"}}}}]}]}`

func codexBody(items ...string) string {
	return `{"model":"gpt-5.5","stream":true,"tools":[{"type":"custom","name":"apply_patch"},{"type":"tool_search","execution":"client"}],` +
		`"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"task"}]}` + strings.Join(append([]string{""}, items...), ",") + `]}`
}

func TestCodexSearchesForTheWorkflowToolsThenPlaysTheScript(t *testing.T) {
	s := fake.NewScript()
	s.Add("gpt-5.5", fake.Reply{Kind: fake.ReplyWriteFiles, Files: []providers.AnswerFile{{Path: "a.txt", Content: "one\ntwo\n"}}})
	srv := httptest.NewServer(fake.NewAll(s))
	defer srv.Close()
	url := srv.URL + "/v1/responses"

	items := doneItems(t, postAs(t, url, "Originator", "codex_exec", codexBody()))
	if len(items) != 1 || items[0]["type"] != "tool_search_call" || items[0]["execution"] != "client" {
		t.Fatalf("first request of a turn: %v, want a tool_search_call", items)
	}
	if len(s.Calls()) != 0 {
		t.Fatal("the search consumed a script reply")
	}

	items = doneItems(t, postAs(t, url, "Originator", "codex_exec", codexBody(codexSearchOutput)))
	if len(items) != 1 || items[0]["type"] != "custom_tool_call" || items[0]["name"] != "apply_patch" {
		t.Fatalf("write_files: %v", items)
	}
	patch := items[0]["input"].(string)
	if patch != "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** End Patch\n" {
		t.Errorf("patch %q", patch)
	}
	calls := s.Calls()
	if len(calls) != 1 || calls[0].Format != "codex" || strings.Join(calls[0].Tools, ",") != "vote,new_answer" ||
		strings.Join(calls[0].VoteEnum, ",") != "agent2,agent3" {
		t.Fatalf("recorded call %+v", calls)
	}

	// The script is empty: the default policy votes for the first name the
	// server's vote tool offers, as a namespaced call.
	patchDone := `{"type":"custom_tool_call","call_id":"call_p","name":"apply_patch","input":"x"},{"type":"custom_tool_call_output","call_id":"call_p","output":"ok"}`
	items = doneItems(t, postAs(t, url, "Originator", "codex_exec", codexBody(codexSearchOutput, patchDone)))
	if len(items) != 1 || items[0]["type"] != "function_call" || items[0]["name"] != "vote" || items[0]["namespace"] != "mcp__workflow" {
		t.Fatalf("vote: %v", items)
	}
	if !strings.Contains(items[0]["arguments"].(string), `"agent_id":"agent2"`) {
		t.Errorf("vote arguments %v", items[0]["arguments"])
	}

	// Once the workflow call returned, the model ends its turn.
	voted := `{"type":"function_call","call_id":"call_v","name":"vote","namespace":"mcp__workflow","arguments":"{}"},{"type":"function_call_output","call_id":"call_v","output":"recorded"}`
	items = doneItems(t, postAs(t, url, "Originator", "codex_exec", codexBody(codexSearchOutput, voted)))
	if len(items) != 1 || items[0]["type"] != "message" {
		t.Fatalf("after the vote: %v", items)
	}
	if len(s.Calls()) != 2 {
		t.Errorf("the final message consumed a script reply: %d calls", len(s.Calls()))
	}
}

func TestCodexSearchesAgainInANewTurn(t *testing.T) {
	// A resumed thread carries the last step's search output; the new step's
	// server may offer another vote enum, so the fake searches again.
	s := fake.NewScript()
	srv := httptest.NewServer(fake.NewAll(s))
	defer srv.Close()
	old := `{"type":"message","role":"user","content":[]},` + codexSearchOutput + `,{"type":"message","role":"user","content":[{"type":"input_text","text":"next step"}]}`
	body := `{"model":"gpt-5.5","stream":true,"input":[` + old + `]}`
	items := doneItems(t, postAs(t, srv.URL+"/v1/responses", "Originator", "codex_exec", body))
	if len(items) != 1 || items[0]["type"] != "tool_search_call" {
		t.Fatalf("%v", items)
	}
}

func TestCodexWithoutTheWorkflowServerEndsItsTurn(t *testing.T) {
	s := fake.NewScript()
	srv := httptest.NewServer(fake.NewAll(s))
	defer srv.Close()
	empty := `{"type":"tool_search_output","call_id":"call_s","status":"completed","execution":"client","tools":[]}`
	items := doneItems(t, postAs(t, srv.URL+"/v1/responses", "Originator", "codex_exec", codexBody(empty)))
	if len(items) != 1 || items[0]["type"] != "message" {
		t.Fatalf("a search that found no workflow tools: %v, want a final message (not another search)", items)
	}
}

func TestCodexShellAndErrors(t *testing.T) {
	s := fake.NewScript()
	s.Add("gpt-5.5", fake.Reply{Kind: fake.ReplyShell, Content: "go test ./..."}, fake.Reply{Kind: fake.ReplyStatus, Status: 500})
	srv := httptest.NewServer(fake.NewAll(s))
	defer srv.Close()
	url := srv.URL + "/v1/responses"
	items := doneItems(t, postAs(t, url, "Originator", "codex_exec", codexBody(codexSearchOutput)))
	if len(items) != 1 || items[0]["name"] != "exec_command" || items[0]["arguments"] != `{"cmd":"go test ./..."}` {
		t.Fatalf("%v", items)
	}
	resp := postAs(t, url, "Originator", "codex_exec", codexBody(codexSearchOutput))
	if resp.StatusCode != 500 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestAnAPIClientNeverGetsCLIReplies(t *testing.T) {
	s := fake.NewScript()
	s.Add("gpt-5.5", fake.Reply{Kind: fake.ReplyWriteFiles})
	srv := httptest.NewServer(fake.NewAll(s))
	defer srv.Close()
	resp := post(t, srv.URL+"/v1/responses", `{"model":"gpt-5.5","input":"hi"}`)
	if resp.StatusCode != 500 {
		t.Fatalf("an SDK client scripted write_files: status %d, want the 500 that says the fake cannot play it", resp.StatusCode)
	}
}

const geminiCLITools = `"tools":[{"functionDeclarations":[{"name":"write_file","parametersJsonSchema":{"type":"object"}},` +
	`{"name":"mcp_workflow_new_answer","parametersJsonSchema":{"type":"object","properties":{"content":{"type":"string"}}}},` +
	`{"name":"mcp_workflow_vote","parametersJsonSchema":{"type":"object","properties":{"agent_id":{"type":"string","enum":["agent1"]},"reason":{"type":"string"}}}}]}]`

// geminiParts reads the function calls of a Gemini stream.
func geminiCalls(t *testing.T, resp *http.Response) (names []string, args []map[string]any, text string) {
	t.Helper()
	for _, e := range readSSE(t, resp.Body) {
		var chunk struct {
			Candidates []struct {
				Content struct {
					Parts []struct {
						Text         string `json:"text"`
						FunctionCall *struct {
							Name string         `json:"name"`
							Args map[string]any `json:"args"`
						} `json:"functionCall"`
					} `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
		}
		if err := json.Unmarshal([]byte(e.data), &chunk); err != nil {
			t.Fatal(err)
		}
		for _, c := range chunk.Candidates {
			for _, p := range c.Content.Parts {
				text += p.Text
				if p.FunctionCall != nil {
					names = append(names, p.FunctionCall.Name)
					args = append(args, p.FunctionCall.Args)
				}
			}
		}
	}
	return names, args, text
}

func TestGeminiCLIPlaysWithItsToolNames(t *testing.T) {
	s := fake.NewScript()
	s.Add("gemini-2.5-pro",
		fake.Reply{Kind: fake.ReplyWriteFiles, Files: []providers.AnswerFile{{Path: "a.txt", Content: "A"}, {Path: "/abs/b.txt", Content: "B"}}},
		fake.Reply{Kind: fake.ReplyNewAnswer, Content: "the answer"})
	srv := httptest.NewServer(fake.NewAll(s))
	defer srv.Close()
	url := srv.URL + "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
	user := `{"role":"user","parts":[{"text":"<session_context>\n- **Workspace Directories:**\n  - /w/agent_a\n</session_context>"},{"text":"task"}]}`

	names, args, _ := geminiCalls(t, postAs(t, url, "User-Agent", "GeminiCLI/0.61.0/gemini-2.5-pro", `{"contents":[`+user+`],`+geminiCLITools+`}`))
	if strings.Join(names, ",") != "write_file,write_file" || args[0]["file_path"] != "/w/agent_a/a.txt" || args[1]["file_path"] != "/abs/b.txt" {
		t.Fatalf("write_files: %v %v", names, args)
	}
	calls := s.Calls()
	if len(calls) != 1 || calls[0].Format != "gemini_cli" || strings.Join(calls[0].Tools, ",") != "new_answer,vote" || strings.Join(calls[0].VoteEnum, ",") != "agent1" {
		t.Fatalf("recorded %+v", calls)
	}

	names, args, _ = geminiCalls(t, postAs(t, url, "User-Agent", "GeminiCLI/0.61.0/gemini-2.5-pro", `{"contents":[`+user+`],`+geminiCLITools+`}`))
	if strings.Join(names, ",") != "mcp_workflow_new_answer" || args[0]["content"] != "the answer" {
		t.Fatalf("new_answer: %v %v", names, args)
	}

	answered := `,{"role":"model","parts":[{"functionCall":{"name":"mcp_workflow_new_answer","args":{"content":"x"}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"mcp_workflow_new_answer","response":{"output":"ok"}}}]}`
	names, _, text := geminiCalls(t, postAs(t, url, "User-Agent", "GeminiCLI/0.61.0/gemini-2.5-pro", `{"contents":[`+user+answered+`],`+geminiCLITools+`}`))
	if len(names) != 0 || !strings.HasPrefix(text, "FAKE_FINAL") {
		t.Fatalf("after the workflow call: %v %q", names, text)
	}
	if len(s.Calls()) != 2 {
		t.Errorf("the final message consumed a reply")
	}
}

func TestGeminiCLISignsItsCallsForGemini3(t *testing.T) {
	s := fake.NewScript()
	srv := httptest.NewServer(fake.NewAll(s))
	defer srv.Close()
	url := srv.URL + "/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent?alt=sse"
	resp := postAs(t, url, "User-Agent", "GeminiCLI/0.61.0", `{"contents":[{"role":"user","parts":[{"text":"go"}]}],`+geminiCLITools+`}`)
	var sig string
	for _, e := range readSSE(t, resp.Body) {
		if i := strings.Index(e.data, `"thoughtSignature":"`); i >= 0 {
			sig = strings.SplitN(e.data[i+len(`"thoughtSignature":"`):], `"`, 2)[0]
		}
	}
	if sig == "" {
		t.Fatal("no thought signature on a Gemini 3 call")
	}
	// Replayed with the signature it issued, the next request is accepted;
	// without one, refused as the real API refuses it.
	replay := func(sig string) int {
		part := `{"functionCall":{"name":"mcp_workflow_vote","args":{}}` + map[bool]string{true: `,"thoughtSignature":"` + sig + `"`, false: ""}[sig != ""] + `}`
		body := `{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[` + part + `]},` +
			`{"role":"user","parts":[{"functionResponse":{"name":"mcp_workflow_vote","response":{}}}]}],` + geminiCLITools + `}`
		return postAs(t, url, "User-Agent", "GeminiCLI/0.61.0", body).StatusCode
	}
	if got := replay(sig); got != 200 {
		t.Errorf("replay with its signature: %d", got)
	}
	if got := replay(""); got != 400 {
		t.Errorf("replay without a signature: %d, want 400", got)
	}
}

// Codex gives some models (gpt-5.4) its MCP tools in the request's own tools,
// as a namespace, and no apply_patch tool: the fake plays the script with
// those tools at once (no tool search) and writes files with exec_command.
func TestCodexWithTheWorkflowNamespaceInItsToolsAndNoApplyPatch(t *testing.T) {
	s := fake.NewScript()
	s.Default = fake.Rehearsal
	srv := httptest.NewServer(fake.NewAll(s))
	defer srv.Close()
	body := func(items ...string) string {
		return `{"model":"gpt-5.4","stream":true,"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}},` +
			`{"type":"namespace","name":"mcp__workflow","tools":[{"type":"function","name":"new_answer","parameters":{"type":"object","properties":{"content":{"type":"string"}}}}]}],` +
			`"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"task"}]}` + strings.Join(append([]string{""}, items...), ",") + `]}`
	}
	url := srv.URL + "/v1/responses"
	items := doneItems(t, postAs(t, url, "Originator", "codex_exec", body()))
	if len(items) != 1 || items[0]["type"] != "function_call" || items[0]["name"] != "exec_command" {
		t.Fatalf("first request: %v, want the rehearsal file written through exec_command", items)
	}
	args := items[0]["arguments"].(string)
	var cmd struct{ Cmd string }
	if json.Unmarshal([]byte(args), &cmd) != nil || !strings.Contains(cmd.Cmd, "cat > 'rehearsal.md'") {
		t.Fatalf("exec_command arguments %s", args)
	}
	wrote := `{"type":"function_call","call_id":"call_w","name":"exec_command","arguments":` + mustJSON(args) + `},{"type":"function_call_output","call_id":"call_w","output":"ok"}`
	items = doneItems(t, postAs(t, url, "Originator", "codex_exec", body(wrote)))
	if len(items) != 1 || items[0]["name"] != "new_answer" || items[0]["namespace"] != "mcp__workflow" {
		t.Fatalf("after the file: %v, want new_answer in the workflow namespace", items)
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
