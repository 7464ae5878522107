package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
)

// servedLinks is the scheme://host:port that serve's printed links (the
// MCP URL, the web view's login link, ui-link's address) name for a
// server listening on addr, and, when it listens on every interface, a
// line saying so and what other machines use ("" otherwise). A link to
// 0.0.0.0 or [::] opens from no other machine and reads oddly here, so
// the links name 127.0.0.1, which such a listener also answers; the other
// machines' line names this host and carries no key: the login link stays
// the one line that holds one.
func servedLinks(scheme string, addr net.Addr) (base, everywhere string) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return fmt.Sprintf("%s://%s", scheme, addr), ""
	}
	port := strconv.Itoa(tcp.Port)
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "<this host's name or address>"
	}
	other := fmt.Sprintf("%s://%s", scheme, net.JoinHostPort(host, port))
	return fmt.Sprintf("%s://%s", scheme, net.JoinHostPort("127.0.0.1", port)),
		fmt.Sprintf("massgen-mcp: listening on every interface, port %s; from other machines use this host's name or address: %s/mcp, %s/v1, %s/ui/ (massgen-mcp ui-link prints more login links)", port, other, other, other)
}
