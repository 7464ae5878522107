package providers

// A call the server ran is paid for, whatever its usage report says. Counted
// as nothing, a cost or token budget would never bind against the server,
// and the resilience layer would retry it at no charge. Two kinds of call
// report less than they cost:
//
//   - A streamed reply's usage comes at its end (Chat Completions' usage
//     chunk, Responses' response.completed, Anthropic's message_delta before
//     message_stop, Gemini's chunk with a finishReason). A stream that ends
//     before it — the connection drops, the server closes it early or fails
//     mid-reply, or never reports usage at all — still ran the model on the
//     prompt and streamed what it streamed. Servers that send running usage
//     as they go (vLLM's continuous_usage_stats, some gateways, Gemini's
//     every chunk) make a cut stream's last count only what they had counted
//     when it stopped: a report is final only in a stream that ended properly.
//   - A reply that completed may report zeros: OpenAI-compatible local
//     servers often send a usage chunk whose prompt_tokens and
//     completion_tokens are 0, and any API's reply may say 0 for a count.
//
// So every adapter charges a call whose stream began (one event arrived)
// through Charge: what the server reported, with what it left out or left
// at zero estimated.

// EstimateImageTokens is what an estimate counts for one image: about the
// most any of the APIs bills one (Anthropic's 1,600 tokens at its
// 1.15-megapixel cap), as a budget's worst case before a run counts it.
const EstimateImageTokens = 1600

// EstimateTokens counts a token for every four bytes of text, rounded up:
// about four characters a token for English (the rule the price estimate
// before a run uses), and more tokens than characters/4 for text in other
// scripts, whose characters take more bytes and more tokens. An estimate
// that errs, errs towards charging more.
func EstimateTokens(bytes int) int64 { return int64(bytes+3) / 4 }

// EstimateInput is the input of a call that sends req after the tool loop's
// rounds past: its system text, prompt, tools, refused attempts, rounds and
// images, by EstimateTokens (images by EstimateImageTokens). The wire's own
// framing and a model's chat template add a little; the images' base64,
// which no API bills by its length, is left out.
func EstimateInput(req Request, past []Exchange) int64 {
	n := len(req.System) + len(req.Prompt)
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	for _, t := range req.History {
		n += actionBytes(t.Reply) + len(t.Problem)
	}
	for _, ex := range past {
		n += actionBytes(ex.Reply)
		for _, r := range ex.Results {
			n += len(r.Content)
		}
	}
	return EstimateTokens(n) + int64(len(req.Images))*EstimateImageTokens
}

func actionBytes(a Action) int {
	n := len(a.Text)
	for _, c := range a.Calls {
		n += len(c.Name) + len(c.Args)
	}
	return n
}

// Charge is the usage of a call whose stream began. reported is what the
// stream said of its usage (zero where it said nothing); whole says the
// stream ended properly with its usage report (a running count in a stream
// cut later is not whole); input is the call's estimated input
// (EstimateInput) and streamed the bytes of text, tool arguments and
// reasoning the reply returned.
//
// A count the server reported stands: it is exact. A count it left at zero is
// estimated: the input whenever the request sent anything, the output when
// the reply returned anything (a reply that returned nothing keeps its zero
// output). A stream cut before its report is charged at least the output it
// streamed, whatever it had said so far. An estimated usage's cost is left to
// pricing and marked CostEstimated: it is not what the server reported; a
// report that needed no estimate is returned as it was.
func Charge(reported Usage, whole bool, input int64, streamed int) Usage {
	u := reported
	estimated := !whole
	if u.Input == 0 && input > 0 {
		u.Input, estimated = input, true
	}
	if out := EstimateTokens(streamed); out > u.Output && (!whole || u.Output == 0) {
		u.Output, estimated = out, true
	}
	if !estimated {
		return reported
	}
	u.CostUSD, u.CostEstimated = nil, true
	return u.Sane()
}
