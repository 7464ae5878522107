package permissions

import "testing"

// substitutionsBashRuns are lines whose push bash runs from inside a
// command substitution (checked with bash 5.2, a shell function named git
// in its place). A backtick substitution runs to the first backtick not
// escaped by a backslash, whatever quotes it holds, and inside it \`, \\
// and \$ (and \" within "…") lose their backslash before its line is read;
// a $(…) runs to the ) that closes it outside its own quotes. The reader
// ended a backtick at an escaped one and a $(…) at a ) inside quotes, and
// the push after was read as an argument or not at all.
var substitutionsBashRuns = []string{
	// a backtick substitution inside "…" holding double quotes
	"cat <<E \"`echo \"x\"; git push origin main`\"",
	"echo \"`echo \"x\"; git push origin main`\"",
	"echo \"`git push origin main`\"",
	"echo \"x`echo \"a\"`y\" ; git push origin main",
	"echo \"`echo \"a\"`\" \"`git push origin main`\"",
	// single quotes inside it do not quote a backtick or a double quote
	"echo \"`echo '\"'; git push origin main`\"",
	"echo \"`echo \"'\"; git push origin main`\"",
	// \" inside backticks inside "…" is a quote of the inner line
	"echo \"`echo \\\"a\\\"; git push origin main`\"",
	// backticks nested with \`
	"echo \"`echo \\`git push origin main\\``\"",
	"echo `echo \\`git push origin main\\``",
	"cat <<E \"`echo \\`echo \"x\"\\`; git push origin main`\"",
	"echo \"`echo \\\"\\`\\\"`\"; git push origin main",
	// $(…) inside "…", and backticks and quotes inside $(…)
	"echo \"$(echo \"a\"; git push origin main)\"",
	"echo \"$(echo \")\"; git push origin main)\"",
	"echo $(echo \")\"; git push origin main)",
	"echo $(echo ')'; git push origin main)",
	"echo $(echo $')'; git push origin main)",
	"echo $(echo `echo )`; git push origin main)",
	"echo \"$(echo `echo \")\"`; git push origin main)\"",
	"echo \"$(echo \"`echo \")\"`\"; git push origin main)\"",
	"echo $(echo \"`echo \"x\"; git push origin main`\")",
	"echo \"`echo $(echo \")\")`$(git push origin main)\"",
	// in a heredoc the shell expands
	"cat <<EOF\n`echo \\`git push origin main\\``\nEOF",
	"cat <<EOF\n$(echo ')'; git push origin main)\nEOF",
}

// A command substitution inside quotes, or holding them, is read as bash
// reads it, so the push it runs meets a deny of it, and the default role
// asks it as it asks a push.
func TestASubstitutionIsReadAsBashReadsIt(t *testing.T) {
	mustDeny(t, Rules{Deny: []string{"exec(git push*)"}}, substitutionsBashRuns...)
	mustDeny(t, Rules{Deny: []string{"git(push*)"}}, substitutionsBashRuns...)
	push := Decide(Rules{}, ForCommand("git push origin main")...)
	for _, c := range substitutionsBashRuns {
		if d := Decide(Rules{}, ForCommand(c)...); d.Verdict != push.Verdict || d.Risk != push.Risk {
			t.Errorf("%q under the default role: %s, risk %s; want %s, risk %s, as a push is; actions %v", c, d.Verdict, d.Risk, push.Verdict, push.Risk, ForCommand(c))
		}
	}
}

// What bash does not run stays unread as a command: a backtick escaped
// twice inside backticks is a literal one in the inner line.
func TestAnEscapedBacktickIsNotASubstitution(t *testing.T) {
	for _, c := range []string{
		"echo \"`echo \\\\\\`git push\\\\\\``\"", // bash prints `git push`
		"echo \\`git push\\`",
		"echo '`git push`'",
	} {
		if d := Decide(Rules{Deny: []string{"git(push*)"}}, ForCommand(c)...); d.Verdict == Deny {
			t.Errorf("%q is denied as a push (%s), but bash runs none; actions %v", c, d.Rule, ForCommand(c))
		}
	}
}
