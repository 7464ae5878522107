// Package permissions decides whether an agent's action may run
// (docs/DESIGN.md, "Permissions"). It owns the action algebra — read(path),
// write(path), exec(command), net(host), mcp(server/tool), git(push|…),
// publish(…) — with a blast-radius risk class (Classify, ForTool,
// ForCommand), a floor no rule or setting lifts (Floor), the operator's
// allow/ask/deny rules over action patterns (Rules, ParsePattern; deny wins,
// then the most specific rule), role presets per agent (read-only,
// workspace, builder) that also shape the sandbox (Role.SandboxReadOnly), a
// client's narrowing (Narrow: it may only make rules stricter), the one
// decision (Decide), the automation policies that answer an ask (Policy),
// the file handshake for headless runs (Handshake) and the audit record
// (Record).
//
// It is a leaf: it imports nothing of the project, so providers, the tools,
// coordination and the CLI adapters all use it. It runs nothing and knows no
// session: callers classify what an agent is about to do, ask Decide, and
// carry out (or refuse) the verdict.
//
// How a CLI adapter derives its coarse mode: a coding-agent CLI that cannot
// be asked per call is configured once per run. Coarse(rules) answers, for
// the agent's rules, whether writes in the workspace, writes outside it,
// commands, network, git push, publishing and MCP tools are allowed, asked
// or denied (each a CoarseVerdict: the verdict of the generic action, and
// Partial when some rule names a narrower pattern of that kind, which a CLI
// without per-call hooks should treat as ask or deny). Map Deny to the CLI's
// refusal (a read-only sandbox, a disallowed tool), Allow to its
// auto-approval, and Ask to its per-call approval where it has one, else to
// Deny (fail-closed), and document that gap. Role.SandboxReadOnly says
// whether the agent's sandbox must have no writable path.
//
// What this package decides is policy. Only the sandbox
// (providers/tools/sandbox, bubblewrap) is enforced by the OS; classifying a
// shell command string is best-effort (an agent can hide what a command does
// inside a script it wrote), so the floor and the rules are a second line
// behind the sandbox, never instead of it.
package permissions
