package providers

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
		str  string // canonical form
	}{
		{"codex", Spec{Backend: "codex", Model: "gpt-5.4"}, "codex/gpt-5.4"},
		{"gemini", Spec{Backend: "gemini", Model: "gemini-3.1-pro-preview"}, "gemini/gemini-3.1-pro-preview"},
		{"claude", Spec{Backend: "claude", Model: "claude-opus-4-6"}, "claude/claude-opus-4-6"},
		{"grok", Spec{Backend: "grok", Model: "grok-4.20-0309-reasoning"}, "grok/grok-4.20-0309-reasoning"},
		{"openai", Spec{Backend: "openai", Model: "gpt-5.4"}, "openai/gpt-5.4"},
		{"openai/gpt-5.4-mini", Spec{Backend: "openai", Model: "gpt-5.4-mini"}, "openai/gpt-5.4-mini"},
		{"  OpenAI/gpt-5.4  ", Spec{Backend: "openai", Model: "gpt-5.4"}, "openai/gpt-5.4"},
		{"openrouter/anthropic/claude-opus-4-6", Spec{Backend: "openrouter", Model: "anthropic/claude-opus-4-6"}, "openrouter/anthropic/claude-opus-4-6"},
		{"ollama/llama3.1:8b", Spec{Backend: "ollama", Model: "llama3.1:8b"}, "ollama/llama3.1:8b"},
		{"vllm/Qwen/Qwen3-8B@http://gpu-box:8000/v1", Spec{Backend: "vllm", Model: "Qwen/Qwen3-8B", BaseURL: "http://gpu-box:8000/v1"}, "vllm/Qwen/Qwen3-8B@http://gpu-box:8000/v1"},
		{"openai@https://proxy.example/v1", Spec{Backend: "openai", Model: "gpt-5.4", BaseURL: "https://proxy.example/v1"}, "openai/gpt-5.4@https://proxy.example/v1"},
		{"azure_openai/my-deployment", Spec{Backend: "azure_openai", Model: "my-deployment"}, "azure_openai/my-deployment"},
		{"claude_code", Spec{Backend: "claude_code", Model: "claude-opus-4-6"}, "claude_code/claude-opus-4-6"},
		{"host", Spec{Backend: "host"}, "host"},
		{"host/claude-code", Spec{Backend: "host", Model: "claude-code"}, "host/claude-code"},
		{"sim", Spec{Backend: "sim", Model: "sim"}, "sim"},
		{"sim/sim", Spec{Backend: "sim", Model: "sim"}, "sim"},
		{"sim/strong", Spec{Backend: "sim", Model: "strong"}, "sim/strong"},
		{"sim/weak", Spec{Backend: "sim", Model: "weak"}, "sim/weak"},
		{"sim:seed=2", Spec{Backend: "sim", Model: "sim", Params: map[string]string{"seed": "2"}}, "sim:seed=2"},
		{"sim/accuracy=0.8:seed=3", Spec{Backend: "sim", Model: "sim", Params: map[string]string{"accuracy": "0.8", "seed": "3"}}, "sim:accuracy=0.8:seed=3"},
		{"sim/strong:latency=200ms", Spec{Backend: "sim", Model: "strong", Params: map[string]string{"latency": "200ms"}}, "sim/strong:latency=200ms"},
		{"sim/weak:seed=-4:conformity=0:revise=1:self_bias=0.5:position_bias=-0.2:price_in=3:price_out=15:truth_bias=2",
			Spec{Backend: "sim", Model: "weak", Params: map[string]string{"seed": "-4", "conformity": "0", "revise": "1", "self_bias": "0.5",
				"position_bias": "-0.2", "price_in": "3", "price_out": "15", "truth_bias": "2"}},
			"sim/weak:conformity=0:position_bias=-0.2:price_in=3:price_out=15:revise=1:seed=-4:self_bias=0.5:truth_bias=2"},
		{"sim/script:file=testdata/team.json", Spec{Backend: "sim", Model: "script", Params: map[string]string{"file": "testdata/team.json"}}, "sim/script:file=testdata/team.json"},
		{"sim/script:latency=1s:file=a.json", Spec{Backend: "sim", Model: "script", Params: map[string]string{"file": "a.json", "latency": "1s"}}, "sim/script:file=a.json:latency=1s"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSpec(tt.in)
			if err != nil {
				t.Fatalf("ParseSpec(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseSpec(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
			if s := got.String(); s != tt.str {
				t.Errorf("String() = %q, want %q", s, tt.str)
			}
			again, err := ParseSpec(got.String())
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("round trip of %q: %#v, %v", got.String(), again, err)
			}
		})
	}
}

