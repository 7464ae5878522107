package providers

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// ErrBadSpec is wrapped by every error about a model spec that cannot be used
// as written; the message says what is wrong and what would be right.
var ErrBadSpec = errors.New("bad model spec")

// Spec is a parsed model spec: `backend/model[@base_url]`, or for the sim
// backend `sim[/profile][:key=value…]`.
//
// Model is the sim profile for the sim backend ("sim", "strong", "weak",
// "script") and an optional free label for host. Params holds sim parameters
// only; it is nil when there are none.
type Spec struct {
	Backend string
	Model   string
	BaseURL string
	Params  map[string]string
	// Grant is what the operator said about the key for this spec's
	// endpoint. It is never part of the spec's text (String drops it), so
	// nothing a client writes can set it: only an operator's team file does.
	Grant KeyGrant
}

// KeyGrant is the operator's word on which key travels to a spec's base URL
// (docs/DESIGN.md, "Operator-only settings, tenants and limits"). The zero value is a spec someone
// merely named — a client, or a session written before the word was kept:
// the backend's key goes only to the backend's own configured endpoint,
// whoever opens the spec, and any other base URL is a client's.
type KeyGrant struct {
	// Operator marks a spec from the operator's team file: its base URL is
	// the operator's, so it needs no allow-list entry, and it receives a key
	// only if KeyEnv names one.
	Operator bool
	// CommandLine marks a spec the operator wrote on its own command line
	// (run --models): its base URL is the operator setting the backend's
	// for that session, so the backend's key goes with it.
	CommandLine bool
	// KeyEnv names the variable whose value is sent as the key (a team
	// file's api_key_env); "" sends no key to a team file's base_url.
	KeyEnv string
}

// Transport is how a backend is reached.
type Transport string

const (
	TransportResponses       Transport = "responses"        // OpenAI Responses API
	TransportMessages        Transport = "messages"         // Anthropic Messages API
	TransportGenerateContent Transport = "generate_content" // Gemini generateContent
	TransportChatCompletions Transport = "chat_completions" // OpenAI-compatible Chat Completions
	TransportSubprocess      Transport = "subprocess"       // a CLI agent's JSON event stream
	TransportHost            Transport = "host"             // the outer agent, via step
	TransportElicitation     Transport = "elicitation"      // a person, asked through the MCP client (human)
	TransportSim             Transport = "sim"              // the deterministic simulator
)

// BackendInfo describes one backend of docs/DESIGN.md, "Backends and the simulated agents".
type BackendInfo struct {
	Name      string
	Transport Transport
	// KeyEnv lists the variables that may hold the API key, any one of them
	// suffices; empty when the backend needs no key.
	KeyEnv []string
	// BaseURLEnv overrides the base URL (for Azure, the resource endpoint).
	BaseURLEnv string
	// DefaultBaseURL is used when neither the spec nor BaseURLEnv gives one;
	// empty means the SDK's own default.
	DefaultBaseURL string
	// ExtraEnv are further variables the backend reads (Azure's API version).
	ExtraEnv []string
	// DefaultModel is what the bare backend name means: `codex` is
	// `codex/gpt-5.4`. Empty means a model must be named.
	DefaultModel string
	// AcceptsBaseURL says whether `@base_url` may follow the model.
	AcceptsBaseURL bool
	// Implemented says whether this build can run the backend.
	Implemented bool
	// SelfHosted marks a server the operator runs (vllm, sglang, LM
	// Studio, Ollama): it sends no per-token bill, so its models cost a
	// known $0 (pricing.Cost), which a cost budget counts, not an unknown
	// cost it could not bound.
	SelfHosted bool
}

