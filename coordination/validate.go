package coordination

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
	"github.com/massgen-go/massgen-mcp/providers"
)

// maxAttempts is how often a model may try to produce a valid workflow call
// in one step before the step is recorded as bad_output.
const maxAttempts = 3

// decision is a validated workflow call.
type decision struct {
	Kind        EntryKind // answer or vote
	Content     string
	Target      string // real agent id
	TargetLabel string
	Reason      string
	// files an answer delivers (files.go)
	Files []workspace.NewFile
	// a review's answer (review.go)
	Plan     json.RawMessage
	Verdict  string
	Concerns []string
}

// validate checks a reply against what the view allowed. The problem it
// returns is written to be sent back to the model as is.
func validate(s *Session, st *State, v *view, reply providers.Action) (decision, string) {
	if len(reply.Calls) == 0 {
		return decision{}, fmt.Sprintf("You did not call a workflow tool. Finish by calling exactly one of: %s.", strings.Join(v.Actions, ", "))
	}
	if len(reply.Calls) > 1 {
		names := make([]string, len(reply.Calls))
		for i, c := range reply.Calls {
			names[i] = c.Name
		}
		return decision{}, fmt.Sprintf("Call exactly one workflow tool; you called %d (%s). Choose one.", len(names), strings.Join(names, ", "))
	}
	call := reply.Calls[0]
	if !containsString(v.Actions, call.Name) {
		return decision{}, fmt.Sprintf("%q is not available in this step; call %s.", call.Name, strings.Join(v.Actions, " or "))
	}
	switch call.Name {
	case providers.ToolNewAnswer:
		if s.IsReview() {
			return checkReview(s, v, call.Args)
		}
		var args struct {
			Content *string `json:"content"`
		}
		if err := json.Unmarshal(call.Args, &args); err != nil || args.Content == nil {
			return decision{}, `new_answer needs a JSON object {"content": "<your complete answer>"}.`
		}
		files, prob := answerFiles(s, call.Args)
		if prob != "" {
			return decision{}, prob
		}
		d, prob := checkAnswer(v, *args.Content, len(files) > 0)
		d.Files = files
		return d, prob
	case providers.ToolVote:
		var args struct {
			AgentID string `json:"agent_id"`
			Reason  string `json:"reason"`
		}
		if err := json.Unmarshal(call.Args, &args); err != nil {
			return decision{}, `vote needs a JSON object {"agent_id": "agentN", "reason": "<why>"}.`
		}
		return checkVote(st, v, args.AgentID, args.Reason)
	}
	return decision{}, fmt.Sprintf("unknown tool %q", call.Name)
}

// checkAnswer refuses an empty answer and, after the blind first step, an
// answer that repeats one the agent was shown.
func checkAnswer(v *view, content string, files bool) (decision, string) {
	if strings.TrimSpace(content) == "" {
		return decision{}, "new_answer needs non-empty content: write your complete answer."
	}
	if !v.Blind && !files { // new files make a new deliverable, whatever the text says
		norm := collapseSpace(content)
		for _, a := range v.Shown {
			if collapseSpace(a.Content) == norm {
				return decision{}, fmt.Sprintf("that is already %s's answer — vote for it", a.Alias)
			}
		}
	}
	return decision{Kind: KindAnswer, Content: content}, ""
}

// checkVote resolves a target (an alias or a label) to a real agent that has an answer
// in the view. A vote names what the voter saw: "agent2" means the label the
// view showed for agent2, and "agent2.k" is accepted only if it is that label
// (an older or unknown answer of agent2 is refused, never counted for its
// newest one).
func checkVote(st *State, v *view, target, reason string) (decision, string) {
	n, k, ok := parseAlias(target)
	name := Alias(n)
	if !ok || !containsString(v.VoteEnum, name) {
		return decision{}, fmt.Sprintf("Invalid agent_id %q. Valid agents: %s.", target, strings.Join(v.VoteEnum, ", "))
	}
	shown := v.seenLabel(name)
	if k != 0 && AnswerLabel(n, k) != shown {
		return decision{}, fmt.Sprintf("%s is not the answer your view showed for %s, which is %s — vote %s or %s", AnswerLabel(n, k), name, shown, name, shown)
	}
	a := st.AgentByAlias(n)
	return decision{Kind: KindVote, Target: a.ID, TargetLabel: shown, Reason: strings.TrimSpace(reason)}, ""
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