func TestParseSpecErrors(t *testing.T) {
	tests := []struct {
		in   string
		want []string // substrings of the message
	}{
		{"", []string{"empty"}},
		{"foo/bar", []string{`unknown backend "foo"`, "openai, claude, gemini", "sim"}},
		{"anthropic/claude-opus-4-6", []string{`did you mean "claude"`}},
		{"/gpt-5.4", []string{"backend name is missing"}},
		{"vllm", []string{"model is missing", "vllm/<model>"}},
		{"ollama/", []string{"model is missing", "ollama/llama3.1:8b"}},
		{"vllm/qwen@localhost:8000", []string{`base URL "localhost:8000" is not an http(s) URL`, "http://localhost:8000/v1"}},
		{"vllm/qwen@ftp://host/v1", []string{"not an http(s) URL"}},
		{"vllm/qwen@", []string{"nothing follows @"}},
		{"codex/gpt-5.4@http://localhost:1/v1", []string{"codex takes no base URL"}},
		{"openai/gpt-5.4:seed=3", []string{"only for the sim backend"}},
		{"openai:seed=3", []string{"only for the sim backend"}},
		{"sim/strong,sim/weak", []string{"comma"}},
		{"sim/ strong", []string{"no spaces"}},
		{"sim/genius", []string{`unknown sim profile "genius"`, "sim/strong"}},
		{"sim/accuracy", []string{`"accuracy" is a parameter`, "sim:accuracy=<value>"}},
		{"vllm/", []string{"vllm/Qwen/Qwen3-8B"}},
		{"sim/", []string{"nothing follows sim/"}},
		{"sim@http://localhost:1", []string{"no base URL"}},
		{"sim/strong@http://x", []string{"no base URL"}},
		{"sim:speed=3", []string{`unknown sim parameter "speed"`, "accuracy", "conformity"}},
		{"sim:accuracy=1.5", []string{`accuracy="1.5" is invalid`, "from 0 to 1"}},
		{"sim:accuracy=-0.1", []string{"from 0 to 1"}},
		{"sim:accuracy=high", []string{"from 0 to 1"}},
		{"sim:conformity=2", []string{"conformity", "from 0 to 1"}},
		{"sim:revise=x", []string{"revise", "from 0 to 1"}},
		{"sim:latency=fast", []string{"latency", "duration", "300ms"}},
		{"sim:latency=-1s", []string{"latency", "duration"}},
		{"sim:seed=1.5", []string{"seed", "whole number"}},
		{"sim:price_in=-1", []string{"price_in", "0 or more"}},
		{"sim:self_bias=NaN", []string{"self_bias"}},
		{"sim:seed", []string{`"seed" has no value`}},
		{"sim:seed=1:seed=2", []string{"given twice"}},
		{"sim::seed=1", []string{"empty parameter"}},
		{"sim:", []string{"empty parameter"}},
		{"sim/strong:file=x.json", []string{"only for scripts"}},
		{"sim/script", []string{"needs the actions", "file="}},
		{"sim/script:file=", []string{"file", "path"}},
		{"sim/script:accuracy=0.5:file=a.json", []string{"takes only file"}},
		{"host:x=1", []string{"host is the outer agent"}},
		{"host@http://x", []string{"host is the outer agent"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseSpec(tt.in)
			if err == nil {
				t.Fatalf("ParseSpec(%q) succeeded, want an error", tt.in)
			}
			if !errors.Is(err, ErrBadSpec) {
				t.Errorf("error %v does not wrap ErrBadSpec", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestSpecValidateCatchesGoBuiltSpecs(t *testing.T) {
	tests := []struct {
		spec Spec
		ok   bool
	}{
		{Spec{Backend: "sim"}, true},
		{Spec{Backend: "sim", Model: "strong", Params: map[string]string{"accuracy": "0.5"}}, true},
		{Spec{Backend: "sim", Params: map[string]string{"accuracy": "2"}}, false},
		{Spec{Backend: "openai", Model: "gpt-5.4", Params: map[string]string{"seed": "1"}}, false},
		{Spec{Backend: "openai"}, false},
		{Spec{Backend: "nope", Model: "x"}, false},
		{Spec{Backend: "vllm", Model: "m", BaseURL: "localhost"}, false},
		{Spec{Backend: "host"}, true},
	}
	for _, tt := range tests {
		err := tt.spec.Validate()
		if (err == nil) != tt.ok {
			t.Errorf("Validate(%#v) = %v, want ok=%v", tt.spec, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrBadSpec) {
			t.Errorf("Validate error %v does not wrap ErrBadSpec", err)
		}
	}
}

func TestParseSpecs(t *testing.T) {
	got, err := ParseSpecs([]string{"sim/strong, sim/weak", "claude", "", "host,"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.String())
	}
	want := []string{"sim/strong", "sim/weak", "claude/claude-opus-4-6", "host"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("ParseSpecs = %v, want %v", names, want)
	}

	_, err = ParseSpecs([]string{"sim", "sim/strong,bogus/x"})
	if err == nil || !errors.Is(err, ErrBadSpec) || !strings.HasPrefix(err.Error(), "model 3:") {
		t.Errorf("ParseSpecs error = %v, want model 3 wrapping ErrBadSpec", err)
	}
	if got, err := ParseSpecs(nil); err != nil || len(got) != 0 {
		t.Errorf("ParseSpecs(nil) = %v, %v", got, err)
	}
}

func TestBackendsTable(t *testing.T) {
	want := []string{"openai", "claude", "gemini", "grok", "openrouter", "together", "groq", "cerebras", "fireworks",
		"deepseek", "azure_openai", "vllm", "sglang", "lmstudio", "ollama", "codex", "claude_code", "gemini_cli", "host", "human", "sim"}
	var got []string
	for _, b := range Backends() {
		got = append(got, b.Name)
		if b.Transport == "" {
			t.Errorf("%s has no transport", b.Name)
		}
		if b.Transport == TransportChatCompletions && b.BaseURLEnv == "" {
			t.Errorf("%s speaks Chat Completions but has no base-URL variable", b.Name)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("backends = %v, want %v", got, want)
	}
	local := map[string]string{
		"vllm": "http://localhost:8000/v1", "sglang": "http://localhost:30000/v1",
		"lmstudio": "http://localhost:1234/v1", "ollama": "http://localhost:11434/v1",
	}
	for name, url := range local {
		b, ok := LookupBackend(name)
		if !ok || b.DefaultBaseURL != url || len(b.KeyEnv) != 0 || !b.SelfHosted {
			t.Errorf("%s: %+v, want base %s, no key, and self-hosted", name, b, url)
		}
	}
	for _, b := range Backends() {
		if _, ok := local[b.Name]; !ok && b.SelfHosted {
			t.Errorf("%s is marked self-hosted, yet it bills per token", b.Name)
		}
	}
	g, _ := LookupBackend("gemini")
	if !reflect.DeepEqual(g.KeyEnv, []string{"GOOGLE_API_KEY", "GEMINI_API_KEY"}) || g.BaseURLEnv != "GOOGLE_GEMINI_BASE_URL" {
		t.Errorf("gemini: %+v", g)
	}
	az, _ := LookupBackend("azure_openai")
	if az.BaseURLEnv != "AZURE_OPENAI_ENDPOINT" || !reflect.DeepEqual(az.ExtraEnv, []string{"OPENAI_API_VERSION"}) {
		t.Errorf("azure_openai: %+v", az)
	}
	// Backends hands out copies: a caller's edit must not reach the table.
	Backends()[2].KeyEnv[0] = "MUTATED"
	if g2, _ := LookupBackend("gemini"); g2.KeyEnv[0] != "GOOGLE_API_KEY" {
		t.Error("Backends leaked the table's slices")
	}
	for _, b := range Backends() {
		if b.DefaultModel == "" {
			continue
		}
		sp, err := ParseSpec(b.Name)
		if err != nil || sp.Model != b.DefaultModel {
			t.Errorf("bare %q = %+v, %v; want model %q", b.Name, sp, err, b.DefaultModel)
		}
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{
		"codex", "sim/accuracy=0.8:seed=3", "sim/strong:latency=200ms", "sim:seed=2", "host", "host/x",
		"vllm/Qwen/Qwen3-8B@http://localhost:8000/v1", "ollama/llama3.1:8b", "sim/script:file=a.json",
		"openai@https://u@h/v1", "sim/", "a/b@c", "sim:file=x", "sim/weak:seed=1:seed=2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpec(s)
		if err != nil {
			if !errors.Is(err, ErrBadSpec) {
				t.Fatalf("ParseSpec(%q) error %v does not wrap ErrBadSpec", s, err)
			}
			return
		}
		canon := sp.String()
		again, err := ParseSpec(canon)
		if err != nil {
			t.Fatalf("ParseSpec(%q) = %#v, but its String %q does not parse: %v", s, sp, canon, err)
		}
		if !reflect.DeepEqual(again, sp) {
			t.Fatalf("round trip of %q via %q: %#v != %#v", s, canon, again, sp)
		}
		if again.String() != canon {
			t.Fatalf("String is not stable: %q then %q", canon, again.String())
		}
		if err := sp.Validate(); err != nil {
			t.Fatalf("parsed spec %q fails Validate: %v", canon, err)
		}
	})
}
