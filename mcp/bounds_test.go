package mcp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/sync/semaphore"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// manyModels is a tools/call of run_team whose models array holds n specs,
// the first of which would read a file if it were parsed.
func manyModels(n int) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_team","arguments":{"task":"t","models":["sim/script:file=/etc/passwd",` +
		strings.TrimSuffix(strings.Repeat(`"a",`, n-1), ",") + `]}}}`
}

func TestEveryArrayStringAndFreeObjectOfEveryToolIsCapped(t *testing.T) {
	s := newMemServer(t, Options{})
	for _, tool := range s.mcp.ListTools() {
		var doc map[string]any
		if err := json.Unmarshal(enforced(tool.Tool.RawInputSchema), &doc); err != nil {
			t.Fatal(err)
		}
		var walk func(v map[string]any, path string)
		walk = func(v map[string]any, path string) {
			switch v["type"] {
			case "array":
				if v["maxItems"] == nil {
					t.Errorf("%s %s: an array without maxItems", tool.Tool.Name, path)
				}
			case "string":
				if v["maxLength"] == nil && v["enum"] == nil {
					t.Errorf("%s %s: a free string without maxLength", tool.Tool.Name, path)
				}
			case "object":
				if extra, ok := v["additionalProperties"].(bool); (!ok || extra) && v["maxProperties"] == nil {
					t.Errorf("%s %s: an object with free members without maxProperties", tool.Tool.Name, path)
				}
			}
			if props, ok := v["properties"].(map[string]any); ok {
				for k, p := range props {
					walk(p.(map[string]any), path+"."+k)
				}
			}
			for _, k := range []string{"items", "additionalProperties"} {
				if sub, ok := v[k].(map[string]any); ok {
					walk(sub, path+"["+k+"]")
				}
			}
		}
		walk(doc, "")
		if props, ok := doc["properties"].(map[string]any); ok {
			for _, team := range []string{"models", "agents"} {
				if p, ok := props[team].(map[string]any); ok && p["maxItems"] != float64(coordination.MaxAgents) {
					t.Errorf("%s.%s: maxItems %v, want the team cap %d", tool.Tool.Name, team, p["maxItems"], coordination.MaxAgents)
				}
			}
		}
	}
}

// TestTooManyModelsAreRefusedByTheirCountBeforeAnyIsParsed: the count is
// checked before anything reads a spec (the operator-only check parsed
// every one, and the file= spec here was its refusal).
func TestTooManyModelsAreRefusedByTheirCountBeforeAnyIsParsed(t *testing.T) {
	c := inProcess(t, newMemServer(t, Options{}), false)
	models := `"sim/script:file=/etc/passwd"` + strings.Repeat(`,"sim"`, 20_000)
	wantError(t, callTool(t, c, "run_team", `{"task":"t","models":[`+models+`]}`), "bad_arguments", "models has 20,001 items; at most 16 agents per team")
	wantError(t, callTool(t, c, "start_team", `{"task":"t","agents":[`+strings.Repeat(`{"model":"sim"},`, 16)+`{"model":"sim"}]}`), "bad_arguments", "agents has 17 items; at most 16 agents per team")
	wantError(t, callTool(t, c, "step", `{"session_id":"s","agent_id":"a","action":"vote","seen_steps":{`+strings.Repeat(`"a":1,`, 64)+`"b":1}}`), "bad_arguments", "seen_steps has 65 members; at most 64")
	wantError(t, callTool(t, c, "step", `{"session_id":"s","agent_id":"a","action":"new_answer","content":"`+strings.Repeat("x", maxAnswerLength+1)+`"}`), "bad_arguments", "content is 1,048,577 characters long", "at most 1,048,576 characters (1 MiB)")
}

