package providers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
)

// MaxErrorBody is how much of an error response's body a client reads: far
// more than any provider's error message, which is all it is read for.
const MaxErrorBody = 1 << 20

// MaxResponseBody is how much of a successful response's body a client
// reads: a call's whole stream, or its whole reply. The longest replies the
// APIs allow (128k output tokens) take about 40 MiB as a stream, whose events
// each repeat their framing around a few characters; a reply past this is a
// server or a model gone wrong (looping), and without a bound it would grow
// the server's memory until the step's deadline. It matches the other
// 64 MiB bounds on what one request may read (a search, a download).
const MaxResponseBody = 64 << 20

// ErrResponseTooLarge is a successful response's body passing
// MaxResponseBody; the adapter that reads it fails the call with TooLarge.
var ErrResponseTooLarge = fmt.Errorf("the response passed %d MiB, the most read of one provider response", MaxResponseBody>>20)

// TooLarge is the error of a call whose response passed MaxResponseBody; who
// names the backend and model ("openai/gpt-5.4"). It is bad output, which a
// retry would only pay for again; what the call streamed is still charged
// (Charge).
func TooLarge(who string, err error) *Error {
	return &Error{Class: ClassBadOutput, Err: err,
		Message: fmt.Sprintf("%s sent more than %d MiB in one reply, the most massgen-mcp reads of one response, so the call was stopped and what it streamed is charged as an estimate; a reply that long is a server or model gone wrong (a loop): set max_output_tokens, or use another model",
			who, MaxResponseBody>>20)}
}

// BoundedBodies returns a copy of c (nil: a fresh client) whose responses
// end after a bounded amount of body: MaxErrorBody for a status of 400 or
// more, MaxResponseBody for any other. The API SDKs read an error body whole
// before they look at it, and a stream until it ends, so without a bound a
// provider (or a proxy in front of it) answering with an endless body would
// grow the server's memory until the step's deadline. An error body is cut
// short quietly: the status and headers (Retry-After) are untouched, and a
// longer message only clips the text an error repeats. Any other body fails
// its read past the bound with ErrResponseTooLarge: a reply cut short would
// read as a complete one, or as a dropped connection worth a retry.
func BoundedBodies(c *http.Client) *http.Client {
	return withTransport(c, func(next http.RoundTripper) http.RoundTripper {
		if b, ok := next.(boundedTransport); ok {
			return b // bounded once is enough
		}
		return boundedTransport{next: next}
	})
}

type boundedTransport struct{ next http.RoundTripper }

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.next.RoundTrip(req)
	if err != nil || res == nil || res.Body == nil {
		return res, err
	}
	if res.StatusCode < 400 {
		mark, _ := req.Context().Value(capKey{}).(*atomic.Bool)
		res.Body = &cappedBody{r: res.Body, left: MaxResponseBody, mark: mark}
		return res, nil
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

// cappedBody reads a body of up to left more bytes, and fails with
// ErrResponseTooLarge once there is more.
type cappedBody struct {
	r    io.ReadCloser
	left int64
	err  error        // sticky once past the cap
	mark *atomic.Bool // set past the cap, when the request's context asked (WatchCap)
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left <= 0 {
		// One byte more tells a body of exactly the cap from a longer one.
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n > 0 {
			b.err = ErrResponseTooLarge
			if b.mark != nil {
				b.mark.Store(true)
			}
			return 0, b.err
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.r.Close() }

type capKey struct{}

// WatchCap returns a context whose requests mark it once a response's body
// passes MaxResponseBody, which Capped tells: for an SDK that reports such a
// read as something else. genai decodes the line the cap cut in two before
// it looks at the read's error, and fails on that line's JSON.
func WatchCap(ctx context.Context) context.Context {
	return context.WithValue(ctx, capKey{}, new(atomic.Bool))
}

// Capped says whether a response read under ctx (from WatchCap) passed
// MaxResponseBody.
func Capped(ctx context.Context) bool {
	mark, _ := ctx.Value(capKey{}).(*atomic.Bool)
	return mark != nil && mark.Load()
}
