package cliagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/providers"
)

// A login the CLI refreshed reaches the user's config directory only when
// it is a refresh by its CLI's rule (a JSON object whose token fields
// alone changed, none removed), and the user's file still holds what was
// copied in; the copy
// that lands is readable by the user only, and the agent's copy is gone
// with its run (one more copy of a login on disk for a month is not kept).
func TestARefreshedLoginIsCopiedBackOnlyOverTheLoginItWasGiven(t *testing.T) {
	cases := []struct {
		name      string
		refreshed string // what the CLI left in its copy
		meanwhile string // what the user's file holds by then ("" unchanged)
		want      string // the user's file after
	}{
		{"refreshed", `{"token":"new"}`, "", `{"token":"new"}`},
		{"unchanged", `{"token":"old"}`, "", `{"token":"old"}`},
		{"garbled", `{"token":"ne`, "", `{"token":"old"}`},
		// Valid JSON that is not a refresh of the login (an agent's, or a
		// CLI's logout) would log the user out just as well.
		{"JSON, not an object", `null`, "", `{"token":"old"}`},
		{"an object without the login's keys", `{}`, "", `{"token":"old"}`},
		{"another object", `{"account":"the agent's"}`, "", `{"token":"old"}`},
		{"refreshed with a key more", `{"token":"new","expiry":1}`, "", `{"token":"new","expiry":1}`},
		{"the user logged in again meanwhile", `{"token":"new"}`, `{"token":"users"}`, `{"token":"users"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			user, private := t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(user, "login.json"), []byte(`{"token":"old"}`), 0o644)
			os.WriteFile(filepath.Join(user, "settings.json"), []byte(`{"hooks":"the user's"}`), 0o600)
			var c Confinement
			lc, err := stageConfig(&c, Info{LoginFiles: []string{"login.json"}, LoginRules: fakeLoginRules, SetupFiles: []string{"settings.json"}}, user, private, "/home/agent/.fake", t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(private, "login.json"), []byte(tc.refreshed), 0o600)
			os.WriteFile(filepath.Join(private, "settings.json"), []byte(`{"hooks":"the agent's"}`), 0o600)
			if tc.meanwhile != "" {
				os.WriteFile(filepath.Join(user, "login.json"), []byte(tc.meanwhile), 0o600)
			}
			lc.syncBack()
			if b, _ := os.ReadFile(filepath.Join(user, "login.json")); string(b) != tc.want {
				t.Errorf("the user's login holds %q, want %q", b, tc.want)
			}
			if b, _ := os.ReadFile(filepath.Join(user, "settings.json")); string(b) != `{"hooks":"the user's"}` {
				t.Errorf("the user's settings hold %q: only the login may be copied back", b)
			}
			if tc.want != `{"token":"old"}` && tc.meanwhile == "" {
				if st, _ := os.Stat(filepath.Join(user, "login.json")); st.Mode().Perm() != 0o600 {
					t.Errorf("the copied-back login has mode %v, want 0600", st.Mode().Perm())
				}
			}
			if _, err := os.Stat(filepath.Join(private, "login.json")); err == nil {
				t.Errorf("the agent's copy of the login outlived its run")
			}
			if entries, _ := os.ReadDir(user); len(entries) != 2 {
				t.Errorf("the user's config dir holds %d entries, want its 2 (a temp file left?)", len(entries))
			}
		})
	}
}

// An agent's private config directory starts each run from the user's:
// their login copied in over the agent's old copy (or removed, when they
// logged out), their setup bound read-only, and what the agent left under
// a setup file's name gone.
func TestAnAgentsConfigDirStartsEachRunFromTheUsers(t *testing.T) {
	user, private := t.TempDir(), t.TempDir()
	info := Info{LoginFiles: []string{"login.json", "other-login.json"}, LoginRules: fakeLoginRules, SetupFiles: []string{"settings.json", "CLAUDE.md"}}
	os.WriteFile(filepath.Join(user, "login.json"), []byte(`{"token":"users"}`), 0o600)
	os.WriteFile(filepath.Join(user, "settings.json"), []byte(`{}`), 0o600)
	os.WriteFile(filepath.Join(private, "login.json"), []byte(`{"token":"agents"}`), 0o600)
	os.WriteFile(filepath.Join(private, "other-login.json"), []byte(`{"token":"agents"}`), 0o600)
	os.WriteFile(filepath.Join(private, "CLAUDE.md"), []byte("the agent's"), 0o600)
	var c Confinement
	if _, err := stageConfig(&c, info, user, private, "/home/agent/.fake", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(private, "login.json")); string(b) != `{"token":"users"}` {
		t.Errorf("the agent's login copy holds %q, want the user's", b)
	}
	if _, err := os.Stat(filepath.Join(private, "other-login.json")); err == nil {
		t.Errorf("the agent kept a login the user no longer has")
	}
	if _, err := os.Stat(filepath.Join(private, "CLAUDE.md")); err == nil {
		t.Errorf("what the agent left under a setup file's name is still there")
	}
	want := Bind{Src: filepath.Join(user, "settings.json"), Dst: "/home/agent/.fake/settings.json"}
	if len(c.Pinned) != 2 || c.Pinned[0] != want || c.Pinned[1].Dst != "/home/agent/.fake/CLAUDE.md" {
		t.Fatalf("pinned %v, want the user's settings %v and an empty CLAUDE.md", c.Pinned, want)
	}
	if b, err := os.ReadFile(c.Pinned[1].Src); err != nil || len(b) != 0 || strings.HasPrefix(c.Pinned[1].Src, private) {
		t.Errorf("the CLAUDE.md the user has none of is %s holding %q (%v), want an empty file outside the agent's config dir", c.Pinned[1].Src, b, err)
	}
	for _, b := range c.ReadWrite {
		if b.Src == user {
			t.Errorf("the user's config dir is bound writable: %v", b)
		}
	}
}

// A CLI that keeps its login in the run directory (Gemini CLI's home is
// there) has the login it refreshed copied back to the user's too,
// sandboxed or not: its OAuth refresh may rotate the refresh token, and
// one left in a run directory removed with the step would log the user out.
func TestALoginRefreshedInTheRunDirectoryIsCopiedBack(t *testing.T) {
	for _, confined := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "sandboxed"}[confined], func(t *testing.T) {
			home := t.TempDir()
			cfg := filepath.Join(home, ".fake")
			os.MkdirAll(cfg, 0o700)
			os.WriteFile(filepath.Join(cfg, "login.json"), []byte(`{"token":"old"}`), 0o600)
			h := newHarness(t, "runlogin", func(o *Options) {
				o.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
				if confined {
					o.Sandbox = sandboxed(t)
				}
			})
			act, _, err := h.step(h.request())
			if err != nil {
				t.Fatal(err)
			}
			if act.Text != "refreshed: <nil>" {
				t.Fatalf("the CLI could not refresh its login: %s", act.Text)
			}
			if b, _ := os.ReadFile(filepath.Join(cfg, "login.json")); string(b) != `{"token":"refreshed in the run"}` {
				t.Errorf("the user's login holds %q: the refresh in the run directory did not reach it", b)
			}
		})
	}
}

// A login an agent's run swapped for another account's is not copied back,
// and the step's record says so, naming the user's file: the user's login
// is as it was, and the user can tell why a rotated refresh token may have
// left them logged out. Before, the copy-back dropped what it refused
// without a word.
func TestALoginSwappedInTheRunIsReportedNotCopiedBack(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, ".fake")
	os.MkdirAll(cfg, 0o700)
	os.WriteFile(filepath.Join(cfg, "login.json"), []byte(`{"token":"old"}`), 0o600)
	h := newHarness(t, "runswap", func(o *Options) {
		o.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	})
	act, _, err := h.step(h.request())
	if err != nil {
		t.Fatal(err)
	}
	if act.Text != "swapped: <nil>" {
		t.Fatalf("the CLI could not write its login: %s", act.Text)
	}
	if b, _ := os.ReadFile(filepath.Join(cfg, "login.json")); string(b) != `{"token":"old"}` {
		t.Errorf("the user's login holds %q, want it untouched", b)
	}
	var warned []providers.ToolRecord
	for _, r := range h.rec.tools {
		if r.Kind == "login" {
			warned = append(warned, r)
		}
	}
	if len(warned) != 1 || !warned[0].IsError || !strings.Contains(string(warned[0].Arguments), "login.json") {
		t.Errorf("login records %+v, want one error naming the user's login.json", warned)
	}
}

// Two agents given the same login, both refreshing it and ending at once:
// the user's file ends holding one of their refreshes, never the login
// they were given, and the other's, which no longer matches what the
// user's file holds, is dropped rather than written over the first.
func TestTwoAgentsRefreshingOneLoginAtOnceLeaveOneRefresh(t *testing.T) {
	for round := range 50 {
		user := t.TempDir()
		os.WriteFile(filepath.Join(user, "login.json"), []byte(`{"token":"old"}`), 0o600)
		info := Info{LoginFiles: []string{"login.json"}, LoginRules: fakeLoginRules}
		var lcs [2]*loginCopy
		for i := range lcs {
			private := t.TempDir()
			var c Confinement
			lc, err := stageConfig(&c, info, user, private, "/home/agent/.fake", t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(private, "login.json"), []byte(fmt.Sprintf(`{"token":"agent %d's"}`, i)), 0o600)
			lcs[i] = lc
		}
		var wg sync.WaitGroup
		for _, lc := range lcs {
			wg.Go(func() { lc.syncBack() })
		}
		wg.Wait()
		got, _ := os.ReadFile(filepath.Join(user, "login.json"))
		if string(got) != `{"token":"agent 0's"}` && string(got) != `{"token":"agent 1's"}` {
			t.Fatalf("round %d: the user's login holds %q, want one agent's refresh", round, got)
		}
	}
}

// Another process copying a refresh back to the same login (a second
// server, a `massgen-mcp run` beside it) holds the user's config
// directory's lock while it checks and writes; a copy-back here waits for
// it, then finds the user's file changed and leaves it, instead of both
// finding the login they were given and the second writing over the
// first's refresh.
func TestACopyBackWaitsForAnotherProcesssCopyBack(t *testing.T) {
	user, private := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(user, "login.json"), []byte(`{"token":"old"}`), 0o600)
	var c Confinement
	lc, err := stageConfig(&c, Info{LoginFiles: []string{"login.json"}, LoginRules: fakeLoginRules}, user, private, "/home/agent/.fake", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(private, "login.json"), []byte(`{"token":"this agent's"}`), 0o600)
	unlock := lockAsAnotherProcess(t, user)
	done := make(chan struct{})
	go func() { lc.syncBack(); close(done) }()
	select {
	case <-done:
	case <-time.After(200 * time.Millisecond):
	}
	if got, _ := os.ReadFile(filepath.Join(user, "login.json")); string(got) != `{"token":"old"}` {
		t.Errorf("the user's login holds %q while another process held its directory's lock", got)
	}
	os.WriteFile(filepath.Join(user, "login.json"), []byte(`{"token":"the other process's"}`), 0o600)
	unlock()
	<-done
	if got, _ := os.ReadFile(filepath.Join(user, "login.json")); string(got) != `{"token":"the other process's"}` {
		t.Errorf("the user's login holds %q: the other process's refresh was written over", got)
	}
}

// A setup directory shown at the user's own path too (Info.SetupAtPath)
// stays read-only when that path is where the sandbox shows the agent's
// private config directory: a user whose HOME is the sandbox's own
// /home/agent (a container's user "agent") has ~/.claude/plugins at the
// very path of the agent's plugins. Before, the bind at the user's path,
// mounted before the agent's writable config directory, was covered by
// it, and the pinned bind at the same path was dropped as a duplicate:
// the agent could plant a plugin its next run loads.
func TestASetupDirAtTheUsersPathStaysReadOnlyWhereTheSandboxShowsTheAgentsConfigDir(t *testing.T) {
	sb := sandboxed(t)
	user, private := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(user, "plugins"), 0o700)
	os.WriteFile(filepath.Join(user, "plugins", "installed_plugins.json"), []byte(`{}`), 0o600)
	info := Info{SetupFiles: []string{"settings.json", "plugins"}, SetupAtPath: []string{"plugins"}}
	c := Confinement{Workspace: t.TempDir(), Home: t.TempDir()}
	// The agent's config directory shown at the user's own: in == user.
	if _, err := stageConfig(&c, info, user, private, user, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	plugins := filepath.Join(user, "plugins")
	cmd, err := sb.Command(context.Background(), c, []string{"/bin/sh", "-c", `mkdir -p "$1" && echo planted > "$1/planted"; cat "$1/installed_plugins.json"`, "sh", plugins})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := cmd.CombinedOutput()
	for _, dir := range []string{filepath.Join(private, "plugins"), plugins} {
		if _, err := os.Stat(filepath.Join(dir, "planted")); err == nil {
			t.Errorf("the agent wrote %s/planted; the plugins directory must be read-only (sandbox said %q)", dir, out)
		}
	}
	if !strings.Contains(string(out), "{}") {
		t.Errorf("the sandbox shows no user's plugins at %s: %q", plugins, out)
	}
}

// The user's setup a CLI reads from HOME outside its config directory
// (Info.HomeSetup: Codex's ~/.agents/skills) is shown read-only at the same
// path in a sandboxed agent's HOME, an empty directory when the user has
// none; what an earlier run left there is gone, and the agent can neither
// write into it nor rename its parent away to make its own.
func TestTheUsersSetupInHOMEIsReadOnlyInTheAgentsHOME(t *testing.T) {
	sb := sandboxed(t)
	info := Info{HomeSetup: []string{".agents/skills"}}
	for _, has := range []bool{true, false} {
		t.Run(map[bool]string{true: "the user's", false: "none"}[has], func(t *testing.T) {
			user, home := t.TempDir(), t.TempDir()
			if has {
				os.MkdirAll(filepath.Join(user, ".agents", "skills", "mine"), 0o700)
				os.WriteFile(filepath.Join(user, ".agents", "skills", "mine", "SKILL.md"), []byte("the user's skill"), 0o600)
			}
			left := filepath.Join(home, ".agents", "skills", "planted")
			os.MkdirAll(left, 0o700)
			os.WriteFile(filepath.Join(left, "SKILL.md"), []byte("an earlier run's"), 0o600)
			c := Confinement{Workspace: t.TempDir(), Home: home}
			if err := stageHome(&c, info, user, home, "/home/agent", t.TempDir()); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(left); err == nil {
				t.Errorf("what an earlier run left in ~/.agents/skills is still there")
			}
			if len(c.Pinned) != 1 || c.Pinned[0].Dst != "/home/agent/.agents/skills" || (c.Pinned[0].Src == filepath.Join(user, ".agents", "skills")) != has {
				t.Fatalf("pinned %v, want ~/.agents/skills from the user's (has: %v) or an empty one", c.Pinned, has)
			}
			script := `cat /home/agent/.agents/skills/mine/SKILL.md; mkdir -p /home/agent/.agents/skills/x && echo planted > /home/agent/.agents/skills/x/SKILL.md
mv /home/agent/.agents /home/agent/moved && mkdir -p /home/agent/.agents/skills/y && echo planted > /home/agent/.agents/skills/y/SKILL.md
true`
			cmd, err := sb.Command(context.Background(), c, []string{"/bin/sh", "-c", script})
			if err != nil {
				t.Fatal(err)
			}
			out, _ := cmd.CombinedOutput()
			if strings.Contains(string(out), "the user's skill") != has {
				t.Errorf("the sandbox showed %q; want the user's skill only when they have one", out)
			}
			for _, p := range []string{filepath.Join(home, ".agents", "skills", "x"), filepath.Join(home, "moved"), filepath.Join(home, ".agents", "skills", "y"), filepath.Join(user, ".agents", "skills", "x")} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("the agent made %s (the sandbox said %q)", p, out)
				}
			}
		})
	}
}

// A name of the config directory that must never show the user's
// (Info.EmptyFiles) is an empty read-only one whether or not the user has
// it, and what an earlier run left there is gone.
func TestEmptyFilesAreNeverTheUsers(t *testing.T) {
	user, private := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(user, "ide"), 0o700)
	os.WriteFile(filepath.Join(user, "ide", "1234.lock"), []byte(`{"authToken":"the user's"}`), 0o600)
	os.MkdirAll(filepath.Join(private, "ide"), 0o700)
	os.WriteFile(filepath.Join(private, "ide", "9999.lock"), []byte(`{"authToken":"the agent's"}`), 0o600)
	info := Info{EmptyFiles: []string{"ide"}}
	var c Confinement
	if _, err := stageConfig(&c, info, user, private, "/home/agent/.fake", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(private, "ide")); err == nil {
		t.Errorf("what an earlier run left in ide is still there")
	}
	if len(c.Pinned) != 1 || c.Pinned[0].Dst != "/home/agent/.fake/ide" {
		t.Fatalf("pinned %v, want an empty ide", c.Pinned)
	}
	if entries, err := os.ReadDir(c.Pinned[0].Src); err != nil || len(entries) != 0 || strings.HasPrefix(c.Pinned[0].Src, user) || strings.HasPrefix(c.Pinned[0].Src, private) {
		t.Errorf("ide is %s holding %v (%v), want an empty directory, neither the user's nor the agent's", c.Pinned[0].Src, entries, err)
	}
}
