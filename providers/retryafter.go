package providers

import (
	"net/http"
	"strconv"
	"time"
)

// longestRetryAfter is the longest wait RetryAfter reads: a provider's
// header is untrusted text, and a number past what a Duration holds would
// otherwise convert to a negative wait (amd64) or to centuries (arm64).
const longestRetryAfter = 24 * time.Hour

// RetryAfter reads the wait a provider's response asks for: retry-after-ms
// first (OpenAI and Anthropic send it), then Retry-After in seconds or as an
// HTTP date. Zero when there is none, it has passed, or it is no number (NaN);
// a wait past a day is read as a day.
func RetryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return waitOf(ms, time.Millisecond)
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if !(s > 0) { // negative, zero or NaN
			return 0
		}
		return waitOf(s, time.Second)
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return min(d, longestRetryAfter)
		}
	}
	return 0
}

// waitOf is n units, a positive number or +Inf, at most longestRetryAfter;
// compared as floats so that it never overflows a Duration.
func waitOf(n float64, unit time.Duration) time.Duration {
	if n >= float64(longestRetryAfter/unit) {
		return longestRetryAfter
	}
	return time.Duration(n * float64(unit))
}