// backendTable is the table of docs/DESIGN.md, "Backends and the simulated agents", in the order Backends lists them.
var backendTable = []BackendInfo{
	{Name: "openai", Transport: TransportResponses, KeyEnv: []string{"OPENAI_API_KEY"}, BaseURLEnv: "OPENAI_BASE_URL",
		DefaultModel: "gpt-5.4", AcceptsBaseURL: true, Implemented: true},
	{Name: "claude", Transport: TransportMessages, KeyEnv: []string{"ANTHROPIC_API_KEY"}, BaseURLEnv: "ANTHROPIC_BASE_URL",
		DefaultModel: "claude-opus-4-6", AcceptsBaseURL: true, Implemented: true},
	{Name: "gemini", Transport: TransportGenerateContent, KeyEnv: []string{"GOOGLE_API_KEY", "GEMINI_API_KEY"},
		BaseURLEnv: "GOOGLE_GEMINI_BASE_URL", DefaultModel: "gemini-3.1-pro-preview", AcceptsBaseURL: true, Implemented: true},
	{Name: "grok", Transport: TransportChatCompletions, KeyEnv: []string{"XAI_API_KEY"}, BaseURLEnv: "XAI_BASE_URL",
		DefaultBaseURL: "https://api.x.ai/v1", DefaultModel: "grok-4.20-0309-reasoning", AcceptsBaseURL: true, Implemented: true},
	{Name: "openrouter", Transport: TransportChatCompletions, KeyEnv: []string{"OPENROUTER_API_KEY"}, BaseURLEnv: "OPENROUTER_BASE_URL",
		DefaultBaseURL: "https://openrouter.ai/api/v1", AcceptsBaseURL: true, Implemented: true},
	{Name: "together", Transport: TransportChatCompletions, KeyEnv: []string{"TOGETHER_API_KEY"}, BaseURLEnv: "TOGETHER_BASE_URL",
		DefaultBaseURL: "https://api.together.xyz/v1", AcceptsBaseURL: true, Implemented: true},
	{Name: "groq", Transport: TransportChatCompletions, KeyEnv: []string{"GROQ_API_KEY"}, BaseURLEnv: "GROQ_BASE_URL",
		DefaultBaseURL: "https://api.groq.com/openai/v1", AcceptsBaseURL: true, Implemented: true},
	{Name: "cerebras", Transport: TransportChatCompletions, KeyEnv: []string{"CEREBRAS_API_KEY"}, BaseURLEnv: "CEREBRAS_BASE_URL",
		DefaultBaseURL: "https://api.cerebras.ai/v1", AcceptsBaseURL: true, Implemented: true},
	{Name: "fireworks", Transport: TransportChatCompletions, KeyEnv: []string{"FIREWORKS_API_KEY"}, BaseURLEnv: "FIREWORKS_BASE_URL",
		DefaultBaseURL: "https://api.fireworks.ai/inference/v1", AcceptsBaseURL: true, Implemented: true},
	{Name: "deepseek", Transport: TransportChatCompletions, KeyEnv: []string{"DEEPSEEK_API_KEY"}, BaseURLEnv: "DEEPSEEK_BASE_URL",
		DefaultBaseURL: "https://api.deepseek.com/v1", AcceptsBaseURL: true, Implemented: true},
	{Name: "azure_openai", Transport: TransportChatCompletions, KeyEnv: []string{"AZURE_OPENAI_API_KEY"},
		BaseURLEnv: "AZURE_OPENAI_ENDPOINT", ExtraEnv: []string{"OPENAI_API_VERSION"}, AcceptsBaseURL: true, Implemented: true},
	{Name: "vllm", Transport: TransportChatCompletions, BaseURLEnv: "VLLM_BASE_URL",
		DefaultBaseURL: "http://localhost:8000/v1", AcceptsBaseURL: true, Implemented: true, SelfHosted: true},
	{Name: "sglang", Transport: TransportChatCompletions, BaseURLEnv: "SGLANG_BASE_URL",
		DefaultBaseURL: "http://localhost:30000/v1", AcceptsBaseURL: true, Implemented: true, SelfHosted: true},
	{Name: "lmstudio", Transport: TransportChatCompletions, BaseURLEnv: "LMSTUDIO_BASE_URL",
		DefaultBaseURL: "http://localhost:1234/v1", AcceptsBaseURL: true, Implemented: true, SelfHosted: true},
	{Name: "ollama", Transport: TransportChatCompletions, BaseURLEnv: "OLLAMA_BASE_URL",
		DefaultBaseURL: "http://localhost:11434/v1", AcceptsBaseURL: true, Implemented: true, SelfHosted: true},
	// The CLI agents authenticate themselves; their default models mirror the
	// API backends' so that a bare `claude_code` means the same model as
	// `claude`.
	{Name: "codex", Transport: TransportSubprocess, DefaultModel: "gpt-5.4", Implemented: true},
	{Name: "claude_code", Transport: TransportSubprocess, DefaultModel: "claude-opus-4-6", Implemented: true},
	{Name: "gemini_cli", Transport: TransportSubprocess, DefaultModel: "gemini-3.1-pro-preview", Implemented: true},
	// host is driven by coordination itself (a view, then a submitted action),
	// so there is nothing for providers to implement.
	{Name: "host", Transport: TransportHost, Implemented: true},
	// human is a person, asked each step through the MCP client that runs
	// the team (elicitation; package human).
	{Name: "human", Transport: TransportElicitation, Implemented: true},
	{Name: "sim", Transport: TransportSim, DefaultModel: "sim", Implemented: true},
}

