package providers

import (
	"io"
	"net/http"
)

// MaxErrorBody is how much of an error response's body a client reads: far
// more than any provider's error message, which is all it is read for.
const MaxErrorBody = 1 << 20

// BoundedErrorBodies returns a copy of c (nil: a fresh client) whose
// responses with a status of 400 or more end after MaxErrorBody bytes of
// body. The API SDKs read an error body whole before they look at it, so
// without a bound a provider (or a proxy in front of it) answering with an
// endless error body would grow the server's memory until the step's
// deadline. The status and headers (Retry-After) are untouched; a longer
// message is cut short, which only clips the text an error repeats.
func BoundedErrorBodies(c *http.Client) *http.Client {
	var out http.Client
	if c != nil {
		out = *c
	}
	next := out.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	if _, ok := next.(boundedTransport); ok {
		return &out
	}
	out.Transport = boundedTransport{next: next}
	return &out
}

type boundedTransport struct{ next http.RoundTripper }

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.next.RoundTrip(req)
	if err != nil || res == nil || res.Body == nil || res.StatusCode < 400 {
		return res, err
	}
	res.Body = &boundedBody{r: io.LimitReader(res.Body, MaxErrorBody), c: res.Body}
	if res.ContentLength > MaxErrorBody {
		res.ContentLength = -1
	}
	return res, nil
}

// boundedBody reads at most MaxErrorBody bytes; closing it closes the whole
// body, so the transport drops a connection whose body was not drained.
type boundedBody struct {
	r io.Reader
	c io.Closer
}

func (b *boundedBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *boundedBody) Close() error               { return b.c.Close() }
