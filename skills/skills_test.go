package skills_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/mcp/install"
	"github.com/massgen-go/massgen-mcp/providers/backends"
	"github.com/massgen-go/massgen-mcp/skills"
)

// schema is the part of a JSON schema the check needs.
type schema struct {
	Properties map[string]*schema `json:"properties"`
	Items      *schema            `json:"items"`
}

// toolsList asks a real server for tools/list over an in-process client.
func toolsList(t *testing.T) map[string]*schema {
	t.Helper()
	svc := coordination.NewService(memstore.New(), coordination.Options{Open: backends.Open, Logger: zerolog.Nop()})
	c, err := client.NewInProcessClient(mcp.New(svc, mcp.Options{}).MCPServer())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcpgo.InitializeRequest
	init.Params.ClientInfo = mcpgo.Implementation{Name: "skills-test", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	res, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*schema{}
	for _, tool := range res.Tools {
		raw := tool.RawInputSchema
		if raw == nil {
			raw, _ = json.Marshal(tool.InputSchema)
		}
		var s schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		tools[tool.Name] = &s
	}
	return tools
}

// callPattern is how the texts write a tool call: `tool{arg, arg: value}`.
var callPattern = regexp.MustCompile("`([a-z][a-z_]*)\\{([^`]*)\\}`")

// mcpName is a tool named the way Claude Code spells it.
var mcpName = regexp.MustCompile(`mcp__massgen__([a-z_]+)`)

// checkCalls returns every tool or argument a text names that tools/list
// does not have, and the tools it calls.
func checkCalls(text string, tools map[string]*schema) (problems []string, called []string) {
	for _, m := range callPattern.FindAllStringSubmatch(text, -1) {
		name, args := m[1], m[2]
		s, ok := tools[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s is not a tool (in %s)", name, m[0]))
			continue
		}
		called = append(called, name)
		for _, p := range checkArgs(name, args, s) {
			problems = append(problems, p+" (in "+m[0]+")")
		}
	}
	for _, m := range mcpName.FindAllStringSubmatch(text, -1) {
		if _, ok := tools[m[1]]; !ok {
			problems = append(problems, m[0]+" is not a tool")
		}
	}
	return problems, called
}

var argKey = regexp.MustCompile(`^[a-z_]+$`)

// checkArgs checks a comma-separated argument list against a schema;
// values that are objects or lists of objects are checked against the
// nested schema.
func checkArgs(where, args string, s *schema) []string {
	var problems []string
	for _, part := range splitTop(args) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, val, _ := strings.Cut(part, ":")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !argKey.MatchString(key) {
			problems = append(problems, fmt.Sprintf("%s: %q is not an argument name", where, key))
			continue
		}
		sub, ok := s.Properties[key]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s has no argument %s", where, key))
			continue
		}
		switch {
		case strings.HasPrefix(val, "[{") && strings.HasSuffix(val, "}]") && sub.Items != nil:
			problems = append(problems, checkArgs(where+"."+key+"[]", val[2:len(val)-2], sub.Items)...)
		case strings.HasPrefix(val, "{") && strings.HasSuffix(val, "}"):
			problems = append(problems, checkArgs(where+"."+key, val[1:len(val)-1], sub)...)
		}
	}
	return problems
}

