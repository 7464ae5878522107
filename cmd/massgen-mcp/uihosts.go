package main

import (
	"net"
	"net/url"
)

// uiHosts are the host names the web view answers to besides loopback
// names and IP literals (its DNS-rebinding check): the name --http binds,
// and the host of every --allow-origin.
func uiHosts(addr string, origins []string) []string {
	var out []string
	if h, _, err := net.SplitHostPort(addr); err == nil && h != "" && net.ParseIP(h) == nil {
		out = append(out, h)
	}
	for _, o := range origins {
		if u, err := url.Parse(o); err == nil && u.Hostname() != "" {
			out = append(out, u.Hostname())
		}
	}
	return out
}
