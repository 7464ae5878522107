package teamfile

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// backendSpec is what a MassGen backend block resolves to.
type backendSpec struct {
	spec string // backend/model[@base_url]
}

// massgenTypes maps MassGen's backend types onto our backend names; a type
// missing here is refused with the list.
var massgenTypes = map[string]string{
	"openai":       "openai",
	"claude":       "claude",
	"anthropic":    "claude",
	"gemini":       "gemini",
	"grok":         "grok",
	"azure_openai": "azure_openai",
	"claude_code":  "claude_code",
	"codex":        "codex",
	"gemini_cli":   "gemini_cli",
	"lmstudio":     "lmstudio",
	"vllm":         "vllm",
	"sglang":       "sglang",
	"ollama":       "ollama",
	"openrouter":   "openrouter",
	"together":     "together",
	"groq":         "groq",
	"cerebras":     "cerebras",
	"fireworks":    "fireworks",
	"deepseek":     "deepseek",
	"sim":          "sim",
	"host":         "host",
	"human":        "human",
	// chatcompletion is resolved from its base_url (chatCompletionBackend).
	"chatcompletion": "",
}

// chatCompletionHosts names the backend a MassGen chatcompletion base_url
// stands for.
var chatCompletionHosts = map[string]string{
	"openrouter.ai":       "openrouter",
	"api.together.xyz":    "together",
	"api.groq.com":        "groq",
	"api.cerebras.ai":     "cerebras",
	"api.fireworks.ai":    "fireworks",
	"api.deepseek.com":    "deepseek",
	"api.x.ai":            "grok",
	"api.openai.com":      "openai",
	"api.anthropic.com":   "claude",
	"localhost":           "vllm",
	"127.0.0.1":           "vllm",
	"generativelanguage.": "gemini",
}

var backendKeys = []string{"type", "model", "temperature", "max_tokens", "reasoning", "text", "base_url", "api_key", "api_key_env",
	"cwd", "mcp_servers", "allowed_tools", "exclude_tools", "disallowed_tools", "enable_web_search", "enable_code_execution",
	"enable_code_interpreter", "enable_mcp_command_line", "command_line_execution_mode", "permission_mode", "top_p",
	"max_thinking_tokens", "append_system_prompt", "upload_files", "enable_image_generation", "context_paths"}

// backendIgnored are backend keys we read and do not honour, with what they
// would have done. None is listed as operator-only: a setting that takes no
// effect is only "not honoured", whatever it would have touched.
var backendIgnored = map[string]string{
	"cwd":                         "run the agent in that working directory (here each agent works in its own workspace, agents/<id>/workspace of the session)",
	"enable_code_execution":       "let the agent run code in the provider's sandbox",
	"enable_code_interpreter":     "let the agent run code in the provider's sandbox",
	"enable_mcp_command_line":     "let the agent run shell commands",
	"command_line_execution_mode": "chosen where the agent's shell commands run",
	"permission_mode":             "set the CLI agent's permission mode",
	"top_p":                       "set nucleus sampling",
	"max_thinking_tokens":         "capped the model's thinking tokens",
	"append_system_prompt":        "appended to the CLI agent's system prompt (use system_message)",
	"upload_files":                "uploaded files to the provider",
	"enable_image_generation":     "let the agent generate images",
	"context_paths":               "shown those paths to this agent only (use orchestrator.context_paths)",
}

