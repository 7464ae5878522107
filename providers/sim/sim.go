package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Profile accuracies (docs/DESIGN.md, "Backends and the simulated agents").
var profileAccuracy = map[string]float64{
	providers.SimProfileDefault: 0.75,
	providers.SimProfileStrong:  0.9,
	providers.SimProfileWeak:    0.55,
}

// config is a sim's behaviour, read from its spec.
type config struct {
	profile    string
	accuracy   float64
	conformity float64 // base chance of adopting a peer's differing value
	revise     float64 // chance of re-answering instead of voting
	// truthBias multiplies the adoption chance when the peer's value is
	// right and divides it when it is wrong. The research's fit of MassGen's
	// published gain implies τ ≈ 2–2.5 (consensus-quality.md §3.10).
	truthBias float64
	// selfBias and positionBias favour the agent's own answer and the answer
	// shown first: a score bonus when voting on synthetic drafts, a change
	// in the adoption chance on tasks it knows (simulator.bias).
	selfBias     float64
	positionBias float64
	priceIn      float64 // USD per 1M input tokens
	priceOut     float64 // USD per 1M output tokens
	latency      time.Duration
	seed         int64
	file         string
}

func configFor(spec providers.Spec) (config, error) {
	if spec.Backend != "sim" {
		return config{}, fmt.Errorf("%w: the sim cannot run a %q spec; write sim, sim/strong, sim/weak or sim/script:file=<path>",
			providers.ErrBadSpec, spec.String())
	}
	if err := spec.Validate(); err != nil {
		return config{}, err
	}
	c := config{profile: spec.Model, conformity: 0.3, revise: 0.15, truthBias: 2}
	if c.profile == "" {
		c.profile = providers.SimProfileDefault
	}
	c.accuracy = profileAccuracy[c.profile]
	// Validate has checked every value, so the parses below cannot fail.
	f := func(k string, dst *float64) {
		if v, ok := spec.Params[k]; ok {
			*dst, _ = strconv.ParseFloat(v, 64)
		}
	}
	f("accuracy", &c.accuracy)
	f("conformity", &c.conformity)
	f("revise", &c.revise)
	f("truth_bias", &c.truthBias)
	f("self_bias", &c.selfBias)
	f("position_bias", &c.positionBias)
	f("price_in", &c.priceIn)
	f("price_out", &c.priceOut)
	if v, ok := spec.Params["latency"]; ok {
		c.latency, _ = time.ParseDuration(v)
	}
	if v, ok := spec.Params["seed"]; ok {
		c.seed, _ = strconv.ParseInt(v, 10, 64)
	}
	c.file = spec.Params["file"]
	return c, nil
}

// New builds the sim provider a spec names: a profile with its parameters,
// or, for sim/script, a script read from its file.
func New(spec providers.Spec, opts ...Option) (providers.Provider, error) {
	c, err := configFor(spec)
	if err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if c.profile == providers.SimProfileScript {
		actions, err := ReadScript(c.file)
		if err != nil {
			return nil, err
		}
		s, err := newScript(actions)
		if err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, c.file)
		}
		s.cfg = c
		return s, nil
	}
	return &simulator{cfg: c, items: o.items}, nil
}

// simulator is a profile sim. It holds no state: every Step is a pure
// function of its request and the config, so it is safe for concurrent use.
type simulator struct {
	cfg   config
	items ItemModel
}

// Step decides the agent's action, waits the configured latency, and counts
// usage from text length.
func (s *simulator) Step(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
	if err := ctx.Err(); err != nil {
		return providers.Action{}, providers.Free(), interrupted(err)
	}
	// A model's thinking happens on its provider's machines, not in this
	// process: the sim decides halfway through its latency, when the
	// orchestrator that just sent a burst of prompts is idle, rather than
	// competing with it for the CPU as the burst goes out.
	due := time.Now().Add(s.cfg.latency)
	if err := wait(ctx, s.cfg.latency/2); err != nil {
		return providers.Action{}, providers.Free(), err
	}
	act, u := s.think(&req)
	if req.Watch != nil {
		if err := stream(ctx, &req, act, due); err != nil {
			return providers.Action{}, providers.Free(), err
		}
	}
	if err := wait(ctx, time.Until(due)); err != nil {
		return providers.Action{}, providers.Free(), err
	}
	return act, u, nil
}

// stream writes the decided action to the request's watcher a few words at a
// time until due, as a model streaming its reply would: an answer's text, or
// the vote and its reason.
func stream(ctx context.Context, req *providers.Request, act providers.Action, due time.Time) error {
	var text string
	for _, c := range act.Calls {
		var args map[string]any
		_ = json.Unmarshal(c.Args, &args)
		if c.Name == providers.ToolVote {
			text += fmt.Sprintf("vote %v: %v", args["agent_id"], args["reason"])
		} else {
			text += fmt.Sprint(args["content"])
		}
	}
	words := strings.SplitAfter(text, " ")
	const pieces = 8
	per := max(1, (len(words)+pieces-1)/pieces)
	gap := time.Until(due) / time.Duration((len(words)+per-1)/per+1)
	for i := 0; i < len(words); i += per {
		req.StreamText(strings.Join(words[i:min(i+per, len(words))], ""))
		if err := wait(ctx, gap); err != nil {
			return err
		}
	}
	return nil
}

// think is the decision and its usage, in a frame of its own: Step's frame
// is on the stack while the sim waits, and kept small it lets a step
// goroutine park without growing its stack.
func (s *simulator) think(req *providers.Request) (providers.Action, providers.Usage) {
	act := s.decide(req)
	return act, usage(req, act, s.cfg)
}

func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return interrupted(ctx.Err())
	case <-t.C:
		return nil
	}
}

// interrupted reports a cancelled or timed-out step as a timeout, keeping the
// context error underneath so callers can still tell a cancel with errors.Is.
func interrupted(err error) error {
	return &providers.Error{Class: providers.ClassTimeout, Message: "the simulated step was interrupted: " + err.Error(), Err: err}
}

// usage counts input from the rendered system and user text and output from
// what the sim wrote; the cost is always known, zero when prices are.
func usage(req *providers.Request, act providers.Action, c config) providers.Usage {
	in := int64((utf8.RuneCountInString(req.System) + utf8.RuneCountInString(req.Prompt) + 3) / 4) // four characters a token, rounded up
	written := act.Text
	chars := utf8.RuneCountInString(written)
	for _, call := range act.Calls {
		var args struct {
			Content string `json:"content"`
			AgentID string `json:"agent_id"`
			Reason  string `json:"reason"`
		}
		_ = json.Unmarshal(call.Args, &args) // the sim builds its own args; they always decode
		chars += utf8.RuneCountInString(args.Content) + utf8.RuneCountInString(args.AgentID) + utf8.RuneCountInString(args.Reason)
	}
	out := int64((chars + 3) / 4) // four characters a token, rounded up
	cost := float64(in)*c.priceIn/1e6 + float64(out)*c.priceOut/1e6
	return providers.Usage{Input: in, Output: out, CostUSD: &cost}
}
