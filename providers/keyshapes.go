package providers

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
)

// ErrMissingKey is wrapped by every error about a credential or endpoint
// that is not set anywhere a backend looks (keys.MissingKeyError). It lives
// here, beside the backend table, so the core can tell a keyless backend
// (and leave it out of a team) without importing package keys.
var ErrMissingKey = errors.New("missing API key")

// keyShapes catch credentials no caller named: an SDK error that echoes a
// header, a key from another variable, a URL with ?key= or user info. Each
// is found by its literal (next) before its regexp runs (keyscan.go):
// every text a CLI agent streams passes here.
var keyShapes = []keyShape{
	shape(`\bsk-[A-Za-z0-9_\-]{16,}`, "sk-[redacted]", literal("sk-")),
	shape(`\bAIza[0-9A-Za-z_\-]{30,}`, "AIza[redacted]", literal("AIza")),
	shape(`\bxai-[A-Za-z0-9_\-]{20,}`, "xai-[redacted]", literal("xai-")),
	shape(`\bgsk_[A-Za-z0-9]{20,}`, "gsk_[redacted]", literal("gsk_")),
	shape(`(?i)(\bbearer\s+)[A-Za-z0-9._~+/=\-]{8,}`, "${1}[redacted]", folded("bearer")),
	shape(`(?i)(\b(?:x-api-key|x-goog-api-key|api-key|api_key|apikey)["']?\s*[:=]\s*["']?)[^\s"'&,;]{8,}`, "${1}[redacted]", folded("x-a", "x-g", "api")),
	// A query's credential: an API key, or a proxy's token (a team file's
	// base_url may end in ?token=…, which the client sends on every request).
	shape(`(?i)([?&](?:key|api_key|api-key|apikey|token|access_token|auth_token|api_token|sig)=)[^&\s"'#]+`, "${1}[redacted]", anyOf("?&")),
	// A URL's user info (https://user:password@proxy): Go's HTTP client
	// prints the user of a request it could not send, its password as ***,
	// and a proxy's token may be the user alone.
	shape(`(\b[A-Za-z][A-Za-z0-9+.\-]*://)[^/?#\s@"'<>]+@`, "${1}[redacted]@", scheme),
	// The resolver a failed lookup asked ("lookup host on 10.0.0.2:53: no
	// such host"): the server's own network, not the reader's.
	shape(`(\blookup \S+) on [\[\]0-9A-Fa-f.:%]+:\d+`, "${1}", literal("lookup ")),
}

// MaskKeys returns text with anything shaped like an API key or an auth
// header replaced by a placeholder. It needs no secret: the core applies it
// to every failure reason and tool record it keeps, whoever opened the
// provider; keys.Mask adds the secrets a caller knows. It masks as each
// shape's regexp replacing all it matches in turn would, at a hundred
// times the speed (BenchmarkMaskKeys), and returns text itself when
// nothing matched.
func MaskKeys(text string) string {
	for i := range keyShapes {
		text = keyShapes[i].replace(text)
	}
	return text
}

// ShowSpec is a model spec as it may be shown to anyone: its base URL
// without user info, query or fragment (vllm/m@https://proxy/v1 for
// vllm/m@https://user:password@proxy/v1?token=…). An operator's team file
// may put a proxy's credentials there — Go's HTTP client sends a URL's user
// info as basic auth — and the session keeps the spec whole for its runs,
// so every view, result and message that names an agent's model shows it
// through ShowSpec. A spec without a base URL is returned as it is.
func ShowSpec(spec string) string {
	// The first @ ends the model (model names never hold one, a URL may).
	head, base, ok := strings.Cut(spec, "@")
	if !ok {
		return spec
	}
	return head + "@" + showURL(base)
}

// ShowURL is a base URL as ShowSpec shows it: without user info, query or
// fragment (URL.Redacted hides a password only, and keeps the query).
func ShowURL(raw string) string { return showURL(raw) }

// showURL is ShowSpec's base URL.
func showURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" && u.Opaque == "" {
		u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
		return u.String()
	}
	// Not a URL url.Parse reads (a password with a bad escape, or a / ? #
	// written as is): everything up to the last @ may be user info, and a
	// query or fragment follows the first ? or # after it.
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		scheme, rest = "", raw
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	if scheme == "" {
		return rest
	}
	return scheme + "://" + rest
}

// MaskJSON applies mask to a JSON text (a tool call's arguments). The
// result is still JSON: should masking ever break it, it becomes a JSON
// string of the masked text.
func MaskJSON(raw json.RawMessage, mask func(string) string) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	masked := mask(string(raw))
	if json.Valid([]byte(masked)) {
		return json.RawMessage(masked)
	}
	q, _ := json.Marshal(masked)
	return q
}
