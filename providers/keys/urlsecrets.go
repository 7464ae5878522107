package keys

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// publicQuery are query parameters a base URL carries that are never
// credentials: masking their values ("2024-10-21") would garble messages
// and protect nothing.
var publicQuery = map[string]bool{"api-version": true, "api_version": true, "alt": true}

// BaseURLSecrets are the credentials a base URL may carry, for Redact: its
// user info (user, password, and both as the basic auth header the HTTP
// client sends from them) and every query value but a few known public
// ones, as written and decoded. A proxy's credential rides in the query
// under any name (?code=, ?sig=, ?secret=), so key shapes alone cannot
// catch it when the proxy echoes the request it refused; the base URL
// itself is shown without them everywhere (providers.ShowSpec).
func BaseURLSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil
	}
	var out []string
	if u.User != nil {
		user := u.User.Username()
		pass, _ := u.User.Password()
		out = append(out, user, pass, base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
	}
	for _, pair := range strings.Split(u.RawQuery, "&") {
		name, value, _ := strings.Cut(pair, "=")
		if n, err := url.QueryUnescape(name); err == nil && publicQuery[strings.ToLower(n)] {
			continue
		}
		out = append(out, value)
		if v, err := url.QueryUnescape(value); err == nil && v != value {
			out = append(out, v)
		}
	}
	return out
}
