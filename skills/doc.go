// Package skills holds the Agent Skills that drive this server's tools from
// an outer agent (Claude Code, Codex, Cursor, VS Code): team-run (lead a team
// step by step), massgen-run (hand a run to run_team) and checkpoint (review
// a risky step), each a SKILL.md with name/description front matter plus
// references/, and the slash commands of the Claude Code plugin
// (commands/). They are embedded in the binary so `massgen-mcp install
// --skills` can copy them where a client loads them.
//
// skills knows nothing of the server's code: a test checks every tool and
// argument the texts name against the server's tools/list.
package skills
