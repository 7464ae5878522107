package chatapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// Host is what the surface asks of the server it is served beside
// (mcp.Server has these methods): the request's tenant's service, opened by
// the guards; a new session's team, built with the operator-only rule and
// the text caps of run_team; the usable team files; a run slot under the
// server's and the tenant's caps.
type Host interface {
	RequestService(ctx context.Context) *coordination.Service
	TeamSpec(team, task string, context []string) (coordination.TeamSpec, error)
	TeamNames() []string
	// TeamProblem says why the team file NAME cannot be used, the
	// server's paths hidden; "" when it can, or there is none.
	TeamProblem(name string) string
	AcquireRun(ctx context.Context) (release func(), err error)
}

// DefaultModel is the model name of the default team; DefaultModel + "/"
// + NAME names the team file NAME.yaml under --teams-dir.
const DefaultModel = "massgen"

// Options configure the surface.
type Options struct {
	// KeepAlive is the longest silence on a stream before a comment line
	// keeps proxies from closing it (default 15 s).
	KeepAlive time.Duration
	Logger    zerolog.Logger
}

// Handler serves /v1/chat/completions and /v1/models. Mount it at "/v1/"
// behind the server's guards (mcp.Surface).
type Handler struct {
	host Host
	opts Options
}

// New returns the surface over host.
func New(host Host, o Options) *Handler {
	if o.KeepAlive <= 0 {
		o.KeepAlive = 15 * time.Second
	}
	return &Handler{host: host, opts: o}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route := map[string]string{"/v1/chat/completions": http.MethodPost, "/v1/models": http.MethodGet}
	want, ok := route[r.URL.Path]
	id, one := strings.CutPrefix(r.URL.Path, "/v1/models/")
	if one {
		want, ok = http.MethodGet, true
	}
	switch {
	case !ok:
		refusal(http.StatusNotFound, "invalid_request_error", "unknown_url", "",
			fmt.Sprintf("%s is not served here; this server answers POST /v1/chat/completions, GET /v1/models and GET /v1/models/{model}", r.URL.Path)).write(w)
	case r.Method != want:
		w.Header().Set("Allow", want)
		refusal(http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", "",
			fmt.Sprintf("%s takes %s, not %s", r.URL.Path, want, r.Method)).write(w)
	case one:
		h.model(w, h.host.RequestService(r.Context()), id)
	case want == http.MethodGet:
		h.models(w, h.host.RequestService(r.Context()))
	default:
		h.complete(w, r)
	}
}

// modelNames are the names a request may use: the default team first,
// when the server has one (a provider key it can use), then each usable
// team file.
func (h *Handler) modelNames(svc *coordination.Service) []string {
	var names []string
	if _, err := svc.DefaultTeam(); err == nil {
		names = append(names, DefaultModel)
	}
	for _, t := range h.host.TeamNames() {
		names = append(names, DefaultModel+"/"+t)
	}
	return names
}

