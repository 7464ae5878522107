package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
)

// printEstimate is `run --estimate`: the team's worst case at list prices,
// checked as a new team would be, with nothing written, run or spent. A
// budget that cannot pay for one round exits as bad input, so a script can
// test it before it spends.
func printEstimate(out io.Writer, svc *coordination.Service, spec coordination.TeamSpec, asJSON bool) error {
	e, err := svc.Estimate(spec)
	if err != nil {
		return err
	}
	if asJSON {
		b, err := json.MarshalIndent(e, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(out, string(b))
	} else {
		fmt.Fprint(out, report.Estimate(e))
	}
	return e.Err()
}
