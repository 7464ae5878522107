package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// loopCalls is how many toolbox calls the tool-loop benchmark's step makes
// before it answers.
const loopCalls = 5

// BenchmarkToolLoopOverhead measures what the tool loop adds per tool call
// to the bare provider calls it is made of. The loop: a step that reads a
// 2 KB file five times and then answers — six model turns through
// providers.RunLoop, each rebuilding its conversation, parsing its stream,
// running and recording the (trivial) tool. The bare calls: the same six
// requests, their SDK params built beforehand, sent with the SDK and their
// streams drained. Both run alternately against the same fake in this one
// run; loop/bare is the ratio of their medians (the target is ≤ 1.05) and
// overhead-ns/toolcall what the loop costs per call beyond its model call.
func BenchmarkToolLoopOverhead(b *testing.B) {
	for _, format := range []string{"responses", "chat"} {
		b.Run(format, func(b *testing.B) {
			script := fake.NewScript()
			srv := httptest.NewServer(fake.NewOpenAI(script))
			b.Cleanup(srv.Close)
			marker := `"type":"function_call_output"`
			if format == "chat" {
				marker = `"role":"tool"`
			}
			// The reply depends only on the request, so the loop and the
			// bare calls hear the same six replies.
			script.Default = func(c fake.Call) fake.Reply {
				if bytes.Count(c.Body, []byte(marker)) < loopCalls {
					return fake.Reply{Kind: fake.ReplyToolCall, Tool: "read_file", Input: json.RawMessage(`{"path":"calc/calc.go"}`)}
				}
				return fake.Reply{Kind: fake.ReplyNewAnswer, Content: "Add now adds."}
			}
			file := strings.Repeat("func Add(a, b int) int { return a + b }\n", 50)
			box := &fake.Toolbox{List: []providers.Tool{fake.ReadFileTool}, Run: func(context.Context, string, json.RawMessage) (providers.ToolResult, error) {
				return providers.ToolResult{Content: file}, nil
			}}
			ep := providers.Endpoint{Backend: "openai", Model: "gpt-5-mini", BaseURL: srv.URL + "/v1", APIKey: "sk-dummy-bench-not-a-key", HTTPClient: srv.Client()}
			if format == "chat" {
				ep.Backend, ep.Model = "together", "meta-llama/Llama-3.3-70B-Instruct-Turbo"
			}
			req := benchRequest()
			req.Toolbox, req.Record = box, &fake.Recorder{}
			ctx := context.Background()

			var p providers.Provider
			var once func(providers.Request, []providers.Exchange) (providers.Action, []string, providers.Usage, error)
			var bareTurn func(providers.Request, []providers.Exchange) func() error
			if format == "chat" {
				pp, err := NewChat(ep)
				if err != nil {
					b.Fatal(err)
				}
				c := pp.(*chatProvider)
				p = c
				once = func(r providers.Request, past []providers.Exchange) (providers.Action, []string, providers.Usage, error) {
					return c.once(ctx, r, past, modeRequired)
				}
				bareTurn = func(r providers.Request, past []providers.Exchange) func() error {
					params, err := c.params(r, past, modeRequired)
					if err != nil {
						b.Fatal(err)
					}
					return func() error {
						s := c.svc.NewStreaming(ctx, params)
						defer s.Close()
						for s.Next() {
							_ = s.Current()
						}
						return s.Err()
					}
				}
			} else {
				pp, err := NewResponses(ep)
				if err != nil {
					b.Fatal(err)
				}
				rp := pp.(*responsesProvider)
				p = rp
				once = func(r providers.Request, past []providers.Exchange) (providers.Action, []string, providers.Usage, error) {
					return rp.once(ctx, r, past, modeRequired)
				}
				bareTurn = func(r providers.Request, past []providers.Exchange) func() error {
					params, err := rp.params(r, past, modeRequired)
					if err != nil {
						b.Fatal(err)
					}
					return func() error {
						s := rp.svc.NewStreaming(ctx, params)
						defer s.Close()
						for s.Next() {
							_ = s.Current()
						}
						return s.Err()
					}
				}
			}
			// One loop, watched, gives the six turns the bare calls repeat.
			var turns []func() error
			_, _, err := providers.RunLoop(ctx, req, func(_ context.Context, r providers.Request, past []providers.Exchange) (providers.Action, []string, providers.Usage, error) {
				turns = append(turns, bareTurn(r, slices.Clone(past)))
				return once(r, past)
			})
			if err != nil || len(turns) != loopCalls+1 {
				b.Fatalf("the watched loop: %v after %d turns", err, len(turns))
			}
			bare := func() error {
				for _, t := range turns {
					if err := t(); err != nil {
						return err
					}
				}
				return nil
			}
			loop := func() error {
				act, _, err := p.Step(ctx, req)
				if err == nil && (len(act.Calls) != 1 || act.Calls[0].Name != providers.ToolNewAnswer) {
					err = fmt.Errorf("the step ended with %+v", act)
				}
				return err
			}
			timed := func(f func() error) time.Duration {
				t0 := time.Now()
				if err := f(); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0)
			}
			for range 10 { // warm connections and both paths
				timed(loop)
				timed(bare)
			}
			looped := make([]time.Duration, 0, b.N)
			plain := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				if i%2 == 0 {
					looped = append(looped, timed(loop))
					plain = append(plain, timed(bare))
				} else {
					plain = append(plain, timed(bare))
					looped = append(looped, timed(loop))
				}
			}
			b.StopTimer()
			// Medians, not sums: on a shared machine one scheduling hiccup
			// would otherwise decide the ratio.
			l, s := medianOf(looped), medianOf(plain)
			b.ReportMetric(float64(l)/float64(s), "loop/bare")
			b.ReportMetric(float64((l-s).Nanoseconds())/loopCalls, "overhead-ns/toolcall")
			b.ReportMetric(float64(s.Nanoseconds())/(loopCalls+1), "bare-ns/call")
		})
	}
}

func medianOf(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

func benchRequest() providers.Request {
	return providers.Request{
		Purpose: providers.PurposeStep,
		System:  "You are one agent of a team. Finish with exactly one workflow call.",
		Prompt:  "Task: fix Add in calc/calc.go.",
		Tools: []providers.Tool{
			{Name: providers.ToolNewAnswer, Description: "Submit a new answer.",
				Schema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`)},
			{Name: providers.ToolVote, Description: "Vote for the best answer.",
				Schema: json.RawMessage(`{"type":"object","properties":{"agent_id":{"type":"string","enum":["agent1"]},"reason":{"type":"string"}},"required":["agent_id","reason"]}`)},
		},
	}
}
