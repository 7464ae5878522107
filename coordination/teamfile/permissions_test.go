package teamfile

import (
	"slices"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/permissions"
)

func TestPermissionsOfTheTeamLieUnderEachAgents(t *testing.T) {
	team := mustParse(t, `
permissions:
  role: workspace
  deny: ["exec(git push*)"]
  approvals: deny-all
agents:
  - id: reader
    model: sim
    permissions:
      role: read-only
      allow: [net]
      approval_timeout_seconds: 30
  - id: other
    model: sim
`)
	r := team.Agents[0].Tools.Permissions
	if r == nil || r.Role != permissions.ReadOnly || r.Approvals != permissions.DenyAll || r.ApprovalTimeoutSeconds != 30 ||
		!slices.Equal(r.Deny, []string{"exec(git push*)"}) || !slices.Equal(r.Allow, []string{"net"}) {
		t.Fatalf("reader's rules = %+v", r)
	}
	o := team.Agents[1].Tools.Permissions
	if o == nil || o.Role != permissions.Workspace || !slices.Equal(o.Deny, []string{"exec(git push*)"}) {
		t.Fatalf("other's rules = %+v", o)
	}
	if !slices.Contains(team.Operator, "permissions") || !slices.Contains(team.Operator, "agents[0].permissions") {
		t.Errorf("operator-only keys %v lack the permissions", team.Operator)
	}
}

func TestBadPermissionsAreWorded(t *testing.T) {
	_, err := parse(t, `
agents:
  - model: sim
    permissions:
      role: admin
      deny: ["exex(ls)"]
      approvals: always
`, Options{})
	if err == nil {
		t.Fatal("bad permissions parsed")
	}
	for _, want := range []string{`role "admin"`, `kind "exex"`, `approvals "always"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
