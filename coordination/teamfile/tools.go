package teamfile

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/tools"
)

// agentTool reads one of an agent's tool settings (coordination.AgentTools):
// web_search (MassGen's enable_web_search), allowed_tools, exclude_tools
// (MassGen's disallowed_tools too), sandbox (bubblewrap, the default, or
// none) and network. Each is operator-only.
func (p *parser) agentTool(a *coordination.Agent, key string, v *yaml.Node, full string) {
	if a.Tools == nil {
		a.Tools = &coordination.AgentTools{}
	}
	t := a.Tools
	switch key {
	case "web_search":
		t.WebSearch = p.bool(v, full)
		p.webSearch, p.webSearchKey = v, full
	case "allowed_tools":
		t.Allowed = append(t.Allowed, p.toolNames(v, full)...)
	case "exclude_tools", "disallowed_tools":
		t.Excluded = append(t.Excluded, p.toolNames(v, full)...)
	case "sandbox":
		switch s := p.str(v, full); s {
		case "none":
			t.NoSandbox = true
		case "bubblewrap", "":
		default:
			p.errf(v, "%s is %q; it is bubblewrap (the default) or none (commands run unconfined in the workspace)", full, s)
		}
	case "network":
		t.Network = p.bool(v, full)
	case "mcp_servers":
		p.mcpServers(t, v, full)
	}
	p.operator(full)
}

// checkWebSearch notes web_search on a backend whose API has no web search
// tool the adapters use: Chat Completions, and Gemini before 3 (which
// refuses Google Search beside function calling). CLI agents search with
// their own tools.
func (p *parser) checkWebSearch(a coordination.Agent) {
	if a.Tools == nil || !a.Tools.WebSearch || p.webSearch == nil {
		return
	}
	sp, err := providers.ParseSpec(a.Model)
	if err != nil {
		return
	}
	info, _ := providers.LookupBackend(sp.Backend)
	switch {
	case info.Transport == providers.TransportChatCompletions:
		p.ignore(p.webSearchKey, p.webSearch, "let the agent search the web; "+sp.Backend+" speaks Chat Completions, which has no web search tool")
	case info.Transport == providers.TransportGenerateContent && strings.HasPrefix(strings.TrimPrefix(sp.Model, "models/"), "gemini-2"):
		p.ignore(p.webSearchKey, p.webSearch, "let the agent search the web; Gemini 2.x cannot use Google Search beside function calling (Gemini 3 can)")
	}
}

// serverShape says what an MCP server entry looks like.
const serverShape = "each server is {type: stdio, command, args, env} or {type: streamable-http, url, headers}"

// yamlTypeInto is the Go type a YAML decode error names ("… into
// tools.MCPServer"), which means nothing to the file's author.
var yamlTypeInto = regexp.MustCompile(`cannot unmarshal (!!\w+) (.*) into \S+`)

// yamlProblem is a decode error in the file's own terms: its lines, the YAML
// value found, and no Go types or YAML tags.
func yamlProblem(err error) string {
	msgs := []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = yamlTypeInto.ReplaceAllStringFunc(m, func(s string) string {
			g := yamlTypeInto.FindStringSubmatch(s)
			kind, ok := yamlKinds[g[1]]
			if !ok {
				kind = "the value"
			}
			return fmt.Sprintf("%s %s is not what goes here", kind, g[2])
		})
	}
	return strings.Join(out, "; ")
}

// yamlKinds names YAML's tags as a file's author knows them.
var yamlKinds = map[string]string{
	"!!int": "the number", "!!float": "the number", "!!str": "the text", "!!bool": "the value",
	"!!seq": "a list", "!!map": "a mapping", "!!null": "an empty value", "!!binary": "the value", "!!timestamp": "the date",
}

// mcpServers reads MassGen's mcp_servers: a map {name: {type, command,
// args, env, url, headers, …}} or a list of the same with a name each.
func (p *parser) mcpServers(t *coordination.AgentTools, v *yaml.Node, full string) {
	servers := map[string]tools.MCPServer{}
	switch v.Kind {
	case yaml.MappingNode:
		if err := v.Decode(&servers); err != nil {
			p.errf(v, "%s: %s; %s", full, yamlProblem(err), serverShape)
			return
		}
	case yaml.SequenceNode:
		for i, item := range v.Content {
			var named struct {
				Name            string `yaml:"name"`
				tools.MCPServer `yaml:",inline"`
			}
			if err := item.Decode(&named); err != nil {
				p.errf(item, "%s[%d]: %s; %s", full, i, yamlProblem(err), serverShape)
				return
			}
			if named.Name == "" {
				p.errf(item, "%s[%d] has no name; give each server a name (its tools are offered as mcp__<name>__<tool>)", full, i)
				return
			}
			if _, dup := servers[named.Name]; dup {
				p.errf(item, "%s: two servers are named %s", full, named.Name)
				return
			}
			servers[named.Name] = named.MCPServer
		}
	default:
		p.errf(v, "%s must map server names to servers; %s", full, serverShape)
		return
	}
	if err := tools.ValidateMCPServers(servers); err != nil {
		p.errf(v, "%v", err)
		return
	}
	if t.MCPServers == nil {
		t.MCPServers = map[string]coordination.MCPServer{}
	}
	for n, s := range servers {
		t.MCPServers[n] = coordination.MCPServer(s) // the session's plain settings: the same fields
	}
}

// toolNames reads a list of tool names.
func (p *parser) toolNames(v *yaml.Node, full string) []string {
	if v.Kind != yaml.SequenceNode {
		p.errf(v, "%s must be a list of tool names, e.g. [read_file, search]", full)
		return nil
	}
	var out []string
	for i, item := range v.Content {
		if name := p.str(item, fmt.Sprintf("%s[%d]", full, i)); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// Unconfined names the agents whose commands run without the sandbox
// (sandbox: none), for the warning the loaders print.
func (t *Team) Unconfined() []string {
	var ids []string
	for i, a := range t.Agents {
		if a.Tools != nil && a.Tools.NoSandbox {
			id := a.ID
			if id == "" {
				id = fmt.Sprintf("agents[%d]", i)
			}
			ids = append(ids, id)
		}
	}
	return ids
}
