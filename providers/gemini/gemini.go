package gemini

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/genai"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

// DefaultBaseURL is the Gemini API's address, set explicitly when the
// endpoint names none so that GOOGLE_GEMINI_BASE_URL (which genai would read
// itself) never takes effect behind the providers layer's back.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/"

// provider is one Gemini model behind one API key.
type provider struct {
	client  *genai.Client
	backend string
	model   string
	key     string // kept only to scrub it from error text
	schemas schemaCache
}

// New returns the Provider for a resolved Gemini endpoint. The genai client
// reads nothing from the environment: key, backend, base URL, API version and
// HTTP client come from ep alone.
func New(ep providers.Endpoint) (providers.Provider, error) {
	if strings.TrimSpace(ep.Model) == "" {
		return nil, fmt.Errorf("%w: gemini needs a model name, e.g. gemini/gemini-2.5-flash", providers.ErrBadSpec)
	}
	if ep.APIKey == "" {
		// An empty key would make genai fall back to GOOGLE_API_KEY /
		// GEMINI_API_KEY on its own; the providers layer resolves keys.
		return nil, &providers.Error{Class: providers.ClassAuth,
			Message: "gemini needs an API key: set GOOGLE_API_KEY or GEMINI_API_KEY (environment, ./.env or ~/.env)"}
	}
	base := ep.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	hc := ep.HTTPClient
	if hc == nil {
		// No Client.Timeout: it would cut long streams; the step's context
		// bounds the call instead.
		hc = &http.Client{}
	}
	cc := &genai.ClientConfig{
		APIKey:     ep.APIKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: hc,
		HTTPOptions: genai.HTTPOptions{
			BaseURL:    base,
			APIVersion: ep.APIVersion,
			// RetryOptions stays nil: genai then makes exactly one attempt.
		},
	}
	client, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		// genai prints its whole ClientConfig (key included) into some of
		// its errors: never pass its text on unscrubbed.
		return nil, &providers.Error{Class: providers.ClassProvider,
			Message: "cannot set up the gemini client: " + scrub(err.Error(), ep.APIKey),
			Err:     sanitize(err, ep.APIKey)}
	}
	backend := cmp.Or(ep.Backend, "gemini")
	return &provider{client: client, backend: backend, model: ep.Model, key: ep.APIKey}, nil
}

// Step makes the step's streamed generateContent calls — one, or a tool
// loop when the request has a Toolbox (providers.RunLoop) — and reports the
// workflow calls the model made.
func (p *provider) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	return providers.RunLoop(ctx, req, func(ctx context.Context, req providers.Request, past []providers.Exchange) (providers.Action, []string, providers.Usage, error) {
		act, ids, u, err := p.turn(ctx, req, past)
		if req.Toolbox != nil && u.CostUSD == nil {
			// A loop sums its turns, and long-context rates hold per
			// request: each turn is priced as the request it was.
			u.CostUSD = pricing.Cost(p.backend, p.model, u)
		}
		return act, ids, u, err
	})
}

// turn is one streamed call after the loop's rounds so far. Gemini's
// function calls carry no ids the loop needs: a round replays the model's
// own parts, and responses answer the calls in order.
func (p *provider) turn(ctx context.Context, req providers.Request, past []providers.Exchange) (providers.Action, []string, providers.Usage, error) {
	contents := contentsFor(p.model, req, past)
	cfg, err := configFor(p.model, req, &p.schemas)
	if err != nil {
		return providers.Action{}, nil, providers.Usage{}, err
	}

	var (
		acc      reply
		usage    *genai.GenerateContentResponseUsageMetadata
		blocked  string
		chunks   int
		finished bool
		reported bool     // the whole call's usage arrived
		searches []string // Google Search grounding's queries, as the last chunk says
	)
	// charge is the call's usage: the last chunk's report (whose usage is the
	// whole call's), or, for a stream that began but ended before it, what it
	// reported so far; either with what it left out or at zero estimated
	// (providers.Charge).
	charge := func() providers.Usage {
		u := usageOf(usage)
		if chunks == 0 {
			return u
		}
		return providers.Charge(u, reported, providers.EstimateInput(req, past), acc.streamed())
	}
	ctx = providers.WatchCap(ctx)
	for chunk, err := range p.client.Models.GenerateContentStream(ctx, p.model, contents, cfg) {
		if err != nil {
			if providers.Capped(ctx) {
				err = providers.ErrResponseTooLarge
			}
			return providers.Action{}, nil, charge(), p.classify(ctx, err)
		}
		chunks++
		if chunk.UsageMetadata != nil {
			usage = chunk.UsageMetadata
			// Every chunk says the usage so far; the one that finishes
			// the candidate (or one after it), or blocks the prompt, says
			// the whole call's.
			reported = finished || (len(chunk.Candidates) > 0 && chunk.Candidates[0] != nil &&
				chunk.Candidates[0].FinishReason != "" && chunk.Candidates[0].FinishReason != genai.FinishReasonUnspecified) ||
				(chunk.PromptFeedback != nil && chunk.PromptFeedback.BlockReason != "")
		}
		if pf := chunk.PromptFeedback; pf != nil && pf.BlockReason != "" {
			blocked = string(pf.BlockReason)
			if pf.BlockReasonMessage != "" {
				blocked += ": " + pf.BlockReasonMessage
			}
		}
		if len(chunk.Candidates) == 0 || chunk.Candidates[0] == nil {
			continue
		}
		c := chunk.Candidates[0]
		if g := c.GroundingMetadata; g != nil {
			searches = g.WebSearchQueries
		}
		if c.Content != nil {
			acc.add(c.Content.Parts)
			for _, part := range c.Content.Parts {
				if part != nil && !part.Thought {
					req.StreamText(part.Text)
				}
			}
		}
		if c.FinishReason != "" && c.FinishReason != genai.FinishReasonUnspecified {
			finished = true
		}
	}
	acc.flush()
	u := charge()
	if blocked != "" && len(acc.parts) == 0 {
		return providers.Action{}, nil, u, &providers.Error{Class: providers.ClassProvider,
			Message: fmt.Sprintf("gemini %s blocked the prompt (%s); the same prompt will be blocked again", p.model, blocked)}
	}
	if chunks > 0 && !finished {
		return providers.Action{}, nil, u, &providers.Error{Class: providers.ClassProvider,
			Message: fmt.Sprintf("gemini %s: the stream ended before the model finished (no finishReason)", p.model)}
	}
	for _, q := range searches {
		req.RecordWebSearch(q)
	}
	return acc.action(req.Tools), nil, u, nil
}