// Backends lists every backend of docs/DESIGN.md, "Backends and the simulated agents", whether or not this build
// implements it. The slices inside are copies; callers may keep them.
func Backends() []BackendInfo {
	out := make([]BackendInfo, len(backendTable))
	for i, b := range backendTable {
		b.KeyEnv = slices.Clone(b.KeyEnv)
		b.ExtraEnv = slices.Clone(b.ExtraEnv)
		out[i] = b
	}
	return out
}

// SelfHosted reports whether a backend is a server the operator runs, with
// no per-token bill (BackendInfo.SelfHosted). It is asked for every priced
// usage, so it reads the table without copying an entry.
func SelfHosted(name string) bool {
	for _, b := range backendTable {
		if b.Name == name {
			return b.SelfHosted
		}
	}
	return false
}

// LookupBackend finds a backend by its exact (lower-case) name.
func LookupBackend(name string) (BackendInfo, bool) {
	for _, b := range backendTable {
		if b.Name == name {
			b.KeyEnv, b.ExtraEnv = slices.Clone(b.KeyEnv), slices.Clone(b.ExtraEnv)
			return b, true
		}
	}
	return BackendInfo{}, false
}

func backendNames() string {
	names := make([]string, len(backendTable))
	for i, b := range backendTable {
		names[i] = b.Name
	}
	return strings.Join(names, ", ")
}

// backendHints catches names people reach for out of habit.
var backendHints = map[string]string{
	"anthropic":   "claude",
	"google":      "gemini",
	"xai":         "grok",
	"azure":       "azure_openai",
	"claude-code": "claude_code",
	"claudecode":  "claude_code",
	"gemini-cli":  "gemini_cli",
	"lm_studio":   "lmstudio",
	"lm-studio":   "lmstudio",
}

// Sim profiles and the parameters the sim backend understands.
const (
	SimProfileDefault = "sim"
	SimProfileStrong  = "strong"
	SimProfileWeak    = "weak"
	SimProfileScript  = "script"
)

var simProfiles = []string{SimProfileDefault, SimProfileStrong, SimProfileWeak, SimProfileScript}

// simParamCheck validates one parameter value; the returned message completes
// "<key> must be …".
type simParamCheck func(v string) (ok bool, want string)

func paramProbability(v string) (bool, string) {
	f, err := strconv.ParseFloat(v, 64)
	return err == nil && f >= 0 && f <= 1, "a number from 0 to 1, e.g. 0.8"
}

func paramFinite(v string) (bool, string) {
	f, err := strconv.ParseFloat(v, 64)
	return err == nil && !math.IsInf(f, 0) && !math.IsNaN(f), "a number, e.g. 0.2 or -0.1"
}

func paramPrice(v string) (bool, string) {
	f, err := strconv.ParseFloat(v, 64)
	return err == nil && f >= 0 && !math.IsInf(f, 0), "a number of USD per 1M tokens, 0 or more, e.g. 2.5"
}

func paramPositive(v string) (bool, string) {
	f, err := strconv.ParseFloat(v, 64)
	return err == nil && f > 0 && !math.IsInf(f, 0), "a number above 0, e.g. 2 (1 means no truth bias)"
}

func paramDuration(v string) (bool, string) {
	d, err := time.ParseDuration(v)
	return err == nil && d >= 0, "a duration of 0 or more, e.g. 300ms or 2s"
}

