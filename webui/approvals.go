package webui

import (
	"context"
	"net/http"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
)

// approval is an agent's ask waiting for a person (the permission file
// handshake, docs/DESIGN.md "Permissions"), as the page lists it.
type approval struct {
	ID     string `json:"id"`
	Agent  string `json:"agent"`
	Tool   string `json:"tool"`
	Action string `json:"action"`
	Risk   string `json:"risk"`
	Rule   string `json:"rule"`
	// Command is the whole command a yes runs, of which Action is the part
	// that asked; "" when the call is its action alone.
	Command string `json:"command,omitempty"`
	Expires string `json:"expires"`
}

// pendingApprovals lists a session's asks waiting for a person; none when
// its store keeps no handshake. A request being written is skipped by
// permissions.Pending and shows with the next change.
func pendingApprovals(ctx context.Context, svc *coordination.Service, id string) []approval {
	out := []approval{}
	pending, _ := svc.PendingApprovals(ctx, id)
	for _, r := range pending {
		// A right-to-left override or a newline in a command would reorder
		// or hide what the page shows. The ask's action, rule and command
		// were Shown where it was made, so they are Screened here (Shown
		// again would double their backslashes); its agent and tool were not.
		out = append(out, approval{ID: r.ID, Agent: permissions.Shown(r.Agent), Tool: permissions.Shown(r.Tool), Action: r.Action.Screened(), Risk: string(r.Risk),
			Rule: permissions.Screened(r.Rule), Command: permissions.Screened(r.Command), Expires: r.Expires.UTC().Format(time.RFC3339)})
	}
	return out
}

// decisionsShown is how many of the latest permission decisions the page
// lists, as status does.
const decisionsShown = 10

// permissionLog is the session's permission audit as the page shows it:
// the counts (PermissionCounts' line) and the latest decisions that were
// not plain allows, oldest first, with who answered each ask.
type permissionLog struct {
	Summary   string     `json:"summary"`
	Decisions []decision `json:"decisions"`
}

type decision struct {
	At      string `json:"at"`
	Agent   string `json:"agent"`
	Outcome string `json:"outcome"`
	Action  string `json:"action"`
	Rule    string `json:"rule"`
	By      string `json:"by,omitempty"`
}

// permissionAudit reads the session's permissions.jsonl (masked as it was
// written); nil when the session made no decision and asks nothing.
func permissionAudit(ctx context.Context, svc *coordination.Service, id string) *permissionLog {
	c, err := svc.CountPermissions(ctx, id)
	if err != nil || c.Decisions+c.Pending == 0 {
		return nil
	}
	out := &permissionLog{Summary: c.String(), Decisions: []decision{}}
	recs, _ := svc.PermissionLog(ctx, id)
	var shown []permissions.Record
	for i := len(recs) - 1; i >= 0 && len(shown) < decisionsShown; i-- {
		if recs[i].Notable() {
			shown = append(shown, recs[i])
		}
	}
	for i := len(shown) - 1; i >= 0; i-- {
		r := shown[i]
		out.Decisions = append(out.Decisions, decision{At: r.Time.UTC().Format("15:04:05Z"), Agent: permissions.Shown(r.Agent), Outcome: string(r.Outcome),
			Action: r.Action.Shown(), Rule: permissions.Shown(r.Rule), By: permissions.Shown(r.By)})
	}
	return out
}

// webAnswerer is who answered, as permissions.jsonl records it ("file
// handshake (web)").
const webAnswerer = "web"

// answerAsk answers a pending ask as `massgen-mcp approve|deny` does
// (Service.Approve, the file handshake's response). The session must be the
// login's tenant's: another tenant's is not found, as a missing one.
func (h *Handler) answerAsk(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	svc := h.host.RequestService(ctx)
	id, request := r.PathValue("id"), r.PathValue("request")
	approve := false
	switch r.PathValue("answer") {
	case "approve":
		approve = true
	case "deny":
	default:
		http.NotFound(w, r)
		return
	}
	if _, err := svc.Inspect(ctx, id); err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := svc.Approve(ctx, id, request, approve, webAnswerer); err != nil {
		h.writeError(w, r, err)
		return
	}
	word := map[bool]string{true: "approved", false: "refused"}[approve]
	h.opts.Logger.Info().Str("session", id).Str("request", request).Str("answer", word).Msg("an ask was answered from the web view")
	writeJSON(w, map[string]string{"request": request, "answer": word})
}
