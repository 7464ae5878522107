package coordination_test

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// TestAUserIsAskedOnlyForAnApplyThatMayWrite: a surface asks the user
// before an apply writes their project, and only then: never for a call
// the core refuses whatever they say (tool configuration held, both
// choices, no such session) nor for one that writes nothing (already
// applied, no write context); what they are shown is the changes the call
// writes.
func TestAUserIsAskedOnlyForAnApplyThatMayWrite(t *testing.T) {
	ctx := context.Background()
	h, _, res := hookRun(t, "")
	svc, id := h.Service, res.SessionID
	include, skip := coordination.ApplyOptions{IncludeConfig: true}, coordination.ApplyOptions{SkipConfig: true}
	for _, c := range []struct {
		name string
		id   string
		opts coordination.ApplyOptions
		ask  bool
	}{
		{"tool configuration held: refused unasked", id, coordination.ApplyOptions{}, false},
		{"both choices: refused unasked", id, coordination.ApplyOptions{IncludeConfig: true, SkipConfig: true}, false},
		{"no such session", "team_no_such_session", include, false},
		{"including the configuration writes", id, include, true},
		{"skipping the configuration writes the rest", id, skip, true},
	} {
		got := svc.ConfirmApply(ctx, c.id, c.opts)
		if (got != nil) != c.ask {
			t.Errorf("%s: asks %v, want %v", c.name, got != nil, c.ask)
			continue
		}
		if got != nil && (got.SessionID != id || got.Changes == nil || got.Changes.Count != 2 || got.Changes.ConfigCount != 1) {
			t.Errorf("%s: shows %+v, want the session's two changes, one of them tool configuration", c.name, got.Changes)
		}
	}
	if _, err := svc.ApplyChanges(ctx, id, skip); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []coordination.ApplyOptions{{}, include, skip} {
		if got := svc.ConfirmApply(ctx, id, opts); got != nil {
			t.Errorf("already applied, %+v: asks to write %+v", opts, got.Changes)
		}
	}

	sims, _ := fileHarness(t, nil)
	plain := sims.Create(coordination.TeamSpec{Task: "What is 2+2?", Models: []string{"sim", "sim"}})
	sims.Run(plain.ID)
	if got := sims.Service.ConfirmApply(ctx, plain.ID, coordination.ApplyOptions{}); got != nil {
		t.Errorf("no write context: asks to write %+v", got.Changes)
	}

	svc2, _, site := siteRun(t, "")
	if got := svc2.ConfirmApply(ctx, site.SessionID, coordination.ApplyOptions{}); got == nil || got.Changes.Count != 2 {
		t.Errorf("changes without tool configuration, no choice given: asks %+v, want the two changes shown", got)
	}
}

// TestIncludingTheConfigurationAfterASkipSaysItStaysOut: an apply is made
// once, so asking for the tool configuration after an apply left it out
// writes nothing; the result says so in one sentence, which the surfaces
// end with where the winner's files are, and says nothing for any other
// apply.
func TestIncludingTheConfigurationAfterASkipSaysItStaysOut(t *testing.T) {
	ctx := context.Background()
	h, _, res := hookRun(t, "")
	include, skip := coordination.ApplyOptions{IncludeConfig: true}, coordination.ApplyOptions{SkipConfig: true}
	first, err := h.Service.ApplyChanges(ctx, res.SessionID, skip)
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.Service.ApplyChanges(ctx, res.SessionID, include)
	if err != nil || !again.AlreadyApplied {
		t.Fatalf("include after skip: %+v %v", again, err)
	}
	want := "--include-config writes nothing now: the earlier apply left the tool configuration out (--skip-config), and changes are applied once"
	if got := again.ConfigStaysOut(include, "--include-config", "--skip-config"); got != want {
		t.Errorf("include after skip says %q, want %q", got, want)
	}
	for name, said := range map[string]string{
		"a plain second apply": again.ConfigStaysOut(coordination.ApplyOptions{}, "--include-config", "--skip-config"),
		"a second skip":        again.ConfigStaysOut(skip, "--include-config", "--skip-config"),
		"the skipping apply":   first.ConfigStaysOut(skip, "--include-config", "--skip-config"),
		// What an include that wrote the skipped files would return.
		"a first include": (&coordination.ApplyResult{SessionID: res.SessionID, Applied: again.Applied}).ConfigStaysOut(include, "--include-config", "--skip-config"),
	} {
		if said != "" {
			t.Errorf("%s says %q", name, said)
		}
	}

	h, _, res = hookRun(t, "")
	if _, err := h.Service.ApplyChanges(ctx, res.SessionID, include); err != nil {
		t.Fatal(err)
	}
	again, err = h.Service.ApplyChanges(ctx, res.SessionID, include)
	if err != nil || !again.AlreadyApplied {
		t.Fatalf("include twice: %+v %v", again, err)
	}
	if said := again.ConfigStaysOut(include, "--include-config", "--skip-config"); said != "" {
		t.Errorf("include after include (nothing left out) says %q", said)
	}
}
