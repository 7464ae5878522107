package backends

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers/tools/sandbox"
)

func TestSandboxStatusSaysWhy(t *testing.T) {
	defer func(p func() (bool, string)) { sandboxProbe = p }(sandboxProbe)
	sandboxProbe = func() (bool, string) { return false, "bubblewrap (bwrap) is not on PATH; install it" }
	if st := Sandbox(); st.Available || !strings.Contains(st.Why, "install") {
		t.Errorf("missing bwrap: %+v", st)
	}
	sandboxProbe = sandbox.Probe
	ok, why := sandbox.Probe()
	if st := (Config{}).Report(context.Background()).Sandbox; st.Available != ok || st.Why != why {
		t.Errorf("the report's sandbox is %+v, the probe says %v %q", st, ok, why)
	}
}
