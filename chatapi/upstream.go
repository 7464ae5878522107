package chatapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

// UpstreamRetry is the wait a rate-limited (429) or unavailable (503)
// answer asks for when no provider of the run named one: long enough that
// a client's retry does not meet the same limit within the minute most
// providers count in, short enough that the OpenAI SDKs, which honour a
// wait of up to 60 s, still retry after it rather than after their own
// half-second backoff.
const UpstreamRetry = 30 * time.Second

// MaxUpstreamRetry is the longest provider's wait a 429 or 503 passes on:
// a provider's (or a gateway's) Retry-After is not this server's to vouch
// for, and a client that honours a wait of days would stop for days; after
// an hour it asks again and meets the limit afresh.
const MaxUpstreamRetry = time.Hour

// keyRefused is a team the provider refused this server's key for before
// it started (coordination.ErrKeyRefused): the fault is upstream of this
// server and in its operator's hands, so a 502 (not a 500: this server
// did not fail) that OpenAI's clients must not retry, each retry asking
// the provider again with the same key. msg names the key's variable and
// never holds the key (providers mask it).
func keyRefused(msg string) *httpError {
	e := refusal(http.StatusBadGateway, "upstream_error", "upstream_auth_failed", "",
		msg+"; the model provider refused this server's API key, so the server's operator must set a valid key for it (retrying will not help)")
	e.noRetry = true
	return e
}

// upstream is how a run that every agent's provider failed the same way
// is answered: its status, type and code, what to tell the client, and
// whether a retry might meet another answer.
type upstream struct {
	status    int
	typ, code string
	advice    string
	transient bool
}

// upstreamOf sorts a provider's failure class; ok is false for a class
// that is no provider's (a budget, a tool-call cap, bad output).
func upstreamOf(class string) (upstream, bool) {
	switch providers.Class(class) {
	case providers.ClassAuth:
		return upstream{http.StatusBadGateway, "upstream_error", "upstream_auth_failed",
			"the model provider refused this server's API key, so the server's operator must set a valid key for it (retrying will not help)", false}, true
	case providers.ClassQuota:
		return upstream{http.StatusBadGateway, "upstream_error", "upstream_quota_exceeded",
			"the model provider's account behind this server's key is out of quota, so the server's operator must see to its billing (retrying will not help)", false}, true
	case providers.ClassRateLimit:
		return upstream{http.StatusTooManyRequests, "rate_limit_error", "upstream_rate_limited",
			"the model provider rate-limited this server's key; try again later", true}, true
	case providers.ClassOverloaded, providers.ClassProvider, providers.ClassTimeout:
		return upstream{http.StatusServiceUnavailable, "server_error", "upstream_unavailable",
			"the model provider was unavailable (overloaded, failing or not answering in time); try again later", true}, true
	}
	return upstream{}, false
}

// upstreamFailed answers a failed run whose agents all failed upstream the
// same way as that failure, not as 422 no_answer, which did not say it;
// nil when they failed in different ways or not upstream. A retry runs,
// and pays for, the team again (noAnswer), so only a transient failure of
// a run that cost nothing may be retried: anything else carries
// x-should-retry: false, whatever its status.
func upstreamFailed(res *coordination.TeamResult) *httpError {
	if res.Status != coordination.StatusFailed || len(res.Dropped) == 0 {
		return nil
	}
	var first upstream
	for i, d := range res.Dropped {
		u, ok := upstreamOf(d.Class)
		if !ok || (i > 0 && u.code != first.code) {
			return nil
		}
		if i == 0 {
			first = u
		}
	}
	d := res.Dropped[0]
	msg := fmt.Sprintf("the team's agents all failed upstream (agent %s, %s: %s); %s. Session %s keeps its trace.",
		d.AgentID, d.Model, d.Message, first.advice, res.SessionID)
	e := refusal(first.status, first.typ, first.code, "", msg)
	spent := res.Usage.Input+res.Usage.Output > 0 || (res.CostUSD != nil && *res.CostUSD > 0)
	e.noRetry = !first.transient || spent
	if first.transient {
		e.retryAfter = upstreamWait(res.Dropped)
	}
	return e
}

// upstreamWait is how long a client should wait before it sends a request
// its run's providers rate-limited or found unavailable again: the longest
// wait a provider asked of the agents (the ledger keeps it with each
// failure), at most MaxUpstreamRetry, else UpstreamRetry. Sent even with x-should-retry: false (a run
// that cost something): a person or a client that retries anyway reads it.
func upstreamWait(dropped []coordination.DroppedAgent) time.Duration {
	var longest int64
	for _, d := range dropped {
		longest = max(longest, d.RetryAfterMS)
	}
	if longest <= 0 {
		return UpstreamRetry
	}
	// compared in milliseconds, which a Duration of a stored value could
	// overflow
	return time.Duration(min(longest, MaxUpstreamRetry.Milliseconds())) * time.Millisecond
}
