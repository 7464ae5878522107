package teamfile

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

func parse(t *testing.T, yml string, opts Options) (*Team, error) {
	t.Helper()
	return Parse([]byte(yml), "team.yaml", opts)
}

func mustParse(t *testing.T, yml string) *Team {
	t.Helper()
	team, err := parse(t, yml, Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return team
}

func TestOurFormatReadsAgentsRulesAndContext(t *testing.T) {
	team := mustParse(t, `
agents:
  - model: sim/strong
  - id: critic
    model: sim
    system_message: You look for mistakes.
    temperature: 0.2
    reasoning_effort: high
rules:
  consensus: unanimous
  max_rounds: 4
  cost_budget_usd: 0.5
  answer_format: short
  early_stop: true
context:
  - Use metric units.
  - text: Be brief.
`)
	if team.Format != FormatOurs || team.Name != "team" {
		t.Fatalf("format %q name %q", team.Format, team.Name)
	}
	if len(team.Agents) != 2 || team.Agents[0].Model != "sim/strong" || team.Agents[1].ID != "critic" ||
		team.Agents[1].SystemMessage != "You look for mistakes." || *team.Agents[1].Temperature != 0.2 || team.Agents[1].ReasoningEffort != "high" {
		t.Fatalf("agents: %+v", team.Agents)
	}
	r := team.Rules
	if r.Consensus != "unanimous" || r.MaxRounds != 4 || *r.CostBudgetUSD != 0.5 || r.AnswerFormat != "short" || !r.EarlyStop {
		t.Fatalf("rules: %+v", r)
	}
	if strings.Join(team.Context, "|") != "Use metric units.|Be brief." {
		t.Fatalf("context: %q", team.Context)
	}
	if len(team.Ignored) != 0 || team.Warning() != "" {
		t.Fatalf("ignored: %v", team.Ignored)
	}
}

const massgenConfig = `
agents:
  - id: researcher
    backend:
      type: gemini
      model: gemini-2.5-flash
      enable_web_search: true
    system_message: You are a researcher
  - id: analyst
    backend:
      type: openai
      model: gpt-5-nano
      temperature: 0.7
      reasoning:
        effort: medium
      text:
        verbosity: low
      cwd: workspace1
      mcp_servers:
        - name: weather
          type: stdio
          command: npx
  - id: coder
    backend:
      type: claude_code
      allowed_tools: [Read, Write]
orchestrator:
  max_new_answers_per_agent: 2
  final_answer_strategy: synthesize
  voting_sensitivity: strict
  defer_voting_until_all_answered: true
  context_paths:
    - path: notes.md
      permission: read
  timeout_settings:
    orchestrator_timeout_seconds: 900
    initial_round_timeout_seconds: 300
    subsequent_round_timeout_seconds: 120
  coordination:
    write_mode: auto
ui:
  display_type: rich_terminal
  logging_enabled: true
`

func TestMassGenConfigMapsOntoRulesAgentsAndContext(t *testing.T) {
	team := mustParse(t, massgenConfig)
	if team.Format != FormatMassGen {
		t.Fatalf("format %q", team.Format)
	}
	want := []string{"gemini/gemini-2.5-flash", "openai/gpt-5-nano", "claude_code/claude-opus-4-6"}
	for i, a := range team.Agents {
		if a.Model != want[i] {
			t.Errorf("agent %d model %q, want %q", i, a.Model, want[i])
		}
	}
	if team.Agents[0].ID != "researcher" || team.Agents[0].SystemMessage != "You are a researcher" {
		t.Errorf("agent 0: %+v", team.Agents[0])
	}
	if a := team.Agents[1]; *a.Temperature != 0.7 || a.ReasoningEffort != "medium" {
		t.Errorf("agent 1: %+v", a)
	}
	r := team.Rules
	if r.MaxAnswersPerAgent != 2 || r.Final != coordination.FinalSynthesize || r.TimeoutSeconds != 900 || r.StepTimeoutSeconds != 300 {
		t.Errorf("rules: %+v", r)
	}
	if len(team.ContextPaths) != 1 || team.ContextPaths[0].Path != "notes.md" || team.ContextPaths[0].Permission != "read" {
		t.Errorf("context paths: %+v", team.ContextPaths)
	}
	if got := strings.Join(team.Operator, ","); got != "agents[1].backend.mcp_servers,agents[2].backend.allowed_tools,orchestrator.context_paths[0].path" {
		t.Errorf("operator-only settings %s; want the honoured ones by their paths (cwd is not honoured, so not among them)", got)
	}
	w := team.Warning()
	if a := team.Agents[0]; a.Tools == nil || !a.Tools.WebSearch {
		t.Errorf("enable_web_search did not reach agent 0: %+v", a.Tools)
	}
	if a := team.Agents[2]; a.Tools == nil || strings.Join(a.Tools.Allowed, ",") != "Read,Write" {
		t.Errorf("allowed_tools did not reach agent 2: %+v", a.Tools)
	}
	if strings.Contains(w, "allowed_tools") {
		t.Errorf("honoured tool settings warned about:\n%s", w)
	}
	// Gemini 2.5 cannot search beside function calling: the note names the
	// key as the file writes it.
	if !strings.Contains(w, "agents[0].backend.enable_web_search (line 7)") {
		t.Errorf("the warning does not name agent 0's enable_web_search as written:\n%s", w)
	}
	if a := team.Agents[1]; a.Tools == nil || a.Tools.MCPServers["weather"].Command != "npx" || a.Tools.MCPServers["weather"].Type != "stdio" {
		t.Errorf("mcp_servers did not reach agent 1: %+v", a.Tools)
	}
	for _, key := range []string{"agents[1].backend.text.verbosity", "agents[1].backend.cwd",
		"orchestrator.voting_sensitivity",
		"orchestrator.coordination.write_mode", "ui (line"} {
		if !strings.Contains(w, key) {
			t.Errorf("the warning does not name %s:\n%s", key, w)
		}
	}
	if !strings.Contains(w, "would have chosen how the winner's files are written back") || !strings.Contains(w, "--strict-config") {
		t.Errorf("the warning does not say what the keys would have done:\n%s", w)
	}
	// lenient defaults and settings we always honour are not warned about.
	if strings.Contains(w, "defer_voting") || strings.Contains(w, "max_new_answers_per_agent") {
		t.Errorf("honoured keys warned about:\n%s", w)
	}
}

func TestStrictConfigMakesEveryIgnoredKeyAnError(t *testing.T) {
	_, err := parse(t, massgenConfig, Options{Strict: true})
	var p *Problems
	if !errors.As(err, &p) || !errors.Is(err, coordination.ErrBadInput) {
		t.Fatalf("err %v", err)
	}
	if len(p.List) < 5 || !strings.Contains(err.Error(), "orchestrator.coordination.write_mode is not honoured") {
		t.Fatalf("problems: %v", p.List)
	}
}

func TestSingleAgentKey(t *testing.T) {
	team := mustParse(t, "agent:\n  id: solo\n  backend: {type: grok}\n")
	if len(team.Agents) != 1 || team.Agents[0].Model != "grok/grok-4.20-0309-reasoning" || team.Format != FormatMassGen {
		t.Fatalf("%+v", team)
	}
}

func TestChatCompletionResolvesTheProviderFromItsBaseURL(t *testing.T) {
	team := mustParse(t, "agents:\n  - backend: {type: chatcompletion, model: m, base_url: 'https://openrouter.ai/api/v1'}\n  - backend: {type: chatcompletion, model: qwen, base_url: 'http://localhost:8000/v1'}\n")
	if team.Agents[0].Model != "openrouter/m@https://openrouter.ai/api/v1" || team.Agents[1].Model != "vllm/qwen@http://localhost:8000/v1" {
		t.Fatalf("%+v", team.Agents)
	}
	if _, err := parse(t, "agents:\n  - backend: {type: chatcompletion, model: m, base_url: 'https://example.com/v1'}\n", Options{}); err == nil || !strings.Contains(err.Error(), "name the provider instead") {
		t.Fatalf("err %v", err)
	}
}

// goTypeName matches what yaml.v3 and encoding/json put in their errors.
var goTypeName = regexp.MustCompile(`coordination\.|teamfile\.|\bstruct\b|\bfloat64\b|\bint64\b|\[\]|!!|unmarshal`)

func TestErrorsNameKeysAndLinesNeverGoTypes(t *testing.T) {
	cases := []struct {
		name, yml, want string
	}{
		{"the issue's own report", "agents:\n  - backend: {type: openai, model: gpt-5}\n    bogus: 1\nrules: {max_rounds: lots}\n", "line 4: rules.max_rounds must be a whole number, not \"lots\""},
		{"a typo in our format", "agents:\n  - model: sim\n    sytem_message: hi\n", "unknown key agents[0].sytem_message; did you mean system_message?"},
		{"a typo in MassGen's", "agents:\n  - backend: {type: openai}\norchestrator:\n  max_new_answer_per_agent: 2\n", "did you mean max_new_answers_per_agent?"},
		{"an unknown key in our format", "agents: [{model: sim}]\nteam_name: x\n", "unknown key team_name"},
		{"no agents", "rules: {max_rounds: 3}\n", "lists no agents"},
		{"no model", "agents:\n  - id: a\n", "agents[0] has no model"},
		{"empty model", "agents:\n  - model:\n", "agents[0] has no model"},
		{"model and backend", "agents:\n  - model: sim\n    backend: {type: sim}\n", "has both model and backend"},
		{"unknown backend type", "agents:\n  - backend: {type: zai, model: glm}\n", "type \"zai\" is not a backend massgen-mcp runs"},
		{"a key in the file", "agents:\n  - backend: {type: openai, api_key: sk-dummy-not-a-key-123}\n", "keys never go in a team file"},
		{"a bad spec", "agents:\n  - model: nosuch/x\n", "agents[0]:"},
		{"a duplicate key", "agents: [{model: sim}]\nagents: [{model: sim}]\n", "agents is set twice"},
		{"a bad rule value", "agents: [{model: sim}]\nrules: {consensus: most}\n", "consensus \"most\" is not one of majority"},
		{"a temperature out of range", "agents: [{model: sim, temperature: 5}]\n", "temperature must be between 0 and 2"},
		{"not YAML", "agents: [\n", "not valid YAML"},
		{"a list at the top", "- model: sim\n", "a team file is a mapping"},
		{"an empty file", "", "the file is empty"},
		{"a bad final strategy", "agents: [{backend: {type: sim}}]\norchestrator: {final_answer_strategy: best}\n", "must be winner_reuse, winner_present or synthesize"},
		{"a boolean as text", "agents: [{model: sim}]\nrules: {early_stop: 'yes'}\n", "rules.early_stop must be true or false"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.yml, Options{})
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
			if goTypeName.MatchString(err.Error()) {
				t.Fatalf("error names Go internals: %q", err)
			}
			if !errors.Is(err, coordination.ErrBadInput) {
				t.Fatalf("error is not bad input: %v", err)
			}
		})
	}
}