func paramInteger(v string) (bool, string) {
	_, err := strconv.ParseInt(v, 10, 64)
	return err == nil, "a whole number, e.g. 3"
}

func paramPath(v string) (bool, string) {
	return v != "", "a path to a JSON file, e.g. file=testdata/script.json"
}

// simParams maps every sim parameter to its check. The sim package reads the
// values; keeping the checks here lets ParseSpec refuse a bad spec before any
// session is created.
var simParams = map[string]simParamCheck{
	"accuracy":      paramProbability,
	"latency":       paramDuration,
	"conformity":    paramProbability,
	"revise":        paramProbability,
	"truth_bias":    paramPositive,
	"self_bias":     paramFinite,
	"position_bias": paramFinite,
	"price_in":      paramPrice,
	"price_out":     paramPrice,
	"seed":          paramInteger,
	"file":          paramPath,
}

// scriptParams are the parameters that make sense for a script: it plays
// fixed actions, so accuracy and the mind-change knobs would be ignored.
var scriptParams = []string{"file", "latency", "price_in", "price_out"}

func simParamNames() string {
	names := make([]string, 0, len(simParams))
	for k := range simParams {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// badSpec names the spec as ShowSpec shows it: a refused spec may be an
// operator's team file's, whose message every tenant reads (list_backends).
func badSpec(spec, format string, args ...any) error {
	return fmt.Errorf("%w %q: %s", ErrBadSpec, ShowSpec(spec), fmt.Sprintf(format, args...))
}

// ParseSpec parses one model spec. A bare backend name stands for its default
// model (`claude` is `claude/claude-opus-4-6`, `sim` the default sim
// profile); `host` needs no model.
func ParseSpec(raw string) (Spec, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Spec{}, fmt.Errorf("%w: the spec is empty; write backend/model, e.g. openai/gpt-5.4, claude or sim", ErrBadSpec)
	}
	if strings.Contains(s, ",") {
		return Spec{}, badSpec(s, "a spec never contains a comma, because commas separate models; write one model here, or pass the comma-separated list where several models are expected (e.g. --models sim/strong,sim/weak)")
	}
	if strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		return Spec{}, badSpec(s, "a spec has no spaces; write backend/model, e.g. ollama/llama3.1:8b")
	}
	cut := strings.IndexAny(s, "/:@")
	name, rest := s, ""
	if cut >= 0 {
		name, rest = s[:cut], s[cut:]
	}
	name = strings.ToLower(name)
	info, ok := LookupBackend(name)
	if !ok {
		if name == "" {
			return Spec{}, badSpec(s, "the backend name is missing before %q; known backends are %s", rest[:1], backendNames())
		}
		if hint, ok := backendHints[name]; ok {
			return Spec{}, badSpec(s, "unknown backend %q; did you mean %q? Known backends are %s", name, hint, backendNames())
		}
		return Spec{}, badSpec(s, "unknown backend %q; known backends are %s", name, backendNames())
	}
	var sp Spec
	var err error
	switch info.Transport {
	case TransportSim:
		sp, err = parseSim(s, rest)
	case TransportHost, TransportElicitation:
		sp, err = parseLabelled(s, info.Name, rest)
	default:
		sp, err = parseModel(s, info, rest)
	}
	if err != nil {
		return Spec{}, err
	}
	if err := sp.validate(s); err != nil {
		return Spec{}, err
	}
	return sp, nil
}

