// Package coordination is the MassGen protocol: sessions and their rules, the
// append-only ledger, everything derived from it (staleness, standing votes,
// next agents, consensus, forced consensus), aliases, labels and prompts, validation of
// workflow calls, the run loop, final answers, evaluation criteria for a
// session (generated, written or default, attached before the first step:
// criteria.go), and the Store interface with its file and memory
// implementations. A caller hears a session one way, a subscription to its
// observations (observe.go: entries, progress, activity, store changes).
// What is not protocol hangs on hooks the program passes in Options:
// checkpoint reviews (Options.Reviews, review.go; coordination/checkpoint
// gives them their meaning), the process's activity (Options.OnModelCall;
// cmd's garbage-collector policy) and a step's tools and its agents' MCP
// servers (Options.Tooling, tooling.go; coordination/tooling over
// providers/tools).
//
// coordination knows nothing of MCP or of any provider's wire format: it hands
// a providers.Request to a providers.Provider and records what comes back. It
// imports no tools, sandbox, keys or MCP client (deps_test.go).
package coordination