func TestEveryProblemIsReportedAtOnce(t *testing.T) {
	_, err := parse(t, "agents:\n  - id: a\n  - model: sim\n    temperature: hot\nrules: {max_rounds: 0}\n", Options{})
	var p *Problems
	if !errors.As(err, &p) || len(p.List) < 3 {
		t.Fatalf("want three problems, got %v", err)
	}
}

func TestAliasBombIsRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("a")
		b.WriteString(string(rune('0' + i)))
		b.WriteString(": &a")
		b.WriteString(string(rune('0' + i)))
		b.WriteString(" [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a")
			b.WriteString(string(rune('0' + i - 1)))
		}
		b.WriteString("]\n")
	}
	b.WriteString("agents:\n  - model: sim\n    system_message: *a8\n")
	_, err := parse(t, b.String(), Options{})
	if err == nil {
		t.Fatal("an alias bomb was accepted")
	}
}

func TestLoadReadsContextFilesBesideTheTeamFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte("The budget is 10k."), 0o644)
	os.Mkdir(filepath.Join(dir, "src"), 0o755)
	path := filepath.Join(dir, "review.yaml")
	os.WriteFile(path, []byte("agents: [{model: sim}, {model: sim}]\ncontext:\n  - path: notes.md\n  - path: src\n    permission: write\n    protected_paths: [config/]\n"), 0o644)
	team, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(team.Context) != 1 || !strings.Contains(team.Context[0], "The budget is 10k.") || team.Name != "review" {
		t.Fatalf("context %q name %q", team.Context, team.Name)
	}
	// A directory is a project directory the team works on, resolved from
	// the team file's directory, write permission and protected paths kept.
	if len(team.Dirs) != 1 || team.Dirs[0].Path != filepath.Join(dir, "src") || team.Dirs[0].Permission != "write" ||
		len(team.Dirs[0].Protected) != 1 || team.Dirs[0].Protected[0] != "config/" {
		t.Fatalf("dirs %+v", team.Dirs)
	}
	if w := team.Warning(); w != "" {
		t.Fatalf("a directory context is honoured, yet warned about: %q", w)
	}
	if _, err := Load(path, Options{Strict: true}); err != nil {
		t.Fatalf("strict: %v", err)
	}
	os.WriteFile(path, []byte("agents: [{model: sim}]\ncontext:\n  - path: missing.md\n"), 0o644)
	if _, err := Load(path, Options{}); err == nil || !strings.Contains(err.Error(), "missing.md") {
		t.Fatalf("missing context file: %v", err)
	}
}

func TestLoadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir, Options{}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a directory as a team file: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "nope.yaml"), Options{}); err == nil || !errors.Is(err, coordination.ErrBadInput) {
		t.Fatalf("a missing file: %v", err)
	}
}

func TestEveryExampleLoads(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("examples: %v %v", files, err)
	}
	formats := map[string]bool{}
	for _, f := range files {
		team, err := Load(f, Options{})
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		formats[team.Format] = true
	}
	if !formats[FormatMassGen] || !formats[FormatOurs] {
		t.Fatalf("the examples should include both formats: %v", formats)
	}
}

func TestAgentToolSettingsAreReadAndSandboxNoneIsWarned(t *testing.T) {
	team := mustParse(t, `agents:
  - id: fixer
    model: openai/gpt-5-mini
    web_search: true
    exclude_tools: [write_file]
    sandbox: none
    network: true
  - id: reader
    model: claude/claude-haiku-4-5
    allowed_tools: [read_file, search]
`)
	f, r := team.Agents[0].Tools, team.Agents[1].Tools
	if f == nil || !f.WebSearch || !f.NoSandbox || !f.Network || strings.Join(f.Excluded, ",") != "write_file" {
		t.Fatalf("fixer's tools %+v", f)
	}
	if r == nil || strings.Join(r.Allowed, ",") != "read_file,search" || r.NoSandbox {
		t.Fatalf("reader's tools %+v", r)
	}
	if w := team.Warning(); !strings.Contains(w, "sandbox: none") || !strings.Contains(w, "fixer") || strings.Contains(w, "reader") {
		t.Fatalf("warning %q; want fixer's unsandboxed commands named", w)
	}
	for _, op := range []string{"agents[0].web_search", "agents[0].exclude_tools", "agents[0].sandbox", "agents[0].network", "agents[1].allowed_tools"} {
		if !slices.Contains(team.Operator, op) {
			t.Errorf("%s is not recorded as operator-only: %v", op, team.Operator)
		}
	}
	_, err := parse(t, "agents:\n  - model: sim\n    sandbox: docker\n", Options{})
	if err == nil || !strings.Contains(err.Error(), "bubblewrap (the default) or none") {
		t.Fatalf("sandbox: docker gave %v; want it refused with the choices", err)
	}
}

