package openai_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/openai"
)

// plantedKey is the key every test endpoint carries; no error may show it.
const plantedKey = "sk-dummy-PLANTED-SECRETKEY-not-a-key-0000"

// target is one kind of endpoint the adapters serve, pointed at the fakes
// through the real openai-go client.
type target struct {
	name    string
	format  string // the fake's Call.Format: chat or responses
	backend string
	model   string
	keyVar  string
}

var targets = []target{
	{name: "responses", format: "responses", backend: "openai", model: "gpt-5-mini", keyVar: "OPENAI_API_KEY"},
	{name: "chat", format: "chat", backend: "together", model: "meta-llama/Llama-3.3-70B-Instruct-Turbo", keyVar: "TOGETHER_API_KEY"},
	{name: "grok", format: "chat", backend: "grok", model: "grok-4.20-0309-reasoning", keyVar: "XAI_API_KEY"},
	{name: "azure", format: "chat", backend: "azure_openai", model: "gpt-4o-team", keyVar: "AZURE_OPENAI_API_KEY"},
}

// rig is a fake OpenAI server with its script.
type rig struct {
	script *fake.Script
	srv    *httptest.Server
}

func newRig(t testing.TB) *rig {
	t.Helper()
	s := fake.NewScript()
	h := fake.NewOpenAI(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		// Recorded with the call, so tests can see where a request went.
		q.Header.Set("X-Seen-Url", q.URL.RequestURI())
		h.ServeHTTP(w, q)
	}))
	t.Cleanup(srv.Close)
	return &rig{script: s, srv: srv}
}

func (r *rig) endpoint(tg target) providers.Endpoint {
	ep := providers.Endpoint{Backend: tg.backend, Model: tg.model, BaseURL: r.srv.URL + "/v1",
		APIKey: plantedKey, HTTPClient: r.srv.Client()}
	if tg.backend == "azure_openai" {
		ep.BaseURL, ep.APIVersion = r.srv.URL, "2024-10-21"
	}
	return ep
}

func (r *rig) open(t testing.TB, tg target) providers.Provider {
	t.Helper()
	return r.openWith(t, tg, openai.Options{})
}

func (r *rig) openWith(t testing.TB, tg target, o openai.Options) providers.Provider {
	t.Helper()
	var p providers.Provider
	var err error
	if tg.format == "responses" {
		p, err = openai.NewResponsesWith(r.endpoint(tg), o)
	} else {
		p, err = openai.NewChatWith(r.endpoint(tg), o)
	}
	if err != nil {
		t.Fatalf("opening %s: %v", tg.name, err)
	}
	return p
}

// lastBody decodes the last request the fake saw.
func (r *rig) lastBody(t testing.TB) map[string]any {
	t.Helper()
	calls := r.script.Calls()
	if len(calls) == 0 {
		t.Fatal("the fake saw no request")
	}
	var m map[string]any
	if err := json.Unmarshal(calls[len(calls)-1].Body, &m); err != nil {
		t.Fatalf("request body: %v", err)
	}
	return m
}

// The workflow tools exactly as coordination builds them.
func newAnswerTool() providers.Tool {
	return providers.Tool{
		Name:        providers.ToolNewAnswer,
		Description: "Submit a new and improved answer to the original message.",
		Schema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string",` +
			`"description":"Your complete answer. It replaces your previous one; write it whole."}},` +
			`"required":["content"],"additionalProperties":false}`),
	}
}

func voteTool(enum ...string) providers.Tool {
	e, _ := json.Marshal(enum)
	return providers.Tool{
		Name:        providers.ToolVote,
		Description: "Vote for the agent whose current answer is best; the team stops when the votes agree.",
		Schema: json.RawMessage(`{"type":"object","properties":{"agent_id":{"type":"string",` +
			`"description":"Anonymous agent to vote for, e.g. 'agent1'","enum":` + string(e) + `},` +
			`"reason":{"type":"string","description":"Brief reason why this answer is best"}},` +
			`"required":["agent_id","reason"],"additionalProperties":false}`),
	}
}

func stepRequest() providers.Request {
	return providers.Request{
		Purpose:      providers.PurposeStep,
		System:       "You are one agent of a team. Finish with exactly one workflow call.",
		Prompt:       "Task: what is 6 x 7?\n\nAnswers so far:\n[agent1.1] 42",
		StablePrefix: "Task: what is 6 x 7?\n",
		Tools:        []providers.Tool{newAnswerTool(), voteTool("agent1", "agent2")},
		VoteEnum:     []string{"agent1", "agent2"},
	}
}

// get walks a decoded JSON value by keys and indexes ("tools", 0, "name").
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// noKey fails when an error shows the planted key or a long piece of it.
func noKey(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	texts := []string{fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)}
	for e := err; e != nil; e = errors.Unwrap(e) {
		texts = append(texts, e.Error())
	}
	for _, s := range texts {
		for _, piece := range []string{plantedKey, plantedKey[8:24], "PLANTED", "SECRETKEY"} {
			if strings.Contains(s, piece) {
				t.Errorf("the error shows the key (%q): %s", piece, s)
			}
		}
	}
}