func (h *Handler) models(w http.ResponseWriter, svc *coordination.Service) {
	list := modelList{Object: "list", Data: []model{}}
	for _, n := range h.modelNames(svc) {
		list.Data = append(list.Data, model{ID: n, Object: "model", OwnedBy: "massgen-mcp"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

// model answers GET /v1/models/{id} (models.retrieve): the model object of
// a listed name (a team file's holds a slash, sent as is or escaped: the
// path is read decoded), else 404 model_not_found.
func (h *Handler) model(w http.ResponseWriter, svc *coordination.Service, id string) {
	if !slices.Contains(h.modelNames(svc), id) {
		name := id
		if len(name) > 120 {
			name = name[:120] + "…"
		}
		refusal(http.StatusNotFound, "invalid_request_error", "model_not_found", "model",
			fmt.Sprintf("the model %q does not exist here; %s (GET /v1/models lists them)", name, offeredTeams(h.modelNames(svc)))).write(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(model{ID: id, Object: "model", OwnedBy: "massgen-mcp"})
}

// team is the team a model name picks: "" for the default team, else a team
// file's name. Anything else is refused listing the choices. The default
// team is taken here even on a server that has none, since a request that
// names a stored session resumes it without one; creating a session with
// it is refused then (noDefaultTeam).
func (h *Handler) team(svc *coordination.Service, name string) (string, error) {
	if name == DefaultModel {
		return "", nil
	}
	names := h.modelNames(svc)
	if slices.Contains(names, name) {
		return strings.TrimPrefix(name, DefaultModel+"/"), nil
	}
	offered := offeredTeams(names)
	if team, ok := strings.CutPrefix(name, DefaultModel+"/"); ok {
		// A file the operator put there but that cannot be used is not
		// "missing": its problem is what the operator has to mend.
		if problem := h.host.TeamProblem(team); problem != "" {
			return "", refusal(http.StatusNotFound, "invalid_request_error", "model_not_found", "model",
				fmt.Sprintf("the team file %s.yaml under --teams-dir cannot be used: %s; its operator has to mend it; %s (GET /v1/models lists them)", team, problem, offered))
		}
	}
	shown := name
	if len(shown) > 120 {
		shown = shown[:120] + "…"
	}
	return "", refusal(http.StatusNotFound, "invalid_request_error", "model_not_found", "model",
		fmt.Sprintf("the model %q does not exist here: a model names a team — %s is the default team, %s/NAME a team file the operator put under --teams-dir; %s (GET /v1/models lists them)",
			shown, DefaultModel, DefaultModel, offered))
}

// offeredTeams says which model names a server offers.
func offeredTeams(names []string) string {
	if len(names) == 0 {
		return "this server offers none: it has no default team and its operator has put no team file under --teams-dir"
	}
	return "this server offers " + strings.Join(names, ", ")
}

// noDefaultTeam refuses a new session of the default team on a server
// that has none (a 404, not the 500 of a team that could not be made).
func (h *Handler) noDefaultTeam(svc *coordination.Service) error {
	return refusal(http.StatusNotFound, "invalid_request_error", "model_not_found", "model",
		fmt.Sprintf("this server has no default team: its operator has set no provider key it can use (list_backends says which); ask for a team file instead, %s/NAME: %s (GET /v1/models lists them)",
			DefaultModel, offeredTeams(h.modelNames(svc))))
}

// budgetRefusal words the refusal of a team whose budget cannot pay for one
// round (ErrBudgetTooSmall) or whose cost budget cannot price an agent
// (ErrUnpriced) for a chat client, under MCP's codes for them; nil for any
// other error. The core's advice is for a caller who sets the budget, which
// a chat client cannot: the team file (or the default team) is the
// operator's, so the message says what the operator can change there and
// what the client can do now, another team.
func (h *Handler) budgetRefusal(svc *coordination.Service, err error, team string) *httpError {
	var be *coordination.BudgetError
	if !errors.As(err, &be) {
		return nil
	}
	var code, fix string
	switch be.Cause {
	case coordination.ErrUnpriced:
		code, fix = "unpriced_agent", "give the agent price_in and price_out (USD per 1M tokens), or set token_budget instead of cost_budget_usd"
	case coordination.ErrBudgetTooSmall:
		code, fix = "budget_too_small", "raise cost_budget_usd or token_budget, set max_output_tokens on the agents, or use fewer agents"
	default:
		return nil
	}
	// The facts without the core's advice, which is for a caller who sets
	// the budget.
	fact := svc.HidePaths(be.Cause.Error() + ": " + strings.Join(be.Facts, "; "))
	where := fmt.Sprintf("the team file %s.yaml under --teams-dir", team)
	if team == "" {
		where = "the server's default team"
	}
	return refusal(http.StatusBadRequest, "invalid_request_error", code, "model",
		fmt.Sprintf("%s; a request cannot change this: the server's operator sets the budget and the agents in %s, and can %s there; meanwhile ask another team: %s (GET /v1/models lists them)",
			fact, where, fix, offeredTeams(h.modelNames(svc))))
}
