package permissions

import (
	"regexp"
	"strings"
)

// Risk is an action's blast radius: how far its harm could reach.
type Risk string

// The risk classes, from the narrowest reach to the widest.
const (
	// RiskRead changes nothing: reads, listings, searches.
	RiskRead Risk = "read"
	// RiskLocal changes the agent's own workspace or runs inside its
	// sandbox: in-workspace edits, commands, local git, MCP tools.
	RiskLocal Risk = "local"
	// RiskExternal reaches past the workspace: network egress, writes
	// outside it, git push, publishing, privilege (sudo).
	RiskExternal Risk = "external"
	// RiskCatastrophic is the floor's: it could destroy the machine or run
	// code fetched from the network. Never allowed.
	RiskCatastrophic Risk = "catastrophic"
)

func (r Risk) rank() int {
	switch r {
	case RiskRead:
		return 0
	case RiskLocal:
		return 1
	case RiskExternal:
		return 2
	}
	return 3
}

// RiskOf is an action's risk class. The floor's actions are catastrophic
// whatever their kind.
func RiskOf(a Action) Risk {
	_, hit := Floor(a)
	return riskOf(a, hit)
}

// riskOf is RiskOf with the floor already asked (floored): a command's
// floor reads its whole line, and decideOne asks once.
func riskOf(a Action, floored bool) Risk {
	if floored {
		return RiskCatastrophic
	}
	switch a.Kind {
	case Read:
		return RiskRead
	case Write:
		if a.InWorkspace() {
			return RiskLocal
		}
		return RiskExternal
	case Exec:
		if privileged(a.Target) || strings.HasPrefix(a.Target, Opaque) {
			return RiskExternal
		}
		return RiskLocal
	case MCP:
		return RiskLocal
	case Net:
		// A web search leaves as the API's own tool: the query goes out,
		// nothing comes into the machine by a command.
		if a.Target == WebSearch {
			return RiskLocal
		}
		return RiskExternal
	case Git:
		if gitSub(a.Target) == "push" {
			return RiskExternal
		}
		return RiskLocal
	}
	return RiskExternal // publish, and any kind unknown
}

// Opaque begins the target of exec(opaque: <command>), a stage whose
// commands cannot be read from its line (a shell reading another
// program's output, a program word the shell expands): external,
// so asked, whatever rule names the command it hides.
const Opaque = "opaque: "

// WebSearch is the target of net(web_search), the API's search tool.
const WebSearch = "web_search"

// privilegedRe finds a program that raises privilege at the start of a
// command or after a separator.
var privilegedRe = regexp.MustCompile(`(^|[;&|(\x60\n]|\$\()\s*(sudo|su|doas|pkexec)(\s|$)`)

func privileged(command string) bool { return privilegedRe.MatchString(command) }

func gitSub(target string) string {
	f := strings.Fields(target)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// forcePush tells whether a git target is a force push.
func forcePush(target string) bool {
	f := strings.Fields(target)
	if len(f) == 0 || f[0] != "push" {
		return false
	}
	for _, w := range f[1:] {
		if w == "-f" || w == "--force" || strings.HasPrefix(w, "--force-with-lease") || strings.HasPrefix(w, "+") || (strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "f")) {
			return true
		}
	}
	return false
}
