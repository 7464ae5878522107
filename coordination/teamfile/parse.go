package teamfile

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
	"github.com/massgen-go/massgen-mcp/providers"
)

// maxNodes bounds the nodes a file may expand to, aliases included, so a
// "billion laughs" file is refused instead of walked.
const maxNodes = 100_000

// parser walks a YAML document node by node, so every message can name the
// key and the line and none names a Go type.
type parser struct {
	file    string
	errs    []string
	team    *Team
	nodes   int
	massgen bool // a MassGen-only key was seen
	unknown []unknownKey
	// webSearch is the current agent's web_search key and its path as the
	// file writes it (enable_web_search in MassGen's backend:), for the
	// check that its backend has a web search tool (tools.go).
	webSearch    *yaml.Node
	webSearchKey string
	// teamPerms is the team's `permissions:`, laid under every agent's at
	// the end (permissions.go).
	teamPerms permissions.Rules
}

// unknownKey is a key in no table; whether it is an error depends on the
// file's format, known only at the end.
type unknownKey struct {
	key  string
	line int
}

func newParser(file string) *parser {
	return &parser{file: file, team: &Team{Format: FormatOurs}}
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.errs = append(p.errs, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
}

func (p *parser) ignore(key string, n *yaml.Node, effect string) {
	p.team.Ignored = append(p.team.Ignored, Note{Key: key, Line: n.Line, Effect: effect})
}

// operator records an operator-only setting by its path in the file
// (agents[0].backend.base_url), the way Ignored names keys, so the two lists
// speak of the same things.
func (p *parser) operator(key string) {
	if !slices.Contains(p.team.Operator, key) {
		p.team.Operator = append(p.team.Operator, key)
	}
}

// dropIgnoredOperators keeps Operator to the settings that take effect: a
// key noted as not honoured (web_search on a backend with no search tool)
// was recorded as operator-only before the note, and a reader must not find
// it under both "accepted" and "not honoured".
func (p *parser) dropIgnoredOperators() {
	p.team.Operator = slices.DeleteFunc(p.team.Operator, func(key string) bool {
		return slices.ContainsFunc(p.team.Ignored, func(n Note) bool { return n.Key == key })
	})
}

func (p *parser) parse(data []byte) *Team {
	if len(data) > MaxFileBytes {
		p.errs = append(p.errs, "the file is larger than 1 MiB; a team file is a few kilobytes")
		return p.team
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if err.Error() == "EOF" {
			p.errs = append(p.errs, "the file is empty; list the team's agents, e.g. agents: [{model: sim}, {model: sim}]")
			return p.team
		}
		p.errs = append(p.errs, "not valid YAML: "+strings.TrimPrefix(err.Error(), "yaml: "))
		return p.team
	}
	root := p.deref(&doc)
	if root == nil {
		return p.team
	}
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = p.deref(root.Content[0])
	}
	if root == nil || root.Kind != yaml.MappingNode {
		p.errf(root, "a team file is a mapping with agents: (or MassGen's agent:) at the top")
		return p.team
	}
	p.top(root)
	p.layPermissions()
	if p.massgen {
		p.team.Format = FormatMassGen
	}
	for _, u := range p.unknown {
		if p.massgen {
			p.team.Ignored = append(p.team.Ignored, Note{Key: u.key, Line: u.line})
		} else {
			p.errs = append(p.errs, fmt.Sprintf("line %d: unknown key %s; %s", u.line, keyName(u.key), "a massgen-mcp team file has agents, rules, context and eval_criteria (or write MassGen's own config)"))
		}
	}
	if len(p.team.Agents) == 0 && len(p.errs) == 0 {
		p.errf(root, "the file lists no agents; add agents: [{model: sim}, {model: sim}] or MassGen's agents: [{id, backend: {type, model}}]")
	}
	p.checkRules(root)
	p.dropIgnoredOperators()
	return p.team
}

// deref follows aliases and counts nodes against maxNodes.
func (p *parser) deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > 100 {
			return nil
		}
		n = n.Alias
	}
	p.nodes++
	if p.nodes > maxNodes {
		if p.nodes == maxNodes+1 {
			p.errs = append(p.errs, "the file expands to more than 100000 YAML nodes (aliases included); a team file is small")
		}
		return nil
	}
	return n
}