// usageOf normalises usageMetadata: promptTokenCount already includes the
// cached tokens; thought tokens are billed as output, so Output counts them
// and Reasoning repeats them. toolUsePromptTokenCount (server-side tools) is
// billed as input.
func usageOf(m *genai.GenerateContentResponseUsageMetadata) providers.Usage {
	if m == nil {
		return providers.Usage{}
	}
	return providers.Usage{
		Input:       int64(m.PromptTokenCount) + int64(m.ToolUsePromptTokenCount),
		CachedInput: int64(m.CachedContentTokenCount),
		Output:      int64(m.CandidatesTokenCount) + int64(m.ThoughtsTokenCount),
		Reasoning:   int64(m.ThoughtsTokenCount),
	}.Sane()
}

// reply accumulates the streamed parts of one candidate.
type reply struct {
	parts []*genai.Part
	// open is the first piece of the plain text streaming after parts, and
	// text that text so far: joined in a builder, in time linear in its
	// length, where joining each piece onto the last copied the whole text
	// again for every one of a long reply's thousands of pieces.
	open *genai.Part
	text strings.Builder
}

// add appends streamed parts in order. Adjacent plain text pieces are joined;
// a part carrying a thought signature, a thought or a function call is kept
// as it came, so replaying the parts gives the signatures back exactly where
// the model put them.
func (r *reply) add(parts []*genai.Part) {
	for _, p := range parts {
		if p == nil {
			continue
		}
		if plainText(p) {
			if r.open == nil {
				r.open = p
			}
			r.text.WriteString(p.Text)
			continue
		}
		r.flush()
		r.parts = append(r.parts, p)
	}
}

// flush ends the plain text streaming: it becomes one part, the first
// piece's with the whole text.
func (r *reply) flush() {
	if r.open == nil {
		return
	}
	joined := *r.open
	joined.Text = r.text.String()
	r.parts = append(r.parts, &joined)
	r.open = nil
	r.text.Reset()
}

// streamed is the bytes of output the parts hold: text, thoughts and
// function calls' arguments, for an estimate of a cut call's output.
func (r *reply) streamed() int {
	n := r.text.Len()
	for _, p := range r.parts {
		n += len(p.Text)
		if p.FunctionCall != nil {
			n += len(p.FunctionCall.Name) + len(argsJSON(p.FunctionCall.Args))
		}
	}
	return n
}

func plainText(p *genai.Part) bool {
	return p.FunctionCall == nil && p.FunctionResponse == nil && !p.Thought &&
		len(p.ThoughtSignature) == 0 && p.InlineData == nil && p.FileData == nil &&
		p.ExecutableCode == nil && p.CodeExecutionResult == nil
}

// rawReply is what Action.Raw holds for a Gemini reply.
type rawReply struct {
	Gemini *genai.Content `json:"gemini"`
}

// action turns the accumulated parts into the provider-neutral Action:
// function calls in order, the visible text, and the parts verbatim in Raw.
func (r *reply) action(tools []providers.Tool) providers.Action {
	r.flush()
	var a providers.Action
	var text strings.Builder
	for _, p := range r.parts {
		switch {
		case p.FunctionCall != nil:
			a.Calls = append(a.Calls, providers.ToolCall{Name: p.FunctionCall.Name, Args: argsJSON(p.FunctionCall.Args)})
		case p.Text != "" && !p.Thought:
			text.WriteString(p.Text)
		}
	}
	a.Text = text.String()
	if len(a.Calls) == 0 && strings.TrimSpace(a.Text) != "" {
		// Mode ANY should rule this out, but a model that wrote its call as
		// JSON text still made the call.
		if parsed, ok := providers.ParseTextCallsFor(a.Text, tools); ok {
			a.Calls, a.Text = parsed.Calls, parsed.Text
		}
	}
	if len(r.parts) > 0 {
		a.Raw, _ = json.Marshal(rawReply{Gemini: &genai.Content{Role: genai.RoleModel, Parts: r.parts}})
	}
	return a
}

// argsJSON encodes structured arguments; absent arguments are an empty
// object, never JSON null.
func argsJSON(args map[string]any) json.RawMessage {
	if args == nil {
		return json.RawMessage(`{}`)
	}
	b, err := json.Marshal(args)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}
