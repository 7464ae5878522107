package chatapi_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestACompletionThatIsNotJSONIsRefusedBeforeATeamRuns: a body sent as
// text/plain, a form or with no type is what a page of another origin can
// POST without a CORS preflight (a page on another loopback port passes
// the Origin check, and a server on loopback needs no token), so such a
// request would run the operator's team unseen. The chat endpoint, as
// /mcp does, takes only application/json, which every OpenAI client sends.
func TestACompletionThatIsNotJSONIsRefusedBeforeATeamRuns(t *testing.T) {
	s := serve(t)
	body := `{"model":"massgen","messages":[{"role":"user","content":"What is 6 * 7?"}]}`
	for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
		req, _ := http.NewRequest(http.MethodPost, s.url+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tokenA)
		req.Header.Set("Origin", "http://localhost:3000")
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(string(got), "application/json") {
			t.Errorf("Content-Type %q: %d %.200s, want 415 naming application/json", ct, resp.StatusCode, got)
		}
	}
	for _, svc := range s.all() {
		list, err := svc.Sessions(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 0 {
			t.Errorf("a refused request created %d sessions", len(list))
		}
	}
	// A JSON body with its charset is a client's request like any other.
	req, _ := http.NewRequest(http.MethodPost, s.url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tokenA)
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), "42") {
		t.Errorf("application/json; charset=utf-8: %d %.300s, want the team's answer", resp.StatusCode, got)
	}
}
