package coordination

import (
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// TestTheWriteContextIsNamedAsResultsShowIt: where the server hides its
// paths (HTTP clients, tenants), a result and a message name the write
// context context/<name>, never the operator's path; elsewhere (the CLI,
// stdio) the path is the user's own and stays.
func TestTheWriteContextIsNamedAsResultsShowIt(t *testing.T) {
	c := workspace.Context{Path: "/home/operator/site", Name: "site"}
	msg := "cannot open the write context /home/operator/site/index.html: permission denied"
	hidden := &Service{opts: Options{RelativeDirs: true}}
	if got := hidden.shownContext(c); got != "context/site" {
		t.Errorf("shown as %q; want context/site", got)
	}
	if got, want := hidden.hideContext(c, msg), "cannot open the write context context/site/index.html: permission denied"; got != want {
		t.Errorf("hidden: %q; want %q", got, want)
	}
	shown := &Service{}
	if got := shown.shownContext(c); got != c.Path {
		t.Errorf("shown as %q; want the path", got)
	}
	if got := shown.hideContext(c, msg); got != msg {
		t.Errorf("without hidden paths: %q; want it as it was", got)
	}
}
