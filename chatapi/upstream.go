package chatapi

import "net/http"

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
