package chatapi_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTheChatSurfaceStandsBesideMCPNotOnIt pins the rooms: chatapi and mcp
// are two surfaces over coordination, wired by the binary; neither imports
// the other, and chatapi links no MCP library and no provider (a team's
// agents are the core's business).
func TestTheChatSurfaceStandsBesideMCPNotOnIt(t *testing.T) {
	const mod = "github.com/massgen-go/massgen-mcp/"
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		return strings.Fields(string(out))
	}
	chat := deps(".")
	if len(chat) < 10 {
		t.Fatalf("go list -deps listed %d packages", len(chat))
	}
	for _, dep := range chat {
		switch {
		case dep == mod+"mcp" || strings.HasPrefix(dep, mod+"mcp/"):
			t.Errorf("chatapi imports %s; it asks the server through Host, which the binary wires", dep)
		case strings.HasPrefix(dep, "github.com/mark3labs/mcp-go"):
			t.Errorf("chatapi imports %s; MCP is the mcp package's", dep)
		case dep == mod+"providers/backends" || strings.HasPrefix(dep, mod+"providers/openai"):
			t.Errorf("chatapi imports %s; opening providers is the core's, through Options.Open", dep)
		}
	}
	for _, dep := range deps("../mcp") {
		if dep == mod+"chatapi" {
			t.Error("mcp imports chatapi; the binary wires the two")
		}
	}
}
