package chatapi_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestCurlAsTheREADMEShowsIt runs the README's curl commands against the
// server: a whole answer, then a stream.
func TestCurlAsTheREADMEShowsIt(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed on this machine; the openai-go tests cover the same endpoint")
	}
	s := serve(t)
	run := func(body string) string {
		t.Helper()
		out, err := exec.Command(curl, "-sS", "-N", s.url+"/v1/chat/completions",
			"-H", "Authorization: Bearer "+tokenA,
			"-H", "Content-Type: application/json",
			"-d", body).Output()
		if err != nil {
			t.Fatalf("curl: %v\n%s", err, out)
		}
		return string(out)
	}
	var res struct {
		Choices []struct {
			Message struct {
				Content          string `json:"content"`
				ReasoningContent string `json:"reasoning_content"`
			} `json:"message"`
		} `json:"choices"`
		Metadata struct {
			CostUSD *float64 `json:"cost_usd"`
		} `json:"massgen_metadata"`
	}
	out := run(`{"model":"massgen","messages":[{"role":"user","content":"What is 17 * 23?"}]}`)
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Choices) != 1 {
		t.Fatalf("not a completion: %v\n%s", err, out)
	}
	if m := res.Choices[0].Message; !strings.Contains(m.Content, "391") || !strings.Contains(m.ReasoningContent, "Winner:") || res.Metadata.CostUSD == nil {
		t.Errorf("completion: %s", out)
	}
	out = run(`{"model":"massgen/quick","stream":true,"messages":[{"role":"user","content":"What is 17 * 23?"}]}`)
	for _, want := range []string{`"object":"chat.completion.chunk"`, `"reasoning_content":`, `"content":"`, `"finish_reason":"stop"`, "data: [DONE]\n\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the stream lacks %q:\n%s", want, out)
		}
	}
}
