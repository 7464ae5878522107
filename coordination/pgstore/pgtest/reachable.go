//go:build ignore

// Reachable tells make test and .ci/run whether the PostgreSQL store's tests
// will find their database (pgtest.Base): go run it from the repository's
// root. It prints nothing when they will; else one line saying they will be
// skipped and naming what to install and how to start it. go test shows a
// skip's reason only with -v, which make test's unit lane runs without, so
// without this line nothing would say that the tests did not run. It exits
// 0 either way, a report like make test's other checks (tmux, bwrap), but
// with -q it prints nothing and exits 1 when unreachable, for a script's
// if. -wait keeps trying that long (a cluster just started).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

func main() {
	wait := flag.Duration("wait", 0, "keep trying this long")
	quiet := flag.Bool("q", false, "print nothing; exit 1 when unreachable")
	flag.Parse()
	deadline := time.Now().Add(*wait)
	for {
		err := pgtest.Reach(context.Background())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			if *quiet {
				os.Exit(1)
			}
			what := "SKIPPED: the PostgreSQL store's tests; "
			if os.Getenv("CI") == "true" {
				what = "FAILING: the PostgreSQL store's tests (CI=true requires their database); "
			}
			fmt.Println(what + pgtest.Unreachable(err))
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}