// splitTop splits on commas outside brackets and quotes.
func splitTop(s string) []string {
	var parts []string
	depth, quote, start := 0, false, 0
	for i, r := range s {
		switch {
		case r == '"':
			quote = !quote
		case quote:
		case r == '{' || r == '[':
			depth++
		case r == '}' || r == ']':
			depth--
		case r == ',' && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

func TestEveryToolAndArgumentTheSkillsNameExists(t *testing.T) {
	tools := toolsList(t)
	if len(tools) < 9 {
		t.Fatalf("tools/list has %d tools", len(tools))
	}
	calledAnywhere := map[string]bool{}
	err := fs.WalkDir(skills.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		data, err := fs.ReadFile(skills.FS(), p)
		if err != nil {
			return err
		}
		problems, called := checkCalls(string(data), tools)
		for _, pr := range problems {
			t.Errorf("%s: %s", p, pr)
		}
		for _, c := range called {
			calledAnywhere[c] = true
		}
		if path.Base(p) == "SKILL.md" && len(called) == 0 {
			t.Errorf("%s names no tool call", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every tool the server lists, apply_changes included: a tool no skill
	// shows is one an outer agent finds only by reading the schema.
	for want := range tools {
		if !calledAnywhere[want] {
			t.Errorf("no skill shows how to call %s", want)
		}
	}
}

func TestTheCheckCatchesAWrongToolOrArgument(t *testing.T) {
	tools := toolsList(t)
	for _, text := range []string{"`run_team{tsk}`", "`start_team{agents: [{id, modle}]}`", "`team_stauts{session_id}`", "mcp__massgen__run_teams", "`step{session_id, agent_id, action: \"vote\", targt}`"} {
		if problems, _ := checkCalls(text, tools); len(problems) == 0 {
			t.Errorf("%s passed the check", text)
		}
	}
	if problems, _ := checkCalls("`start_team{task, agents: [{id, model, system_message}], max_rounds: 3}`", tools); len(problems) > 0 {
		t.Errorf("a right call failed: %v", problems)
	}
}

// nameRule is the Agent Skills rule for a skill's name.
var nameRule = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func TestEverySkillHasFrontMatterAndItsLinksResolve(t *testing.T) {
	names := skills.Names()
	if strings.Join(names, ",") != "checkpoint,massgen-run,team-run" {
		t.Fatalf("skills: %v", names)
	}
	link := regexp.MustCompile(`\]\(([^)#]+)\)`)
	for _, name := range names {
		data, err := fs.ReadFile(skills.FS(), name+"/SKILL.md")
		if err != nil {
			t.Fatal(err)
		}
		s, err := skills.Parse(string(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Name != name || !nameRule.MatchString(s.Name) || len(s.Name) > 64 {
			t.Errorf("%s: name %q must be the directory's name, lower-case words joined by -", name, s.Name)
		}
		if s.Description == "" || len(s.Description) > 1024 || !strings.Contains(s.Description, "Use when") {
			t.Errorf("%s: the description must say what it does and when to use it, in at most 1024 characters (%d)", name, len(s.Description))
		}
		for _, m := range link.FindAllStringSubmatch(s.Body, -1) {
			target := path.Clean(path.Join(name, m[1]))
			if _, err := fs.Stat(skills.FS(), target); err != nil {
				t.Errorf("%s links to %s, which is not in skills/", name, m[1])
			}
		}
	}
	for _, cmd := range []string{"run", "team", "status"} {
		data, err := fs.ReadFile(skills.FS(), "commands/"+cmd+".md")
		if err != nil {
			t.Fatalf("the /massgen:%s command: %v", cmd, err)
		}
		if flat := strings.Join(strings.Fields(string(data)), " "); !strings.Contains(flat, "$ARGUMENTS") || !strings.Contains(flat, "not installed") {
			t.Errorf("commands/%s.md must pass $ARGUMENTS and say what to do when the server is not installed", cmd)
		}
	}
}

// TestThePluginPointsIntoSkills pins the Claude Code plugin to this
// directory: its skills and commands live here, and the marketplace entry
// declares the same server as plugin.json (claude plugin details reads it
// from there).
func TestThePluginPointsIntoSkills(t *testing.T) {
	var plugin struct {
		Name       string          `json:"name"`
		Skills     []string        `json:"skills"`
		Commands   []string        `json:"commands"`
		MCPServers json.RawMessage `json:"mcpServers"`
	}
	var market struct {
		Plugins []struct {
			Name       string          `json:"name"`
			Source     string          `json:"source"`
			MCPServers json.RawMessage `json:"mcpServers"`
		} `json:"plugins"`
	}
	for path, v := range map[string]any{"../.claude-plugin/plugin.json": &plugin, "../.claude-plugin/marketplace.json": &market} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if plugin.Name != "massgen" || strings.Join(plugin.Skills, ",") != "./skills/" || strings.Join(plugin.Commands, ",") != "./skills/commands/" {
		t.Fatalf("plugin.json: %+v", plugin)
	}
	if len(market.Plugins) != 1 || market.Plugins[0].Name != "massgen" || market.Plugins[0].Source != "./" {
		t.Fatalf("marketplace.json: %+v", market)
	}
	var a, b any
	json.Unmarshal(plugin.MCPServers, &a)
	json.Unmarshal(market.Plugins[0].MCPServers, &b)
	// The exported variable tells the server it came from the plugin
	// (install.BesidePlugin); set in the script, since Claude Code's
	// handling of an "env" block has varied between versions.
	if !reflect.DeepEqual(a, b) || !strings.Contains(string(plugin.MCPServers), "export "+install.PluginEnv+"=1; exec massgen-mcp serve") || !strings.Contains(string(plugin.MCPServers), "not installed") {
		t.Fatalf("the two server definitions differ or do not run massgen-mcp from PATH with a message when it is missing:\n%s\n%s", plugin.MCPServers, market.Plugins[0].MCPServers)
	}
}

// presentedBy says who won or was voted for by alias ("voted for agent2"):
// what a skill must never show a person.
var presentedBy = regexp.MustCompile(`(?i)(voted for|vote for|wins|won|winner is|winner:) \[?agent\d`)

// TestTheSkillsPresentAgentsByIdAndTranslateAliases: where a skill tells
// the outer agent how to present a team, it names agents by id and model and
// translates the aliases the agents' own words use; no example names an
// agent by its alias.
func TestTheSkillsPresentAgentsByIdAndTranslateAliases(t *testing.T) {
	for _, p := range []string{"massgen-run/SKILL.md", "team-run/SKILL.md", "commands/status.md"} {
		data, err := fs.ReadFile(skills.FS(), p)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(data)), " ")
		for _, want := range []string{"id and model", "translate"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s does not say to name agents %q", p, want)
			}
		}
	}
	err := fs.WalkDir(skills.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		data, err := fs.ReadFile(skills.FS(), p)
		if err != nil {
			return err
		}
		if m := presentedBy.FindString(strings.Join(strings.Fields(string(data)), " ")); m != "" {
			t.Errorf("%s names an agent by alias where a person reads: %q", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTheSkillsThatApplySayWhatEachRefusalMeans: every skill that tells the
// model to call apply_changes says what to do with each refusal it can
// give — a changed project (apply_conflict) and held tool configuration
// (config_held, answered by tool_config) — so a model led by either skill
// never retries blindly or applies a CI workflow unasked.
func TestTheSkillsThatApplySayWhatEachRefusalMeans(t *testing.T) {
	for _, p := range []string{"massgen-run/SKILL.md", "team-run/references/building.md"} {
		data, err := fs.ReadFile(skills.FS(), p)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(data)), " ")
		for _, want := range []string{"apply_conflict", "config_held", `tool_config: "include"`, `tool_config: "skip"`, "changes.config"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s does not say %q", p, want)
			}
		}
	}
}