func parseSim(s, rest string) (Spec, error) {
	sp := Spec{Backend: "sim", Model: SimProfileDefault}
	var segs []string
	switch {
	case rest == "":
		return sp, nil
	case rest[0] == '@':
		return Spec{}, badSpec(s, "sim runs in-process and takes no base URL; drop the @… part")
	case rest[0] == ':':
		segs = strings.Split(rest[1:], ":")
	default: // '/'
		segs = strings.Split(rest[1:], ":")
		// `sim/accuracy=0.8` names parameters of the default profile.
		if !strings.Contains(segs[0], "=") {
			sp.Model, segs = segs[0], segs[1:]
			if sp.Model == "" {
				return Spec{}, badSpec(s, "nothing follows sim/; write sim, sim/strong, sim/weak or sim/script:file=<path>")
			}
		}
	}
	if strings.Contains(sp.Model, "@") {
		return Spec{}, badSpec(s, "sim runs in-process and takes no base URL; drop the @… part")
	}
	for _, seg := range segs {
		if seg == "" {
			return Spec{}, badSpec(s, "an empty parameter (two colons in a row or a trailing colon); write sim parameters as sim/strong:key=value:key=value")
		}
		k, v, ok := strings.Cut(seg, "=")
		if !ok {
			return Spec{}, badSpec(s, "sim parameter %q has no value; write key=value, e.g. seed=3", seg)
		}
		if _, dup := sp.Params[k]; dup {
			return Spec{}, badSpec(s, "sim parameter %q is given twice; keep one", k)
		}
		if sp.Params == nil {
			sp.Params = map[string]string{}
		}
		sp.Params[k] = v
	}
	return sp, nil
}

// parseLabelled parses the spec of a backend that is no model — host, the
// outer agent, and human, a person: the bare name or name/<label>.
func parseLabelled(s, backend, rest string) (Spec, error) {
	sp := Spec{Backend: backend}
	what := "host is the outer agent"
	if backend == "human" {
		what = "human is a person"
	}
	switch {
	case rest == "":
		return sp, nil
	case rest[0] == '/':
		sp.Model = rest[1:]
		if strings.ContainsAny(sp.Model, ":@") {
			return Spec{}, badSpec(s, "%s and takes no parameters or base URL; write %s or %s/<label>", what, backend, backend)
		}
		return sp, nil
	default:
		return Spec{}, badSpec(s, "%s and takes no parameters or base URL; write %s or %s/<label>", what, backend, backend)
	}
}

func parseModel(s string, info BackendInfo, rest string) (Spec, error) {
	sp := Spec{Backend: info.Name}
	hasAt := false
	switch {
	case rest == "":
	case rest[0] == ':':
		return Spec{}, badSpec(s, "parameters after a colon are only for the sim backend; write %s/<model>", info.Name)
	case rest[0] == '@':
		sp.BaseURL, hasAt = rest[1:], true
	default: // '/'
		// Split at the first @: model names never contain one while a URL
		// may (user info), so the first @ is always the boundary.
		sp.Model, sp.BaseURL, hasAt = strings.Cut(rest[1:], "@")
	}
	if hasAt && sp.BaseURL == "" {
		return Spec{}, badSpec(s, "nothing follows @; write the base URL in full, e.g. %s/<model>@http://localhost:8000/v1, or drop the @", info.Name)
	}
	if sp.Model == "" {
		if info.DefaultModel == "" {
			return Spec{}, badSpec(s, "the model is missing; write %s/<model>, e.g. %s", info.Name, exampleModel(info))
		}
		sp.Model = info.DefaultModel
	}
	return sp, nil
}

func exampleModel(info BackendInfo) string {
	examples := map[string]string{
		"ollama":       "ollama/llama3.1:8b",
		"vllm":         "vllm/Qwen/Qwen3-8B",
		"sglang":       "sglang/Qwen/Qwen3-8B",
		"lmstudio":     "lmstudio/qwen3-8b",
		"openrouter":   "openrouter/anthropic/claude-opus-4-6",
		"together":     "together/meta-llama/Llama-3.3-70B-Instruct-Turbo",
		"groq":         "groq/llama-3.3-70b-versatile",
		"cerebras":     "cerebras/llama-3.3-70b",
		"fireworks":    "fireworks/accounts/fireworks/models/llama-v3p3-70b-instruct",
		"deepseek":     "deepseek/deepseek-chat",
		"azure_openai": "azure_openai/<your deployment name>",
	}
	if e, ok := examples[info.Name]; ok {
		return e
	}
	return info.Name + "/" + cmp.Or(info.DefaultModel, "<model name>")
}

// Validate checks a spec built in Go the way ParseSpec checks a written one.
func (sp Spec) Validate() error { return sp.validate(sp.String()) }