func (p *parser) backend(n *yaml.Node, where string, a *coordination.Agent) backendSpec {
	var typ, model, baseURL string
	p.each(n, where, func(key string, k, v *yaml.Node) {
		full := where + "." + key
		switch key {
		case "type":
			typ = p.str(v, full)
		case "model":
			model = p.str(v, full)
		case "temperature":
			a.Temperature = p.temperature(v, full)
		case "max_tokens":
			a.MaxOutputTokens = p.positiveInt(v, full)
		case "base_url":
			baseURL = p.str(v, full)
			p.operator(full)
		case "allowed_tools", "exclude_tools", "disallowed_tools", "mcp_servers":
			p.agentTool(a, key, v, full)
		case "enable_web_search":
			p.agentTool(a, "web_search", v, full)
		case "api_key":
			p.errf(v, "%s: keys never go in a team file; remove it and set the provider's variable (e.g. OPENAI_API_KEY) in the environment, ./.env or ~/.env, or name another variable with api_key_env", full)
		case "api_key_env":
			p.keyEnv(a, v, full)
		case "reasoning":
			p.each(v, full, func(key string, k, v *yaml.Node) {
				switch key {
				case "effort":
					a.ReasoningEffort = p.effort(v, full+".effort")
				case "summary":
					p.ignore(full+".summary", k, "asked the model for reasoning summaries")
				default:
					p.unknownOr(full, key, k, []string{"effort", "summary"})
				}
			})
		case "text":
			p.each(v, full, func(key string, k, v *yaml.Node) {
				switch key {
				case "verbosity":
					p.str(v, full+".verbosity")
					p.ignore(full+".verbosity", k, "asked the model for "+v.Value+" verbosity")
				default:
					p.unknownOr(full, key, k, []string{"verbosity"})
				}
			})
		default:
			if effect, ok := backendIgnored[key]; ok {
				p.ignore(full, k, effect)
				return
			}
			p.unknownOr(where, key, k, backendKeys)
		}
	})
	if typ == "" {
		p.errf(n, "%s has no type; add type: openai (or claude, gemini, grok, …)", where)
		return backendSpec{}
	}
	name, ok := massgenTypes[typ]
	if !ok {
		names := make([]string, 0, len(massgenTypes))
		for t := range massgenTypes {
			names = append(names, t)
		}
		slices.Sort(names)
		p.errf(n, "%s.type %q is not a backend massgen-mcp runs; use one of %s", where, typ, strings.Join(names, ", "))
		return backendSpec{}
	}
	if typ == "chatcompletion" {
		if name = chatCompletionBackend(baseURL); name == "" {
			p.errf(n, "%s: type chatcompletion with base_url %q: name the provider instead (type: openrouter, together, groq, cerebras, fireworks, deepseek, vllm, …)", where, baseURL)
			return backendSpec{}
		}
	}
	info, _ := providers.LookupBackend(name)
	if model == "" {
		model = info.DefaultModel
	}
	spec := name
	if model != "" {
		spec += "/" + model
	}
	if baseURL != "" {
		if !info.AcceptsBaseURL {
			p.errf(n, "%s: the %s backend takes no base_url", where, name)
			return backendSpec{}
		}
		spec += "@" + baseURL
	}
	return backendSpec{spec: spec}
}

// chatCompletionBackend names our backend for a MassGen chatcompletion
// base_url, or "".
func chatCompletionBackend(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return ""
	}
	host := u.Hostname()
	for h, name := range chatCompletionHosts {
		if host == h || (strings.HasSuffix(h, ".") && strings.HasPrefix(host, h)) {
			return name
		}
	}
	return ""
}

var orchestratorKeys = []string{"context_paths", "max_new_answers_per_agent", "timeout_settings", "final_answer_strategy",
	"skip_final_presentation", "voting_sensitivity", "answer_novelty_requirement", "defer_voting_until_all_answered",
	"coordination", "max_new_answers_global", "fairness_enabled", "fairness_lead_cap_answers", "skip_coordination_rounds",
	"skip_voting", "disable_injection", "debug_final_answer", "voting_threshold", "snapshot_storage",
	"agent_temporary_workspace", "session_storage", "enable_agent_task_planning", "broadcast"}

// orchestratorIgnored are orchestrator keys we do not honour.
var orchestratorIgnored = map[string]string{
	"max_new_answers_global":     "capped the answers of the whole team",
	"fairness_enabled":           "held back agents that answer far ahead of their peers",
	"fairness_lead_cap_answers":  "capped how far ahead of its peers an agent may answer",
	"skip_coordination_rounds":   "skipped coordination and presented one answer",
	"skip_voting":                "ended once every agent answered, without votes",
	"disable_injection":          "stopped telling busy agents about new answers mid-step",
	"debug_final_answer":         "replaced the final answer with a debug text",
	"voting_threshold":           "set the checklist-gated pass threshold",
	"snapshot_storage":           "kept workspace snapshots in that directory",
	"agent_temporary_workspace":  "kept the agents' temporary workspaces in that directory",
	"session_storage":            "stored MassGen's session registry elsewhere",
	"enable_agent_task_planning": "given agents a task-planning tool",
	"broadcast":                  "let agents ask each other questions mid-step",
}

