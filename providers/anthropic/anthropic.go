package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

// Provider calls one Claude model through the Messages API. It is safe for
// concurrent use.
type Provider struct {
	// messages and models are the two services used, built directly rather
	// than through sdk.NewClient: the client holds every service of the API
	// (beta, files, skills, organizations, …), and building it linked
	// all of them into the binary.
	messages sdk.MessageService
	models   sdk.ModelService
	backend  string // for the price table
	model    string
	key      string // only to mask it out of error text
}

// Result is everything one call learned: the action and usage Step returns,
// plus what providers.Usage has no field for.
type Result struct {
	Action providers.Action
	Usage  providers.Usage
	// CacheWriteInput is the part of Usage.Input written to the prompt cache
	// (cache_creation_input_tokens), which Anthropic bills at 1.25× the base
	// input rate (2× for one-hour entries); Usage.Input - CachedInput -
	// CacheWriteInput is billed at the base rate.
	CacheWriteInput int64
	// CacheWrite1hInput is the part of CacheWriteInput written as one-hour
	// entries; the rest are five-minute entries.
	CacheWrite1hInput int64
	// StopReason is Anthropic's stop_reason (end_turn, tool_use, max_tokens,
	// refusal, pause_turn, …): the last call's, when a paused turn was
	// continued.
	StopReason string
	// Pauses counts the times the API paused the turn and it was continued.
	Pauses int

	last json.RawMessage // this call's own blocks, when kept (a paused turn's)
}

// New returns the provider for an endpoint. The client is built from the
// endpoint alone: the SDK's environment credential chain (ANTHROPIC_API_KEY,
// profiles, federation, ANTHROPIC_BASE_URL) is switched off, and so are its
// retries, which the resilience layer owns.
func New(ep providers.Endpoint) (providers.Provider, error) {
	if strings.TrimSpace(ep.Model) == "" {
		return nil, fmt.Errorf("%w: a claude spec needs a model name, e.g. claude/claude-opus-4-6", providers.ErrBadSpec)
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithMaxRetries(0),
	}
	if ep.BaseURL != "" {
		base, err := baseURL(ep.BaseURL)
		if err != nil {
			return nil, err
		}
		opts = append(opts, option.WithBaseURL(base))
	}
	if ep.APIKey != "" {
		opts = append(opts, option.WithAPIKey(ep.APIKey))
	}
	if ep.APIVersion != "" {
		opts = append(opts, option.WithHeader("anthropic-version", ep.APIVersion))
	}
	if ep.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(ep.HTTPClient))
	}
	backend := ep.Backend
	if backend == "" {
		backend = "claude"
	}
	// What sdk.NewClient prepends when environment defaults are off.
	opts = append([]option.RequestOption{option.WithEnvironmentProduction()}, opts...)
	return &Provider{messages: sdk.NewMessageService(opts...), models: sdk.NewModelService(opts...), backend: backend, model: ep.Model, key: ep.APIKey}, nil
}

// baseURL checks a base URL and drops a trailing /v1: the SDK appends
// v1/messages itself, and OpenAI-style base URLs end in /v1.
func baseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// The parse error would quote the URL, which may hold credentials.
		return "", fmt.Errorf("%w: the Anthropic base URL is not a URL", providers.ErrBadSpec)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: the Anthropic base URL %q is not an http(s) URL", providers.ErrBadSpec, u.Redacted())
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	return u.String(), nil
}

// Step runs the step's calls — one, or a tool loop when the request has a
// Toolbox (providers.RunLoop) — and reports the workflow calls the model
// made.
func (p *Provider) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	return providers.RunLoop(ctx, req, func(ctx context.Context, req providers.Request, past []providers.Exchange) (providers.Action, []string, providers.Usage, error) {
		r, ids, err := p.turn(ctx, req, past)
		if req.Toolbox != nil && r.Usage.CostUSD == nil {
			// A loop sums its turns' costs, so every turn is priced here,
			// where cache writes are known.
			r.Usage.CostUSD = pricing.CostWithCacheWrites(p.backend, p.model, r.Usage, 0, 0)
		}
		return r.Action, ids, r.Usage, err
	})
}

// Call runs one streamed Messages call and reports all it learned; Step is
// Call without the extras (and with the tool loop). On an error the Result
// still holds the usage reported before it, if any.
func (p *Provider) Call(ctx context.Context, req providers.Request) (Result, error) {
	r, _, err := p.turn(ctx, req, nil)
	return r, err
}

// turn is one model turn after the loop's rounds so far: one call, or more
// when the API pauses it (pause.go); ids are its tool_use ids.
func (p *Provider) turn(ctx context.Context, req providers.Request, past []providers.Exchange) (Result, []string, error) {
	var paused []Result // the turn's paused replies, sent back to continue it
	for {
		r, ids, err := p.call(ctx, req, past, paused)
		if len(paused) > 0 || r.StopReason == stopPaused {
			// The calls of a paused turn are summed, so each is priced
			// (their cache writes included) before they are.
			p.priceAlways(&r)
		} else {
			p.price(&r)
		}
		whole := r
		if len(paused) > 0 {
			whole = continued(paused, r)
		}
		if err != nil || r.StopReason != stopPaused || len(paused) == maxPauses {
			return whole, ids, err
		}
		paused = append(paused, r)
	}
}

// price prices a call that wrote to the prompt cache. Usage cannot carry
// cache writes, which cost more than input, so such a call is priced here;
// any other is priced by the pricing layer from Usage alone, to the same
// result.
func (p *Provider) price(r *Result) {
	if r.CacheWriteInput > 0 {
		p.priceAlways(r)
	}
}

func (p *Provider) priceAlways(r *Result) {
	w1h := r.CacheWrite1hInput
	r.Usage.CostUSD = pricing.CostWithCacheWrites(p.backend, p.model, r.Usage, r.CacheWriteInput-w1h, w1h)
}

func (p *Provider) call(ctx context.Context, req providers.Request, past []providers.Exchange, paused []Result) (r Result, ids []string, err error) {
	defer func() {
		// The SDK decodes whatever the network sends; a panic in there must
		// fail this step, not the server running every other session.
		if v := recover(); v != nil {
			err = &providers.Error{Class: providers.ClassProvider,
				Message: p.mask(fmt.Sprintf("the Anthropic reply for %s could not be read (%v); the step can be retried", p.model, v))}
		}
	}()
	params, err := p.params(req, past)
	if err != nil {
		return Result{}, nil, err
	}
	params.Messages = append(params.Messages, pausedMessages(paused)...)
	stream := p.messages.NewStreaming(ctx, params)
	// Closing the body is what stops a stream that ended early; a
	// cancelled ctx has already torn the connection down.
	defer stream.Close()
	acc := accumulator{keep: len(paused) > 0, input: func() int64 { return providers.EstimateInput(req, past) }}
	for stream.Next() {
		ev := stream.Current()
		if err := acc.add(ev); err != nil {
			return acc.partial(), nil, p.malformedStream(err)
		}
		if ev.Type == "content_block_delta" {
			req.StreamText(ev.Delta.Text + ev.Delta.PartialJSON)
		}
	}
	if err := stream.Err(); err != nil {
		return acc.partial(), nil, p.classify(ctx, err)
	}
	if !acc.stopped {
		if ctx.Err() != nil {
			return acc.partial(), nil, p.classify(ctx, ctx.Err())
		}
		return acc.partial(), nil, &providers.Error{Class: providers.ClassProvider,
			Message: "the Anthropic stream ended before message_stop; the connection may have dropped, so the step can be retried"}
	}
	r, ids = acc.result(&req)
	return r, ids, nil
}
