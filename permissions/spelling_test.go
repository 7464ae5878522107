package permissions

import "testing"

// A rule names a program as it runs, however the command line spells it:
// by its path (/bin/rm), split by a line continuation (backslash-newline,
// which the shell removes), behind a wrapper's option that takes a value
// (sudo -u, env -u/-C, timeout -s, exec -a, ionice -c), or run by xargs or
// find -exec.
func TestACommandsSpellingDoesNotHideItsProgram(t *testing.T) {
	rules := Rules{Deny: []string{"exec(rm *)", "exec(git push*)", "git(push*)"}}
	for _, c := range []string{
		"/bin/rm -rf src",
		"./node_modules/.bin/../../../usr/bin/rm -rf src",
		"rm \\\n-rf src",
		"r\\\nm -rf src",
		"git \\\npush origin main",
		"gi\\\nt push origin main",
		`sh -c "git \` + "\n" + `push origin main"`,
		"sudo -u me rm -rf src",
		"env -u HOME rm -rf src",
		"env -C sub rm -rf src",
		"env -S 'git push origin main'",
		"timeout -s KILL 5 rm -rf src",
		"timeout -k 1 5 git push origin main",
		"exec -a name rm -rf src",
		"ionice -c 3 rm -rf src",
		"ls | xargs rm -rf",
		"ls | xargs -I{} -n 1 rm -rf {}",
		"echo origin | xargs -r git push",
		"find . -name '*.o' -exec rm -f {} \\;",
		"find . -execdir git push origin main ';'",
	} {
		if d := Decide(rules, ForCommand(c)...); d.Verdict != Deny {
			t.Errorf("%q under deny exec(rm *), exec(git push*), git(push*): %s (%s); actions %v", c, d.Verdict, d.Rule, ForCommand(c))
		}
	}
	// What the spelling does not hide stays as it was.
	for _, c := range []string{"env FOO=1 go test ./...", "xargs -n1 echo", "find . -name x", "rmdir x", "timeout 5 make"} {
		if d := Decide(rules, ForCommand(c)...); d.Verdict != Allow {
			t.Errorf("%q: %s (%s); want allowed", c, d.Verdict, d.Rule)
		}
	}
}