// coordinationIgnored are orchestrator.coordination keys, all unhonoured.
var coordinationIgnored = map[string]string{
	"write_mode":                    "chosen how the winner's files are written back (worktree, copy, …)",
	"checkpoint_enabled":            "let a main agent call checkpoint mid-run (use the checkpoint tool instead)",
	"checkpoint_mode":               "chosen the in-run checkpoint mode",
	"checkpoint_guidance":           "added checkpoint guidance to the main agent's prompt",
	"checkpoint_gated_patterns":     "gated those tool calls behind a checkpoint",
	"checklist_criteria_inline":     "set checklist criteria (use eval_criteria on run_team or start_team)",
	"enable_planning_mode":          "made agents plan before acting",
	"max_orchestration_restarts":    "restarted the whole coordination on failure",
	"use_skills":                    "loaded MassGen skills into the agents",
	"skills_directory":              "loaded MassGen skills from that directory",
	"enable_memory_filesystem_mode": "given agents a memory directory",
	"standalone_checkpoint":         "run an in-session standalone checkpoint",
}

func (p *parser) orchestrator(n *yaml.Node) {
	r := &p.team.Rules
	p.each(n, "orchestrator", func(key string, k, v *yaml.Node) {
		full := "orchestrator." + key
		switch key {
		case "context_paths":
			p.contextPaths(v, full)
		case "max_new_answers_per_agent":
			r.MaxAnswersPerAgent = p.positiveInt(v, full)
		case "timeout_settings":
			p.timeouts(v, full)
		case "final_answer_strategy":
			switch s := p.str(v, full); s {
			case "winner_reuse":
				r.Final = coordination.FinalWinner
			case "winner_present":
				r.Final = coordination.FinalPresent
			case "synthesize":
				r.Final = coordination.FinalSynthesize
			default:
				p.errf(v, "%s must be winner_reuse, winner_present or synthesize, not %q", full, s)
			}
		case "skip_final_presentation":
			if p.bool(v, full) && r.Final == "" {
				r.Final = coordination.FinalWinner
			}
		case "voting_sensitivity":
			// lenient is MassGen's default and what our voters are told.
			if s := p.str(v, full); s != "lenient" {
				p.ignore(full, k, "made voters "+s+" about what deserves a vote")
			}
		case "answer_novelty_requirement":
			// lenient is MassGen's default: only exact duplicates are refused,
			// as here.
			if s := p.str(v, full); s != "lenient" {
				p.ignore(full, k, "refused new answers too similar to existing ones ("+s+")")
			}
		case "defer_voting_until_all_answered":
			// The round-0 barrier always defers votes until every agent has
			// a first answer.
			if !p.bool(v, full) {
				p.ignore(full+": false", k, "let agents vote before every agent had answered (here they never do)")
			}
		case "coordination":
			p.each(v, full, func(key string, k, v *yaml.Node) {
				if effect, ok := coordinationIgnored[key]; ok {
					p.ignore(full+"."+key, k, effect)
					return
				}
				p.unknownOr(full, key, k, nil)
			})
		default:
			if effect, ok := orchestratorIgnored[key]; ok {
				p.ignore(full, k, effect)
				return
			}
			p.unknownOr("orchestrator", key, k, orchestratorKeys)
		}
	})
}

// timeouts maps MassGen's timeout_settings: the orchestrator timeout is our
// session timeout; a round is one agent's turn, our step.
func (p *parser) timeouts(n *yaml.Node, where string) {
	r := &p.team.Rules
	p.each(n, where, func(key string, k, v *yaml.Node) {
		full := where + "." + key
		switch key {
		case "orchestrator_timeout_seconds":
			r.TimeoutSeconds = p.seconds(v, full)
		case "initial_round_timeout_seconds", "subsequent_round_timeout_seconds":
			if s := p.seconds(v, full); s > r.StepTimeoutSeconds {
				r.StepTimeoutSeconds = s
			}
		case "round_timeout_grace_seconds":
			p.ignore(full, k, "given agents a grace period after the round timeout")
		default:
			p.unknownOr(where, key, k, []string{"orchestrator_timeout_seconds", "initial_round_timeout_seconds", "subsequent_round_timeout_seconds", "round_timeout_grace_seconds"})
		}
	})
}