// each calls fn for every key of a mapping, refusing duplicate keys and
// non-string keys.
func (p *parser) each(n *yaml.Node, where string, fn func(key string, k, v *yaml.Node)) {
	if n == nil {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.errf(n, "%s must be a mapping of keys to values", where)
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := p.deref(n.Content[i]), p.deref(n.Content[i+1])
		if k == nil || v == nil {
			return
		}
		if k.Kind != yaml.ScalarNode {
			p.errf(k, "%s has a key that is not a name", where)
			continue
		}
		if seen[k.Value] {
			p.errf(k, "%s.%s is set twice", where, k.Value)
			continue
		}
		seen[k.Value] = true
		fn(k.Value, k, v)
	}
}

// plainKey is a key path as the parser writes it: names, [N] and dots.
var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+(\[[0-9]+\])?(\.[A-Za-z0-9_-]+(\[[0-9]+\])?)*$`)

// keyName is a key path for a message: as is when plain, quoted otherwise,
// so a key made of odd characters reads as the file's text, not as the
// message's.
func keyName(k string) string {
	if plainKey.MatchString(k) {
		return k
	}
	return strconv.Quote(k)
}

// unknownOr records a key no table names: a near miss of a known key is a
// typo (always an error); otherwise it depends on the file's format.
func (p *parser) unknownOr(where, key string, k *yaml.Node, known []string) {
	full := key
	if where != "" {
		full = where + "." + key
	}
	if s := closest(key, known); s != "" {
		p.errf(k, "unknown key %s; did you mean %s?", keyName(full), s)
		return
	}
	p.unknown = append(p.unknown, unknownKey{key: full, line: k.Line})
}

var topKeys = []string{"permissions", "agents", "agent", "rules", "context", "apply", "eval_criteria", "orchestrator", "timeout_settings", "ui", "logging", "memory", "hooks", "global_hooks", "session_storage", "subagents"}

// massgenTop are MassGen's top-level keys we do not read, with what they do.
var massgenTop = map[string]string{
	"ui":              "configured MassGen's terminal display",
	"logging":         "configured MassGen's log files",
	"memory":          "given the agents MassGen's long-term memory",
	"hooks":           "run MassGen hooks around tool calls",
	"global_hooks":    "run MassGen hooks around tool calls",
	"session_storage": "stored MassGen's session registry elsewhere",
	"subagents":       "let agents spawn MassGen subagents",
}

func (p *parser) top(root *yaml.Node) {
	p.each(root, "", func(key string, k, v *yaml.Node) {
		switch key {
		case "agents":
			if v.Kind != yaml.SequenceNode {
				p.errf(v, "agents must be a list, e.g. agents: [{model: sim}, {model: sim}]")
				return
			}
			for i, a := range v.Content {
				if a = p.deref(a); a != nil {
					p.agent(a, fmt.Sprintf("agents[%d]", i))
				}
			}
		case "agent":
			p.massgen = true
			p.agent(v, "agent")
		case "rules":
			p.rules(v)
		case "context":
			p.context(v)
		case "apply":
			p.apply(v)
		case "eval_criteria":
			p.evalCriteria(v)
		case "orchestrator":
			p.massgen = true
			p.orchestrator(v)
		case "timeout_settings":
			p.massgen = true
			p.timeouts(v, "timeout_settings")
		case "permissions":
			p.permissions(&p.teamPerms, v, "permissions")
		default:
			if effect, ok := massgenTop[key]; ok {
				p.massgen = true
				p.ignore(key, k, effect)
				return
			}
			p.unknownOr("", key, k, topKeys)
		}
	})
}

var agentKeys = []string{"id", "model", "backend", "system_message", "temperature", "max_output_tokens", "reasoning_effort", "web_search", "voting_sensitivity",
	"allowed_tools", "exclude_tools", "sandbox", "network", "mcp_servers", "api_key_env", "permissions", "price_in", "price_out"}

func (p *parser) agent(n *yaml.Node, where string) {
	var a coordination.Agent
	var b backendSpec
	hasModel, hasBackend := false, false
	// Whether the file gave each price, valid or not: a bad one is
	// reported by itself, not again as missing.
	hasIn, hasOut := false, false
	p.webSearch, p.webSearchKey = nil, ""
	p.each(n, where, func(key string, k, v *yaml.Node) {
		switch key {
		case "id":
			a.ID = p.str(v, where+".id")
		case "model":
			hasModel = true
			a.Model = p.str(v, where+".model")
		case "backend":
			hasBackend = true
			p.massgen = true
			b = p.backend(v, where+".backend", &a)
		case "system_message":
			a.SystemMessage = p.str(v, where+".system_message")
		case "temperature":
			a.Temperature = p.temperature(v, where+".temperature")
		case "max_output_tokens":
			a.MaxOutputTokens = p.positiveInt(v, where+".max_output_tokens")
		case "reasoning_effort":
			a.ReasoningEffort = p.effort(v, where+".reasoning_effort")
		case "web_search", "allowed_tools", "exclude_tools", "sandbox", "network", "mcp_servers":
			p.agentTool(&a, key, v, where+"."+key)
		case "api_key_env":
			p.keyEnv(&a, v, where+".api_key_env")
		case "price_in":
			hasIn, a.PriceIn = true, p.price(v, where+".price_in")
		case "price_out":
			hasOut, a.PriceOut = true, p.price(v, where+".price_out")
		case "permissions":
			if a.Tools == nil {
				a.Tools = &coordination.AgentTools{}
			}
			r := permissions.Rules{}
			p.permissions(&r, v, where+".permissions")
			a.Tools.Permissions = &r
		case "voting_sensitivity":
			p.massgen = true
			p.ignore(where+".voting_sensitivity", k, "changed how readily this agent votes instead of answering")
		default:
			p.unknownOr(where, key, k, agentKeys)
		}
	})
	switch {
	case hasModel && hasBackend:
		p.errf(n, "%s has both model and backend; give one (model: openai/gpt-5.4, or MassGen's backend: {type, model})", where)
		return
	case hasBackend:
		if b.spec == "" {
			return // the backend's own error was reported
		}
		a.Model = b.spec
	case a.Model == "": // absent, or present but empty (model: with no value)
		p.errf(n, "%s has no model; add model: sim (or MassGen's backend: {type: openai, model: gpt-5.4})", where)
		return
	}
	if a.Model != "" {
		if _, err := providers.ParseSpec(a.Model); err != nil {
			p.errf(n, "%s: %v", where, err)
			return
		}
	}
	p.checkWebSearch(a)
	if !p.checkKeyEnv(a, where, n) || !p.checkPrices(a, where, n, hasIn, hasOut) {
		return
	}
	// Every agent of a team file is the operator's: its base URL needs no
	// allow-list entry, and gets a key only through api_key_env.
	a.Operator = true
	p.team.Agents = append(p.team.Agents, a)
}

// context reads our format's context list: text strings, {text} or {path,
// permission}.
func (p *parser) context(n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		p.errf(n, "context must be a list of text blocks or {path: FILE} entries")
		return
	}
	for i, item := range n.Content {
		item = p.deref(item)
		if item == nil {
			return
		}
		where := fmt.Sprintf("context[%d]", i)
		if item.Kind == yaml.ScalarNode {
			p.team.Context = append(p.team.Context, item.Value)
			continue
		}
		var text string
		var cp ContextPath
		p.each(item, where, func(key string, k, v *yaml.Node) {
			switch key {
			case "text":
				text = p.str(v, where+".text")
			case "path":
				cp.Path = p.str(v, where+".path")
			case "permission":
				cp.Permission = p.permission(v, where+".permission")
			case "protected_paths":
				cp.Protected = p.strs(v, where+".protected_paths")
			default:
				p.unknownOr(where, key, k, []string{"text", "path", "permission", "protected_paths"})
			}
		})
		switch {
		case text != "" && cp.Path != "":
			p.errf(item, "%s has both text and path; give one", where)
		case text != "":
			p.team.Context = append(p.team.Context, text)
		case cp.Path != "":
			p.addContextPath(cp, item, where+".path")
		default:
			p.errf(item, "%s is empty; give text or path", where)
		}
	}
}

// apply reads the operator's apply mode for a write context: auto writes
// the winner's changes as the session finishes; preview (the default)
// leaves them for apply_changes.
func (p *parser) apply(v *yaml.Node) {
	if !p.scalar(v, "apply", "auto or preview") {
		return
	}
	switch v.Value {
	case coordination.ApplyAuto, coordination.ApplyPreview:
		p.team.Apply = v.Value
		p.operator("apply")
	default:
		p.errf(v, "apply is %q; write auto (the winner's changes go into the write context as the session finishes) or preview (the default: they wait for apply_changes)", v.Value)
	}
}

func (p *parser) addContextPath(cp ContextPath, n *yaml.Node, key string) {
	if cp.Permission == "" {
		cp.Permission = "read"
	}
	cp.Line = n.Line
	p.operator(key)
	p.team.ContextPaths = append(p.team.ContextPaths, cp)
}

// --- scalars, each with its own message ---

func (p *parser) scalar(v *yaml.Node, key, want string) bool {
	if v.Kind != yaml.ScalarNode {
		p.errf(v, "%s must be %s", key, want)
		return false
	}
	return true
}

func (p *parser) str(v *yaml.Node, key string) string {
	if !p.scalar(v, key, "text") {
		return ""
	}
	if v.Tag == "!!null" {
		return ""
	}
	return v.Value
}

// strs reads a list of text items.
func (p *parser) strs(v *yaml.Node, key string) []string {
	if v.Kind != yaml.SequenceNode {
		p.errf(v, "%s must be a list of paths", key)
		return nil
	}
	var out []string
	for i, item := range v.Content {
		out = append(out, p.str(item, fmt.Sprintf("%s[%d]", key, i)))
	}
	return out
}

func (p *parser) bool(v *yaml.Node, key string) bool {
	if !p.scalar(v, key, "true or false") {
		return false
	}
	b, err := strconv.ParseBool(v.Value)
	if v.Tag != "!!bool" || err != nil {
		p.errf(v, "%s must be true or false, not %q", key, v.Value)
		return false
	}
	return b
}

func (p *parser) number(v *yaml.Node, key string) (float64, bool) {
	if !p.scalar(v, key, "a number") {
		return 0, false
	}
	if v.Tag != "!!int" && v.Tag != "!!float" {
		p.errf(v, "%s must be a number, not %q", key, v.Value)
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(v.Value, "_", ""), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		if i, ierr := strconv.ParseInt(strings.ReplaceAll(v.Value, "_", ""), 0, 64); ierr == nil {
			return float64(i), true
		}
		p.errf(v, "%s must be a finite number, not %q", key, v.Value)
		return 0, false
	}
	return f, true
}

func (p *parser) integer(v *yaml.Node, key string) (int64, bool) {
	if !p.scalar(v, key, "a whole number") {
		return 0, false
	}
	i, err := strconv.ParseInt(strings.ReplaceAll(v.Value, "_", ""), 0, 64)
	if v.Tag != "!!int" || err != nil {
		p.errf(v, "%s must be a whole number, not %q", key, v.Value)
		return 0, false
	}
	return i, true
}

func (p *parser) positiveInt(v *yaml.Node, key string) int {
	i, ok := p.integer(v, key)
	if !ok {
		return 0
	}
	if i < 1 || i > math.MaxInt32 {
		p.errf(v, "%s must be between 1 and %d, not %d", key, math.MaxInt32, i)
		return 0
	}
	return int(i)
}

func (p *parser) seconds(v *yaml.Node, key string) float64 {
	f, ok := p.number(v, key)
	if !ok {
		return 0
	}
	if f <= 0 || f > 7*24*3600 {
		p.errf(v, "%s must be more than 0 and at most 604800 (a week), not %g", key, f)
		return 0
	}
	return f
}

func (p *parser) temperature(v *yaml.Node, key string) *float64 {
	f, ok := p.number(v, key)
	if !ok {
		return nil
	}
	if f < 0 || f > 2 {
		p.errf(v, "%s must be between 0 and 2, not %g", key, f)
		return nil
	}
	return &f
}

func (p *parser) effort(v *yaml.Node, key string) string {
	s := p.str(v, key)
	switch s {
	case "", "minimal", "low", "medium", "high":
		return s
	}
	p.errf(v, "%s must be one of minimal, low, medium, high, not %q", key, s)
	return ""
}

func (p *parser) permission(v *yaml.Node, key string) string {
	s := p.str(v, key)
	switch s {
	case "", "read", "write":
		return s
	}
	p.errf(v, "%s must be read or write, not %q", key, s)
	return ""
}

// checkRules reports what Rules.Normalize would refuse, in the file's terms.
func (p *parser) checkRules(root *yaml.Node) {
	if _, err := p.team.Rules.Normalize(); err != nil {
		msg := strings.TrimPrefix(err.Error(), coordination.ErrBadSettings.Error()+": ")
		p.errf(root, "the rules are not valid: %s", msg)
	}
}

// closest is a known key within two edits of key, or "".
func closest(key string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if k == key {
			return ""
		}
		if d := editDistance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	if len(key) <= 3 && bestD > 1 {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance of two short keys; long ones are
// never near misses (and never cost a big table).
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	return providers.EditDistance(a, b)
}
