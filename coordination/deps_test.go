package coordination_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTheCoreImportsNoToolingNoKeysNoMCPClient pins that the protocol core
// stays the protocol: a step's tools, sandbox and MCP servers come through
// Options.Tooling (coordination/tooling), credentials stay in
// providers/keys, and no MCP client is linked. Test files may import them.
func TestTheCoreImportsNoToolingNoKeysNoMCPClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	const mod = "github.com/massgen-go/massgen-mcp/"
	banned := map[string]string{
		mod + "providers/tools":         "a step's tools come through Options.Tooling",
		mod + "providers/tools/sandbox": "the sandbox is the Tooling's choice",
		mod + "providers/keys":          "mask with providers.MaskKeys, tell a keyless backend by providers.ErrMissingKey",
		mod + "mcp":                     "the surfaces (mcp, chatapi) call the core, never the other way",
		mod + "chatapi":                 "the surfaces (mcp, chatapi) call the core, never the other way",
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), out)
	}
	for _, dep := range deps {
		if why, ok := banned[dep]; ok {
			t.Errorf("coordination imports %s; %s", dep, why)
		}
		if strings.HasPrefix(dep, "github.com/mark3labs/mcp-go") {
			t.Errorf("coordination imports %s; MCP clients belong to the Tooling (providers/tools), the MCP server to mcp", dep)
		}
	}
}

// TestNoStoreImportsAnother pins that each store stands alone: what two
// stores share (a tenant's directory, coordination/tenantdir) lives in a
// package of its own, so the PostgreSQL store links no file store and a
// change to one store's files cannot break another's build.
func TestNoStoreImportsAnother(t *testing.T) {
	const mod = "github.com/massgen-go/massgen-mcp/coordination/"
	stores := []string{"filestore", "memstore", "pgstore"}
	args := []string{"list", "-f", `{{.ImportPath}} {{join .Deps " "}}`}
	for _, s := range stores {
		args = append(args, "./"+s)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(stores) {
		t.Fatalf("go list listed %d packages, want %d:\n%s", len(lines), len(stores), out)
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		for _, dep := range fields[1:] {
			for _, s := range stores {
				if dep == mod+s && fields[0] != dep {
					t.Errorf("%s imports %s; share the code through a package of its own (as coordination/tenantdir)", fields[0], dep)
				}
			}
		}
	}
}
