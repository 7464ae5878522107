package permissions

import (
	"errors"
	"strings"
	"testing"
)

// TestAClientNarrowsAndNeverWidens: each of a client's fields either makes
// the operator's rules stricter or is refused, naming the field.
func TestAClientNarrowsAndNeverWidens(t *testing.T) {
	op := Rules{Role: Workspace, Allow: []string{"exec(go test *)"}, Deny: []string{"net(db.internal)"}, ApprovalTimeoutSeconds: 120}
	cases := []struct {
		name   string
		op     Rules
		client Rules
		widens string // the field named in the refusal; "" when accepted
		action Action // decided under the result, when accepted
		want   Verdict
	}{
		{"a deny is added", op, Rules{Deny: []string{"exec(make *)"}}, "", Action{Exec, "make all"}, Deny},
		{"an ask asks where the operator allows", op, Rules{Ask: []string{"exec(go test ./...)"}}, "", Action{Exec, "go test ./..."}, Ask},
		{"an ask never turns a deny into an ask", op, Rules{Ask: []string{"net(db.internal)"}}, "", Action{Net, "db.internal"}, Deny},
		{"a stricter role", op, Rules{Role: ReadOnly}, "", Action{Write, "main.go"}, Deny},
		{"the same role", op, Rules{Role: Workspace}, "", Action{Write, "main.go"}, Allow},
		{"a stricter role than the default", Rules{}, Rules{Role: ReadOnly}, "", Action{Write, "f"}, Deny},
		{"an allow the operator has changes nothing", op, Rules{Allow: []string{"exec(go test *)"}}, "", Action{Exec, "go test ./x"}, Allow},
		{"deny-all under risk-based", op, Rules{Approvals: DenyAll}, "", Action{Net, "example.com"}, Ask},
		{"risk-based under allow-all", Rules{Approvals: AllowAll}, Rules{Approvals: RiskBased}, "", Action{Net, "example.com"}, Ask},
		{"a shorter timeout", op, Rules{ApprovalTimeoutSeconds: 30}, "", Action{Read, "x"}, Allow},

		{"an allow the operator lacks", op, Rules{Allow: []string{"net(*)"}}, "permissions.allow", Action{}, ""},
		{"a looser role", op, Rules{Role: Builder}, "permissions.role", Action{}, ""},
		{"a looser role than read-only", Rules{Role: ReadOnly}, Rules{Role: Workspace}, "permissions.role", Action{}, ""},
		{"allow-all", op, Rules{Approvals: AllowAll}, "permissions.approvals", Action{}, ""},
		{"risk-based under deny-all", Rules{Approvals: DenyAll}, Rules{Approvals: RiskBased}, "permissions.approvals", Action{}, ""},
		{"a longer timeout", op, Rules{ApprovalTimeoutSeconds: 600}, "permissions.approval_timeout_seconds", Action{}, ""},
		{"a longer timeout than the default", Rules{}, Rules{ApprovalTimeoutSeconds: 3600}, "permissions.approval_timeout_seconds", Action{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Narrow(c.op, c.client)
			if c.widens != "" {
				if !errors.Is(err, ErrWidens) || !strings.Contains(err.Error(), c.widens) {
					t.Fatalf("Narrow = %v, want a refusal naming %s", err, c.widens)
				}
				return
			}
			if err != nil {
				t.Fatalf("a narrowing was refused: %v", err)
			}
			if d := Decide(got, c.action); d.Verdict != c.want {
				t.Errorf("%s under the narrowed rules = %s (%s), want %s", c.action, d.Verdict, d.Rule, c.want)
			}
			if c.client.Approvals != "" && got.Approvals.Or() != c.client.Approvals {
				t.Errorf("the policy is %s, want the client's %s", got.Approvals.Or(), c.client.Approvals)
			}
			if got.Timeout() > c.op.Timeout() {
				t.Errorf("the approval timeout grew from %s to %s", c.op.Timeout(), got.Timeout())
			}
			if got.Approvals.rank() > c.op.Approvals.rank() || got.Role.rank() > c.op.Role.rank() {
				t.Errorf("the policy or role loosened: %+v over %+v", got, c.op)
			}
		})
	}
}

// TestARefusalNamesEveryWideningField: one refusal lists them all, so a
// client fixes its call once.
func TestARefusalNamesEveryWideningField(t *testing.T) {
	_, err := Narrow(Rules{}, Rules{Role: Builder, Allow: []string{"net"}, Approvals: AllowAll})
	for _, f := range []string{"permissions.role", "permissions.allow", "permissions.approvals"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("the refusal %v does not name %s", err, f)
		}
	}
}

// TestANarrowingThatNoLongerFitsRefusesEveryAsk: when the operator has
// tightened their rules under a session, the client's narrowing keeps only
// what is stricter and every ask is refused.
func TestANarrowingThatNoLongerFitsRefusesEveryAsk(t *testing.T) {
	operator := Rules{Role: Workspace, Approvals: RiskBased, ApprovalTimeoutSeconds: 60, Deny: []string{"net(evil.example)"}}
	client := Rules{Role: Builder, Approvals: AllowAll, ApprovalTimeoutSeconds: 30, Allow: []string{"exec(*)"}, Deny: []string{"exec(git push*)"}, Ask: []string{"net(*)"}}
	if _, err := Narrow(operator, client); err == nil {
		t.Fatal("the client's looser role and policy fit the tightened rules")
	}
	got := Unfit(operator, client)
	if got.Role != Workspace || got.Approvals != DenyAll || got.ApprovalTimeoutSeconds != 30 || len(got.Allow) != 0 {
		t.Errorf("Unfit = %+v; want the operator's workspace role, deny-all, 30 s and no allow of the client's", got)
	}
	for action, want := range map[Action]Verdict{
		{Kind: Exec, Target: "git push origin main"}: Deny,
		{Kind: Net, Target: "evil.example"}:          Deny,
		{Kind: Net, Target: "pypi.org"}:              Ask,
	} {
		if d := Decide(got, action); d.Verdict != want {
			t.Errorf("%s under the unfit rules = %s (%s), want %s", action, d.Verdict, d.Rule, want)
		}
	}
	if r := Unfit(Rules{Role: Builder}, Rules{Role: ReadOnly}); r.Role != ReadOnly {
		t.Errorf("a stricter role of the client's is kept; got %s", r.Role)
	}
}
