package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestASecondReplicaOnOneStateDirIsRefused: `serve --store postgres://…`
// with the --state-dir a running replica holds exits at once, saying to
// give each replica its own (README's rule, which nothing enforced: two
// replicas on one directory cleared and wrote each other's workspaces).
func TestASecondReplicaOnOneStateDirIsRefused(t *testing.T) {
	dsn := pgtest.Schema(t)
	bin := binary(t)
	dir := t.TempDir()
	startServer(t, bin, dir, "--store", dsn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--http", "127.0.0.1:0", "--state-dir", dir, "--store", dsn)
	cmd.Dir, cmd.Env = t.TempDir(), []string{"HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the second replica on the state directory kept running:\n%s", out)
	}
	if err == nil || !strings.Contains(string(out), "in use by another replica") || !strings.Contains(string(out), "--state-dir") {
		t.Fatalf("the second replica on the state directory = %v:\n%s\nwant it refused, naming --state-dir", err, out)
	}
}
