// Package teamfile reads team files — massgen-mcp's own small YAML format and
// MassGen's own config YAML as its users write it — into a coordination team:
// agents, rules and context. Keys MassGen knows but massgen-mcp does not honour
// are reported, each with what it would have done, never silently dropped; keys
// nobody knows are errors, so a typo never changes a run. Messages name YAML
// keys and lines, never Go types.
//
// teamfile knows nothing of MCP, of the command line, or of any provider's
// wire format. A team file comes from the operator, so it may name settings an
// MCP client may not (directories, tools, servers); callers decide where a
// file may come from.
package teamfile