// TestRefusingAWorstCaseBodyAllocatesLittle: counting 800,000 models
// builds nothing (the generic decoding it replaces took ~120 MB per 4 MB).
func TestRefusingAWorstCaseBodyAllocatesLittle(t *testing.T) {
	s := newMemServer(t, Options{})
	body := []byte(manyModels(800_000))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	reply, _ := s.refusal(body)
	runtime.ReadMemStats(&after)
	if !strings.Contains(string(reply), "models has 800,000 items; at most 16 agents per team") || !strings.Contains(string(reply), `"isError":true`) {
		t.Fatalf("refusal = %s", reply)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 256<<10 {
		t.Errorf("refusing a %d-byte body allocated %d KiB; want under 256 KiB", len(body), got>>10)
	}
}

func TestHTTPRefusesBodiesBeyondTheCapsBeforeDecodingThem(t *testing.T) {
	ts := httpServer(t, newMemServer(t, Options{}), HTTPOptions{})
	post := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	// A tool's arguments: the tool's isError result, with the call's id.
	status, out := post(manyModels(800_000))
	var reply struct {
		ID     int                  `json:"id"`
		Result mcpgo.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &reply); err != nil || status != http.StatusOK || reply.ID != 7 {
		t.Fatalf("models: %d %.300s", status, out)
	}
	wantError(t, &reply.Result, "bad_arguments", "models has 800,000 items; at most 16 agents per team")

	// The message itself: a JSON-RPC error.
	for body, want := range map[string]string{
		`[` + strings.TrimSuffix(strings.Repeat(`{},`, 100_000), ",") + `]`: "the batch holds 100,000 messages; at most 64",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_backends","arguments":{},"_meta":{"x":[` + strings.TrimSuffix(strings.Repeat(`0,`, 100_000), ",") + `]}}}`: "params._meta.x has 100,000 items; at most 64",
		`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","arguments":{` + strings.TrimSuffix(strings.Repeat(`"a":"b",`, 1000), ",") + `}}}`:                          "params.arguments has 1,000 members; at most 64",
	} {
		status, out := post(body)
		if status != http.StatusBadRequest || !strings.Contains(out, want) || !strings.Contains(out, `"code":-32602`) {
			t.Errorf("%.60s…: %d %.300s; want 400 saying %q", body, status, out, want)
		}
	}
}

// TestStdioRefusesLinesBeyondTheCaps: stdio gets the bounds of HTTP; a line
// longer than the body cap, or beyond a tool's caps, is answered without
// reaching mcp-go, and the next line is served as usual.
func TestStdioRefusesLinesBeyondTheCaps(t *testing.T) {
	r := serveRaw(t, newMemServer(t, Options{}))
	if _, err := r.in.Write([]byte(`{"jsonrpc":"2.0","id":90,"method":"tools/call","params":{"name":"list_backends","arguments":{"x":"` + strings.Repeat("x", DefaultMaxBody) + `"}}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if m := r.next(); m.ID != nil || !strings.Contains(string(m.Error), "larger than this server's limit of 4 MiB") {
		t.Fatalf("an overlong line: %+v %s", m, m.Error)
	}
	if _, err := r.in.Write([]byte(strings.Replace(manyModels(800_000), `"id":7`, `"id":91`, 1) + "\n")); err != nil {
		t.Fatal(err)
	}
	m := r.next()
	if m.ID == nil || *m.ID != 91 {
		t.Fatalf("the refusal answers id %v, want 91", m.ID)
	}
	wantError(t, toolResult(t, m), "bad_arguments", "models has 800,000 items; at most 16 agents per team")
	id := r.callTool("list_backends", map[string]any{}, nil)
	if m := r.next(); m.ID == nil || *m.ID != id || toolResult(t, m).IsError {
		t.Fatalf("the call after the refusals: %+v", m)
	}
}

// TestLargeBodiesAreDecodedAFewAtATime: bodies within the caps but large
// take their size from a budget of one 4 MiB body until their arguments
// are decoded; small ones never wait.
func TestLargeBodiesAreDecodedAFewAtATime(t *testing.T) {
	var mu sync.Mutex
	inside, most := 0, 0
	hold := make(chan struct{})
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inside++
		most = max(most, inside)
		mu.Unlock()
		<-hold
		mu.Lock()
		inside--
		mu.Unlock()
		decoded(r.Context())
	})
	h := limitDecoding(semaphore.NewWeighted(decodingBudget), next)
	serve := func(size int) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		h.ServeHTTP(httptest.NewRecorder(), r.WithContext(withBody(r.Context(), make([]byte, size))))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { serve(DefaultMaxBody) })
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return inside == 1 })
	small := make(chan struct{})
	go func() { serve(smallBody); close(small) }()
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return inside == 2 })
	close(hold)
	wg.Wait()
	<-small
	if most != 2 {
		t.Errorf("at most %d requests were decoding at once; want one large one and the small one", most)
	}
}