func (sp Spec) validate(s string) error {
	info, ok := LookupBackend(sp.Backend)
	if !ok {
		return badSpec(s, "unknown backend %q; known backends are %s", sp.Backend, backendNames())
	}
	if sp.BaseURL != "" {
		if !info.AcceptsBaseURL {
			return badSpec(s, "%s takes no base URL; drop the @… part", sp.Backend)
		}
		u, err := url.Parse(sp.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return badSpec(s, "base URL %q is not an http(s) URL; write it in full, e.g. %s/<model>@http://localhost:8000/v1", showURL(sp.BaseURL), sp.Backend)
		}
	}
	if info.Transport != TransportSim {
		if len(sp.Params) > 0 {
			return badSpec(s, "parameters are only for the sim backend; write %s/<model>", sp.Backend)
		}
		if info.Transport != TransportHost && info.Transport != TransportElicitation {
			if sp.Model == "" {
				return badSpec(s, "the model is missing; write %s/<model>, e.g. %s", sp.Backend, exampleModel(info))
			}
			// A colon inside a model name is fine (ollama tags such as
			// llama3.1:8b); a key=value after it is a sim parameter in the
			// wrong place.
			if _, tail, ok := strings.Cut(sp.Model, ":"); ok && strings.Contains(tail, "=") {
				return badSpec(s, "parameters after a colon are only for the sim backend; write %s/<model>", sp.Backend)
			}
		}
		return nil
	}
	profile := sp.Model
	if profile == "" {
		profile = SimProfileDefault
	}
	if !slices.Contains(simProfiles, profile) {
		if _, isParam := simParams[strings.SplitN(profile, "=", 2)[0]]; isParam {
			return badSpec(s, "%q is a parameter, not a profile; give it a value after a colon, e.g. sim:%s=<value>", profile, profile)
		}
		return badSpec(s, "unknown sim profile %q; use sim, sim/strong, sim/weak or sim/script:file=<path>", profile)
	}
	for k, v := range sp.Params {
		check, ok := simParams[k]
		if !ok {
			return badSpec(s, "unknown sim parameter %q; known parameters are %s", k, simParamNames())
		}
		if profile == SimProfileScript && !slices.Contains(scriptParams, k) {
			return badSpec(s, "sim/script plays fixed actions and takes only %s, not %q", strings.Join(scriptParams, ", "), k)
		}
		if profile != SimProfileScript && k == "file" {
			return badSpec(s, "file= is only for scripts; write sim/script:file=%s", v)
		}
		if ok, want := check(v); !ok {
			return badSpec(s, "sim parameter %s=%q is invalid; %s must be %s", k, v, k, want)
		}
	}
	if profile == SimProfileScript && sp.Params["file"] == "" {
		return badSpec(s, "sim/script needs the actions to play; write sim/script:file=<path to a JSON list>")
	}
	return nil
}

// String renders the canonical form, which ParseSpec reads back to the same
// Spec: the default model spelled out, sim parameters sorted by name.
func (sp Spec) String() string {
	var b strings.Builder
	b.WriteString(sp.Backend)
	switch sp.Backend {
	case "sim":
		if sp.Model != "" && sp.Model != SimProfileDefault {
			b.WriteString("/" + sp.Model)
		}
		keys := make([]string, 0, len(sp.Params))
		for k := range sp.Params {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b.WriteString(":" + k + "=" + sp.Params[k])
		}
	default:
		if sp.Model != "" {
			b.WriteString("/" + sp.Model)
		}
		if sp.BaseURL != "" {
			b.WriteString("@" + sp.BaseURL)
		}
	}
	return b.String()
}

// ParseSpecs parses a list of specs. Items may themselves hold several specs
// separated by commas (a flag value such as "sim/strong,sim/weak"); empty
// items are skipped. An error names the position of the bad spec.
func ParseSpecs(list []string) ([]Spec, error) {
	var out []Spec
	for _, item := range list {
		for raw := range strings.SplitSeq(item, ",") {
			if strings.TrimSpace(raw) == "" {
				continue
			}
			sp, err := ParseSpec(raw)
			if err != nil {
				return nil, fmt.Errorf("model %d: %w", len(out)+1, err)
			}
			out = append(out, sp)
		}
	}
	return out, nil
}
