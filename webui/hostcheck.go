package webui

import (
	"net"
	"strings"
)

// hostAllowed is the DNS-rebinding check: a browser sends the name it
// resolved as Host, so a page of an attacker's name re-pointed at this
// address carries that name. Loopback names, IP literals (no DNS, so
// nothing to rebind) and the names the operator allowed pass.
func (h *Handler) hostAllowed(host string) bool {
	name := host
	if n, _, err := net.SplitHostPort(host); err == nil {
		name = n
	}
	name = strings.ToLower(strings.TrimSuffix(strings.Trim(name, "[]"), "."))
	if name == "" {
		return false
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") || net.ParseIP(name) != nil {
		return true
	}
	for _, a := range h.opts.AllowedHosts {
		if strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}
