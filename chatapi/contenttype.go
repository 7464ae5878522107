package chatapi

import (
	"mime"
	"net/http"
	"strconv"
)

// notJSON refuses a completion whose body is not declared JSON. A page of
// another origin can POST text/plain, a form or no type at all without a
// CORS preflight, and a page on another loopback port passes the server's
// Origin check, while a server on loopback needs no token: such a request
// would run the operator's team, on its keys, for a page nobody asked.
// application/json makes a browser ask first, which this server never
// grants (it sends no CORS headers); every OpenAI client sends it, and
// /mcp takes nothing else either.
func notJSON(r *http.Request) *httpError {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err == nil && mt == "application/json" {
		return nil
	}
	shown := r.Header.Get("Content-Type")
	if len(shown) > 80 {
		shown = shown[:80] + "…"
	}
	return refusal(http.StatusUnsupportedMediaType, "invalid_request_error", "unsupported_media_type", "",
		"the request's Content-Type is "+quoteOrNone(shown)+": send the chat completion as JSON with 'Content-Type: application/json', as OpenAI's clients do")
}

// quoteOrNone quotes a header's value, or says it was not sent.
func quoteOrNone(v string) string {
	if v == "" {
		return "not set"
	}
	return strconv.Quote(v)
}