// contextPaths reads MassGen's context_paths: [{path, permission}].
func (p *parser) contextPaths(n *yaml.Node, where string) {
	if n.Kind != yaml.SequenceNode {
		p.errf(n, "%s must be a list of {path, permission: read|write}", where)
		return
	}
	for i, item := range n.Content {
		item = p.deref(item)
		if item == nil {
			return
		}
		w := fmt.Sprintf("%s[%d]", where, i)
		var cp ContextPath
		p.each(item, w, func(key string, k, v *yaml.Node) {
			switch key {
			case "path":
				cp.Path = p.str(v, w+".path")
			case "permission":
				cp.Permission = p.permission(v, w+".permission")
			case "protected_paths":
				cp.Protected = p.strs(v, w+".protected_paths")
			default:
				p.unknownOr(w, key, k, []string{"path", "permission", "protected_paths"})
			}
		})
		if cp.Path == "" {
			p.errf(item, "%s has no path", w)
			continue
		}
		p.addContextPath(cp, item, w+".path")
	}
}

var ruleKeys = []string{"consensus", "max_rounds", "max_answers_per_agent", "timeout_seconds", "step_timeout_seconds",
	"cost_budget_usd", "token_budget", "max_agent_failures", "final", "answer_format", "early_stop", "aliases",
	"rotate_own_last", "blind_first", "peer_answer_token_cap", "max_tool_calls_per_step", "strict", "weights", "dominant_stop"}

// rules reads our format's rules mapping (the keys of docs/DESIGN.md, "Sessions and their rules").
func (p *parser) rules(n *yaml.Node) {
	r := &p.team.Rules
	p.each(n, "rules", func(key string, k, v *yaml.Node) {
		full := "rules." + key
		switch key {
		case "consensus":
			r.Consensus = coordination.ConsensusRule(p.str(v, full))
		case "max_rounds":
			r.MaxRounds = p.positiveInt(v, full)
		case "max_answers_per_agent":
			r.MaxAnswersPerAgent = p.positiveInt(v, full)
		case "timeout_seconds":
			r.TimeoutSeconds = p.seconds(v, full)
		case "step_timeout_seconds":
			r.StepTimeoutSeconds = p.seconds(v, full)
		case "cost_budget_usd":
			if f, ok := p.number(v, full); ok {
				if f <= 0 {
					p.errf(v, "%s must be more than 0, not %g", full, f)
				} else {
					r.CostBudgetUSD = &f
				}
			}
		case "token_budget":
			if i, ok := p.integer(v, full); ok {
				if i <= 0 {
					p.errf(v, "%s must be more than 0, not %d", full, i)
				} else {
					r.TokenBudget = &i
				}
			}
		case "max_agent_failures":
			r.MaxAgentFailures = p.positiveInt(v, full)
		case "final":
			r.Final = coordination.FinalStrategy(p.str(v, full))
		case "answer_format":
			r.AnswerFormat = coordination.AnswerFormat(p.str(v, full))
		case "early_stop":
			r.EarlyStop = p.bool(v, full)
		case "aliases", "labels": // labels: the rule's name before the rename
			r.Aliases = p.str(v, full)
		case "rotate_own_last":
			b := p.bool(v, full)
			r.RotateOwnLast = &b
		case "blind_first":
			b := p.bool(v, full)
			r.BlindFirst = &b
		case "peer_answer_token_cap":
			r.PeerAnswerTokenCap = p.positiveInt(v, full)
		case "max_tool_calls_per_step":
			r.MaxToolCallsPerStep = p.positiveInt(v, full)
		case "strict":
			r.Strict = p.bool(v, full)
		case "weights":
			// Checked against the team's agents and the weighted rule when the
			// session is created (Rules.Validate), like every rule.
			var ws []coordination.VoteWeight
			if err := v.Decode(&ws); err != nil {
				p.errf(v, "%s must be a list of {agent_id, weight, reason}: %v", full, err)
			} else {
				r.Weights = ws
			}
		case "dominant_stop":
			r.DominantStop = p.bool(v, full)
		default:
			if s := closest(key, ruleKeys); s != "" {
				p.errf(k, "unknown rule %s; did you mean %s?", full, s)
				return
			}
			p.errf(k, "unknown rule %s; the rules are %s", full, strings.Join(ruleKeys, ", "))
		}
	})
}
