package openai_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/massgen-go/massgen-mcp/providers"
)

// BenchmarkStepOverhead measures what the adapter adds to one step: the
// adapter's Step and the bare SDK streaming call it wraps (same model, same
// messages and tools, prebuilt, the stream merely drained) run alternately
// against the same fake, and adapter/sdk is the ratio of their median times
// in this one run. The target is ≤ 1.05.
func BenchmarkStepOverhead(b *testing.B) {
	for _, tg := range targets[:2] {
		b.Run(tg.format, func(b *testing.B) {
			r := newRig(b)
			p := r.open(b, tg)
			req := stepRequest()
			ctx := context.Background()
			bare := bareCall(b, r, tg, req)
			step := func() error {
				_, _, err := p.Step(ctx, req)
				return err
			}
			timed := func(f func() error) time.Duration {
				t0 := time.Now()
				if err := f(); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0)
			}
			for range 20 { // warm connections and both code paths
				timed(step)
				timed(bare)
			}
			adapter := make([]time.Duration, 0, b.N)
			sdk := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				if i%2 == 0 {
					adapter = append(adapter, timed(step))
					sdk = append(sdk, timed(bare))
				} else {
					sdk = append(sdk, timed(bare))
					adapter = append(adapter, timed(step))
				}
			}
			b.StopTimer()
			// Medians, not sums: on a shared machine one scheduling hiccup
			// would otherwise decide the ratio.
			a, s := median(adapter), median(sdk)
			b.ReportMetric(float64(a)/float64(s), "adapter/sdk")
			b.ReportMetric(float64(a.Nanoseconds()), "adapter-ns/step")
			b.ReportMetric(float64(s.Nanoseconds()), "sdk-ns/call")
		})
	}
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// bareCall is the same request made with the SDK directly.
func bareCall(b *testing.B, r *rig, tg target, req providers.Request) func() error {
	opts := []option.RequestOption{option.WithBaseURL(r.srv.URL + "/v1"), option.WithAPIKey(plantedKey),
		option.WithHTTPClient(r.srv.Client()), option.WithMaxRetries(0)}
	schema := func(t providers.Tool) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(t.Schema, &m); err != nil {
			b.Fatal(err)
		}
		return m
	}
	ctx := context.Background()
	if tg.format == "chat" {
		svc := oai.NewChatCompletionService(opts...)
		params := oai.ChatCompletionNewParams{
			Model:         tg.model,
			Messages:      []oai.ChatCompletionMessageParamUnion{oai.SystemMessage(req.System), oai.UserMessage(req.Prompt)},
			StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)},
			ToolChoice:    oai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: oai.String("required")},
		}
		for _, t := range req.Tools {
			params.Tools = append(params.Tools, oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
				Name: t.Name, Description: oai.String(t.Description), Parameters: schema(t)}))
		}
		return func() error {
			s := svc.NewStreaming(ctx, params)
			defer s.Close()
			for s.Next() {
				_ = s.Current()
			}
			return s.Err()
		}
	}
	svc := responses.NewResponseService(opts...)
	params := responses.ResponseNewParams{
		Model:        tg.model,
		Instructions: oai.String(req.System),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage(req.Prompt, responses.EasyInputMessageRoleUser)}},
		ToolChoice: responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(responses.ToolChoiceOptionsRequired)},
		Store:      oai.Bool(false),
		Reasoning:  shared.ReasoningParam{Effort: shared.ReasoningEffortMedium},
	}
	for _, t := range req.Tools {
		tool := responses.ToolParamOfFunction(t.Name, schema(t), false)
		tool.OfFunction.Description = oai.String(t.Description)
		params.Tools = append(params.Tools, tool)
	}
	return func() error {
		s := svc.NewStreaming(ctx, params)
		defer s.Close()
		for s.Next() {
			_ = s.Current()
		}
		return s.Err()
	}
}
