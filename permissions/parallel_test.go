package permissions

import "testing"

// pushesThroughParallel are pushes GNU parallel runs (bash 5.2 with the
// recording git shim and GNU parallel 20221122 ran each here): its command
// words are shell text, each ::: source one quoted word added to them, or,
// with no command, a line of its own.
var pushesThroughParallel = []bashCase{
	{cmd: "parallel sh -c ::: 'git push origin main'", needs: []string{"parallel"}},
	{cmd: "parallel ::: 'git push origin main'", needs: []string{"parallel"}},
	{cmd: "parallel -j 2 git ::: push", needs: []string{"parallel"}},
	{cmd: "parallel -q sh -c ::: 'git push origin main'", needs: []string{"parallel"}},
}

// A source parallel adds to its command stays one word.
func TestASourceParallelAddsStaysOneWord(t *testing.T) {
	mustRunPush(t, pushesThroughParallel)
	mustDeny(t, Rules{Deny: []string{"exec(git push*)"}}, cmds(pushesThroughParallel)...)
	mustDeny(t, Rules{Deny: []string{"git(push*)"}}, cmds(pushesThroughParallel)...)
	mustAllow(t, denyPush, "parallel echo ::: 'git push origin main'", "parallel gzip ::: 'a b.txt' c.txt")
}
