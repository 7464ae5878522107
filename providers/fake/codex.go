package fake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// isCodex tells a request of the Codex CLI (its originator header) from an
// SDK's.
func isCodex(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Originator"), "codex")
}

// NewCodex returns the Responses fake as the Codex CLI meets it (NewAll
// routes Codex's requests here by its originator header). Codex offers MCP
// tools only through its client-side tool_search, so on a turn's first
// request the fake searches (a tool_search_call), and once the search output
// lists the workflow namespace (mcp__workflow) it plays the model's script
// reply with the workflow tools and the vote enum the server offered:
// new_answer and vote become namespaced function calls, write_files an
// apply_patch custom tool call, shell an exec_command call; once a workflow
// call has returned, the model ends its turn with a final message. Error
// kinds (status, stream_error, stall) and text play as in NewResponses.
func NewCodex(s *Script) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isModelsList(r) {
			oaiListModels(w, r, s)
			return
		}
		c, q, ok := oaiRead(w, r, "codex")
		if !ok {
			return
		}
		turn := codexTurnOf(q.Input)
		offered := codexOffered(c.Body)
		if offered.found {
			// Some models get the MCP tools in the request's tools (a
			// namespace), with no tool search first.
			turn.found, turn.tools, turn.enum = true, offered.tools, offered.enum
		}
		own := s.ownUsage()
		rr := respReply{rep: Reply{Usage: own}, c: c, id: oaiID("resp_fake_"), created: time.Now().Unix()}
		switch {
		case turn.answered != "":
			rr.rep = Reply{Kind: ReplyText, Content: cliFinalText(turn.answered), Usage: own}
		case !turn.found && turn.searched:
			// The CLI has no workflow server: a model would say so and stop.
			rr.rep = Reply{Kind: ReplyText, Content: "FAKE_FINAL: no " + WorkflowServer + " tools to call.", Usage: own}
		case !turn.found:
			rr.streamItems(w, r, []map[string]any{{"type": "tool_search_call", "id": oaiID("ts_"), "call_id": oaiID("call_"),
				"execution": "client", "status": "completed", "arguments": map[string]any{"query": WorkflowServer + " new_answer vote"}}})
			return
		default:
			c.Tools, c.VoteEnum = turn.tools, turn.enum
			rr.c = c
			rr.rep = s.Next(c)
			if !oaiWait(r, rr.rep.Delay) {
				return
			}
		}
		items, ok := codexItems(rr.rep, offered.applyPatch)
		if !ok {
			if !oaiKnown(rr.rep.Kind) {
				oaiUnknown(w, rr.rep.Kind)
				return
			}
			rr.stream(w, r) // text and the error kinds
			return
		}
		rr.streamItems(w, r, items)
	})
}

// codexTurn is what the current turn's input says: the workflow tools its
// tool search found and whether a workflow call has returned.
type codexTurn struct {
	searched bool // a tool search returned in this turn
	found    bool // … and listed the workflow namespace
	tools    []string
	enum     []string
	answered string // the workflow tool whose output closes the input
}

// codexTurnOf reads the items after the last user message: the tool search
// output that lists the workflow namespace, and whether the input ends with
// the output of a workflow call.
func codexTurnOf(input json.RawMessage) codexTurn {
	var items []struct {
		Type      string           `json:"type"`
		Role      string           `json:"role"`
		CallID    string           `json:"call_id"`
		Name      string           `json:"name"`
		Namespace string           `json:"namespace"`
		Tools     []codexToolGroup `json:"tools"`
	}
	var t codexTurn
	if json.Unmarshal(input, &items) != nil {
		return t
	}
	start := 0
	for i, it := range items {
		if it.Type == "message" && it.Role == "user" {
			start = i + 1
		}
	}
	calls := map[string]string{} // call_id → workflow tool
	for _, it := range items[start:] {
		switch it.Type {
		case "tool_search_output":
			t.searched = true
			for _, ns := range it.Tools {
				if ns.Name != "mcp__"+WorkflowServer {
					continue
				}
				t.found = true
				t.tools, t.enum = ns.workflow()
			}
		case "function_call":
			if w, ok := workflowName(it.Name); ok && it.Namespace == "mcp__"+WorkflowServer {
				calls[it.CallID] = w
			}
		}
	}
	if n := len(items); n > start {
		if last := items[n-1]; last.Type == "function_call_output" {
			t.answered = calls[last.CallID]
		}
	}
	return t
}

