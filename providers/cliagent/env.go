package cliagent

import (
	"slices"
	"strings"
)

// commonEnv are the variables every CLI may see besides its own: the search
// path, locale and time zone, and proxy and certificate settings (a CLI
// behind a corporate proxy must reach its API the way the server does).
var commonEnv = []string{
	"PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "USER", "LOGNAME",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
}

// childEnv is the environment of one CLI run: from server (KEY=VALUE pairs)
// only the common variables and the CLI's own, then the CLI's defaults for
// what the server leaves unset, then fixed (HOME, TMPDIR, the config
// directory), which nothing overrides. Nothing else reaches the child.
func childEnv(server []string, p EnvPolicy, fixed map[string]string) []string {
	vals := map[string]string{}
	var order []string
	put := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
	}
	for _, kv := range server {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || !allowed(k, p) {
			continue
		}
		if _, fixedKey := fixed[k]; fixedKey {
			continue
		}
		put(k, v)
	}
	for _, k := range sortedKeys(p.Defaults) {
		if _, set := vals[k]; !set {
			put(k, p.Defaults[k])
		}
	}
	for _, k := range sortedKeys(fixed) {
		put(k, fixed[k])
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+vals[k])
	}
	return out
}

// Allows tells whether a server variable may reach the CLI: the check that
// keeps every other backend's key and base URL away from it.
func (p EnvPolicy) Allows(name string) bool { return allowed(name, p) }

// allowed tells whether a server variable may reach the CLI.
func allowed(name string, p EnvPolicy) bool {
	if slices.Contains(commonEnv, name) || slices.Contains(p.Names, name) {
		return true
	}
	for _, pre := range p.Prefixes {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// lookupEnv finds a variable in KEY=VALUE pairs (the last one wins, as in
// a process environment built by appending).
func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}
