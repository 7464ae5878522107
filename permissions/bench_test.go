package permissions

import "testing"

// BenchmarkDecideACommandLine is the cost the decision adds to one
// run_command call: classify a compound line and decide it under rules.
func BenchmarkDecideACommandLine(b *testing.B) {
	rules := Rules{Allow: []string{"exec(go test *)", "net(*.github.com)"}, Ask: []string{"exec(go *)"}, Deny: []string{"exec(git push*)", "write(*.env)"}}
	const line = `cd src && GOFLAGS=-p=1 go test ./... 2>&1 | tee out.log && curl -s https://api.github.com/x > resp.json`
	for b.Loop() {
		Decide(rules, ForCommand(line)...)
	}
}