// codexItems renders the replies only Codex plays as output items; false for
// the kinds NewResponses renders (text, errors).
// A write_files reply is an apply_patch call when the request offers that
// tool, else a shell command that writes each file (the models Codex gives
// no apply_patch tool edit through exec_command).
func codexItems(rep Reply, applyPatch bool) ([]map[string]any, bool) {
	call := func(name, namespace, args string) []map[string]any {
		it := map[string]any{"type": "function_call", "id": oaiID("fc_"), "call_id": oaiID("call_"), "name": name,
			"arguments": args, "status": "completed"}
		if namespace != "" {
			it["namespace"] = namespace
		}
		return []map[string]any{it}
	}
	switch rep.Kind {
	case ReplyNewAnswer, ReplyVote, ReplyMalformedArgs:
		c, _ := oaiCallOf(rep)
		return call(c.name, "mcp__"+WorkflowServer, c.args), true
	case ReplyToolCall:
		// Codex offers an MCP server's tools in the server's namespace.
		if name, ok := strings.CutPrefix(rep.Tool, "mcp__"+WorkflowServer+"__"); ok {
			return call(name, "mcp__"+WorkflowServer, string(rep.Input)), true
		}
		return call(rep.Tool, "", string(rep.Input)), true
	case ReplyShell:
		args, _ := json.Marshal(map[string]string{"cmd": rep.Content})
		return call("exec_command", "", string(args)), true
	case ReplyWriteFiles:
		if !applyPatch {
			args, _ := json.Marshal(map[string]string{"cmd": shellWrites(filesOf(rep))})
			return call("exec_command", "", string(args)), true
		}
		return []map[string]any{{"type": "custom_tool_call", "id": oaiID("ctc_"), "call_id": oaiID("call_"),
			"name": "apply_patch", "input": addFilePatch(filesOf(rep)), "status": "completed"}}, true
	}
	return nil, false
}

// streamItems streams a response made of the given output items, with the
// reply's usage.
func (rr *respReply) streamItems(w http.ResponseWriter, r *http.Request, items []map[string]any) {
	out, _ := json.Marshal(items)
	if !rr.c.Stream {
		oaiWriteJSON(w, http.StatusOK, rr.response("completed", items, rr.usageJSON(string(out))))
		return
	}
	sse := oaiStartSSE(w)
	sse.event("response.created", map[string]any{"response": rr.response("in_progress", nil, nil)})
	sse.event("response.in_progress", map[string]any{"response": rr.response("in_progress", nil, nil)})
	for i, it := range items {
		rr.streamItem(sse, i, it)
	}
	sse.event("response.completed", map[string]any{"response": rr.response("completed", items, rr.usageJSON(string(out)))})
}

// codexToolGroup is a tool or a namespace of tools as Codex sends them: in
// a request's tools, or listed by a tool search's output.
type codexToolGroup struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Tools []struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"tools"`
}

// workflow names the tools of a workflow namespace and the vote's enum.
func (g codexToolGroup) workflow() (tools, enum []string) {
	for _, tool := range g.Tools {
		tools = append(tools, tool.Name)
		if tool.Name == "vote" {
			enum = voteEnumOf(tool.Parameters)
		}
	}
	return tools, enum
}

// codexOffer is what a Codex request's own tools hold: the workflow
// namespace (its tools and the vote enum) and whether apply_patch is one.
type codexOffer struct {
	found      bool
	tools      []string
	enum       []string
	applyPatch bool
}

func codexOffered(body []byte) codexOffer {
	var q struct {
		Tools []codexToolGroup `json:"tools"`
	}
	var o codexOffer
	if json.Unmarshal(body, &q) != nil {
		return o
	}
	for _, t := range q.Tools {
		switch {
		case t.Name == "apply_patch":
			o.applyPatch = true
		case t.Type == "namespace" && t.Name == "mcp__"+WorkflowServer:
			o.found = true
			o.tools, o.enum = t.workflow()
		}
	}
	return o
}

// shellWrites is a shell command that writes each file whole.
func shellWrites(files []fileArg) string {
	var b strings.Builder
	for i, f := range files {
		if i > 0 {
			b.WriteString(" && ")
		}
		fmt.Fprintf(&b, "mkdir -p \"$(dirname '%s')\" && cat > '%s' <<'MASSGEN_FAKE_EOF'\n%sMASSGEN_FAKE_EOF\n", f.Path, f.Path, f.Content)
	}
	return b.String()
}
