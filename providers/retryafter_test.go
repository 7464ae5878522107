package providers_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// TestRetryAfterReadsOnlyAWaitItCanKeep: a provider's header is untrusted
// text; a number past what a Duration holds, or Inf, was converted to
// MinInt64 on amd64 (no wait at all: the step retried at once, against a
// provider that asked for the longest wait) and to MaxInt64 on arm64 (292
// years, passed on to chat clients), and NaN likewise. A wait past a day is
// read as a day; NaN and negatives as none.
func TestRetryAfterReadsOnlyAWaitItCanKeep(t *testing.T) {
	for _, tc := range []struct {
		header, value string
		want          time.Duration // -1: a day
	}{
		{"Retry-After", "12", 12 * time.Second},
		{"Retry-After-Ms", "1500", 1500 * time.Millisecond},
		{"Retry-After", "1e30", -1},
		{"Retry-After", "Inf", -1},
		{"Retry-After", "NaN", 0},
		{"Retry-After", "-5", 0},
		{"Retry-After", "100000000", -1},
		{"Retry-After-Ms", "1e300", -1},
		{"Retry-After-Ms", "+Inf", -1},
		{"Retry-After-Ms", "NaN", 0},
	} {
		want := tc.want
		if want < 0 {
			want = 24 * time.Hour
		}
		h := http.Header{}
		h.Set(tc.header, tc.value)
		if got := providers.RetryAfter(h); got != want {
			t.Errorf("%s: %s read as %s, want %s", tc.header, tc.value, got, want)
		}
	}
}