func TestMCPServersAreReadInEitherShapeAndChecked(t *testing.T) {
	team := mustParse(t, `agents:
  - model: sim
    mcp_servers:
      docs: {type: streamable-http, url: "https://docs.example/mcp", headers: {Authorization: "Bearer ${DOCS_TOKEN}"}}
      files: {type: stdio, command: ./srv, args: [--root, .]}
`)
	got := team.Agents[0].Tools.MCPServers
	if len(got) != 2 || got["docs"].Headers["Authorization"] != "Bearer ${DOCS_TOKEN}" || got["files"].Args[1] != "." {
		t.Fatalf("servers %+v", got)
	}
	if !slices.Contains(team.Operator, "agents[0].mcp_servers") {
		t.Fatalf("mcp_servers is not operator-only: %v", team.Operator)
	}
	for _, bad := range []string{
		"agents:\n  - model: sim\n    mcp_servers: {x: {type: stdio}}\n",
		"agents:\n  - model: sim\n    mcp_servers: [{type: stdio, command: a}]\n",
		"agents:\n  - model: sim\n    mcp_servers: {x: {type: ftp, url: ftp://a}}\n",
	} {
		if _, err := parse(t, bad, Options{}); err == nil || !strings.Contains(err.Error(), "mcp_servers") {
			t.Errorf("%q gave %v; want a problem naming mcp_servers", bad, err)
		}
	}
}

func TestWebSearchWhereTheAPIHasNoneIsNotedAsNotHonoured(t *testing.T) {
	team := mustParse(t, `agents:
  - model: grok/grok-4
    web_search: true
  - model: gemini/gemini-2.5-flash
    web_search: true
  - model: gemini/gemini-3-flash-preview
    web_search: true
  - model: openai/gpt-5-mini
    web_search: true
`)
	var keys []string
	for _, n := range team.Ignored {
		keys = append(keys, n.Key)
	}
	if strings.Join(keys, ",") != "agents[0].web_search,agents[1].web_search" {
		t.Fatalf("noted %v; want grok's (Chat Completions) and Gemini 2.5's web_search, not Gemini 3's or OpenAI's", keys)
	}
	if w := team.Warning(); !strings.Contains(w, "Chat Completions, which has no web search tool") {
		t.Fatalf("warning %q", w)
	}
}

// mcp_servers are honoured on every agent: an API agent's tool loop calls
// them, a CLI agent (codex, claude_code, gemini_cli) calls them through its
// workflow server. Nothing is noted, and both keep their servers.
func TestMCPServersOnAPIAndCLIAgentsAreHonoured(t *testing.T) {
	team := mustParse(t, `agents:
  - model: codex
    mcp_servers:
      notes: {type: stdio, command: notes-server}
  - model: openai/gpt-5-mini
    mcp_servers:
      notes: {type: stdio, command: notes-server}
`)
	if len(team.Ignored) != 0 {
		t.Fatalf("noted %+v; want nothing", team.Ignored)
	}
	for i, a := range team.Agents {
		if a.Tools == nil || len(a.Tools.MCPServers) != 1 {
			t.Errorf("agent %d's servers %v; want them as written", i, a.Tools)
		}
	}
}
