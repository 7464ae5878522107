package cliagent

import "github.com/massgen-go/massgen-mcp/providers"

// charged is what a run is charged, by the rule of an API call
// (providers.Charge): a CLI pointed at a server that sends no usage or
// zeros (OpenAI-compatible local servers often do), an older CLI whose
// stream has no usage event, and a run killed before its final usage all
// ran a model on the prompt and wrote what they wrote, and a run charged
// nothing would leave every token and cost budget unbound. So a count the
// run reported stands; input it left at zero is estimated from sent (what
// the run was given, once for each model call its stream told apart:
// events.input), output from streamed, the bytes of text and tool
// calls its stream and its workflow call carried; and the usage is marked
// cost_estimated. whole says the run's usage report is complete (its
// stream's final event, or its per-call usage file): a run cut before it is
// charged at least the output it streamed.
//
// A CLI's turn is many model calls (its own tool loop), each sending the
// whole conversation so far, while the estimate counts the prompt alone
// for a call and what it wrote once: it is a floor of what the run cost,
// not a figure for it. A run that streamed nothing is left as it was: no
// model call of it is known to have returned (a CLI that failed at its
// start, or refused by its API).
func charged(u providers.Usage, whole bool, sent int64, streamed int) providers.Usage {
	if streamed == 0 {
		return u
	}
	return providers.Charge(u, whole, sent, streamed)
}

// callBytes is the output of the workflow call that landed: the relay, not
// the stream, reports it.
func callBytes(c *providers.ToolCall) int {
	if c == nil {
		return 0
	}
	return len(c.Name) + len(c.Args)
}

// atLeast is a stopped run's charge u, its input and output raised to what
// the step's limits last heard of the run (heard) where they are below it:
// a run stopped on an estimate mid-run is not charged less than what
// stopped it, whatever its usage file or cut stream said after.
func atLeast(u, heard providers.Usage) providers.Usage {
	if u.Input >= heard.Input && u.Output >= heard.Output {
		return u
	}
	u.Input, u.Output = max(u.Input, heard.Input), max(u.Output, heard.Output)
	u.CostUSD, u.CostEstimated = nil, true
	return u.Sane()
}
