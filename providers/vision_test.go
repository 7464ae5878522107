package providers

import "testing"

func TestTakesImagesKnowsTheTextOnlyModels(t *testing.T) {
	cases := map[string]bool{
		"openai/gpt-5.4": true, "openai/gpt-4o-mini": true, "openai/gpt-4.1": true, "openai/gpt-4-turbo": true,
		"openai/gpt-3.5-turbo": false, "openai/gpt-4": false, "openai/o3-mini": false,
		"claude/claude-opus-4-6": true, "claude/claude-2.1": false,
		"gemini/gemini-2.5-flash": true, "gemini/gemini-1.0-pro": false,
		"grok/grok-4.20-0309-reasoning": true, "grok/grok-3-mini": false, "grok/grok-2-vision-1212": true, "grok/grok-code-fast-1": false,
		"deepseek/deepseek-chat": false, "cerebras/llama-4-scout-17b-16e-instruct": false,
		"openrouter/openai/gpt-oss-120b": false, "openrouter/anthropic/claude-sonnet-4.5": true,
		"codex": true, "claude_code": true, "gemini_cli": true, "sim/strong": true, "host": true, "human": false,
	}
	for spec, want := range cases {
		sp, err := ParseSpec(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if got, why := TakesImages(sp); got != want || (got == (why != "")) {
			t.Errorf("TakesImages(%s) = %v, %q; want %v", spec, got, why, want)
		}
	}
}

func TestSniffImageKnowsTheFourTypesByTheirBytes(t *testing.T) {
	cases := map[string]string{
		"\x89PNG\r\n\x1a\n....":        MIMEPNG,
		"\xff\xd8\xff\xe0....":         MIMEJPEG,
		"GIF89a....":                   MIMEGIF,
		"RIFF\x00\x00\x00\x00WEBPVP8 ": MIMEWebP,
		"BM....":                       "",
		"<svg xmlns=":                  "",
		"":                             "",
	}
	for data, want := range cases {
		if got := SniffImage([]byte(data)); got != want {
			t.Errorf("SniffImage(%q) = %q, want %q", data, got, want)
		}
	}
}
