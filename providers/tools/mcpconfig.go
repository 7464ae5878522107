package tools

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// MCP server types.
const (
	MCPStdio = "stdio"
	MCPHTTP  = "streamable-http"
)

// MCPServer is one of an agent's MCP servers, as the operator's team file
// gives it (MassGen's mcp_servers entry). It runs code or reaches the
// network, so it never comes from an MCP client.
type MCPServer struct {
	Type    string            `json:"type" yaml:"type"`                           // stdio | streamable-http
	Command string            `json:"command,omitempty" yaml:"command,omitempty"` // stdio: the program (on PATH or a path)
	Args    []string          `json:"args,omitempty" yaml:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty" yaml:"env,omitempty"` // stdio: ${VAR} expands from the server's environment
	// ReadOnly lists host paths a stdio server needs besides its command
	// (a script, its packages), bound read-only at the same paths.
	ReadOnly []string          `json:"read_only_paths,omitempty" yaml:"read_only_paths,omitempty"`
	URL      string            `json:"url,omitempty" yaml:"url,omitempty"`         // streamable-http
	Headers  map[string]string `json:"headers,omitempty" yaml:"headers,omitempty"` // ${VAR} expands too
	// AllowedTools, when set, offers only these of the server's tools;
	// ExcludeTools hides some. Names are the server's own.
	AllowedTools []string `json:"allowed_tools,omitempty" yaml:"allowed_tools,omitempty"`
	ExcludeTools []string `json:"exclude_tools,omitempty" yaml:"exclude_tools,omitempty"`
}

var serverName = regexp.MustCompile(`^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$`)

// ValidateMCPServers checks an agent's servers the way a team file loader
// reports problems: each message names the server and the fix.
func ValidateMCPServers(servers map[string]MCPServer) error {
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := servers[n]
		if !serverName.MatchString(n) || len(n) > 32 {
			return fmt.Errorf("mcp_servers: %q is not a usable server name; use up to 32 letters, digits, - or single _ (its tools are named mcp__<server>__<tool>)", n)
		}
		switch s.Type {
		case MCPStdio:
			if strings.TrimSpace(s.Command) == "" {
				return fmt.Errorf("mcp_servers.%s: a stdio server needs a command", n)
			}
			if s.URL != "" || len(s.Headers) > 0 {
				return fmt.Errorf("mcp_servers.%s: url and headers are for type streamable-http, not stdio", n)
			}
		case MCPHTTP:
			u, err := url.Parse(s.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("mcp_servers.%s: a streamable-http server needs an http(s) url", n)
			}
			if s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 || len(s.ReadOnly) > 0 {
				return fmt.Errorf("mcp_servers.%s: command, args, env and read_only_paths are for type stdio, not streamable-http", n)
			}
		case "":
			return fmt.Errorf("mcp_servers.%s: type is missing; write stdio or streamable-http", n)
		default:
			return fmt.Errorf("mcp_servers.%s: type %q is not known; write stdio or streamable-http", n, s.Type)
		}
		if len(s.AllowedTools) > 0 && len(s.ExcludeTools) > 0 {
			return fmt.Errorf("mcp_servers.%s: give allowed_tools or exclude_tools, not both", n)
		}
		for k := range s.Env {
			if k == "" || strings.ContainsAny(k, "= \t\n\x00") {
				return fmt.Errorf("mcp_servers.%s: env name %q is not a variable name", n, k)
			}
		}
	}
	return nil
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${VAR} (only that form, so a lone $ in a value stays) from
// the environment; a missing variable is an error rather than an empty key
// sent on.
func expand(server, field, v string, lookup func(string) (string, bool)) (string, error) {
	var missing string
	out := envRef.ReplaceAllStringFunc(v, func(ref string) string {
		k := ref[2 : len(ref)-1]
		if val, ok := lookup(k); ok {
			return val
		}
		if missing == "" {
			missing = k
		}
		return ""
	})
	if missing != "" {
		return "", fmt.Errorf("MCP server %s: %s names ${%s}, which is not set in the server's environment", server, field, missing)
	}
	return out, nil
}
