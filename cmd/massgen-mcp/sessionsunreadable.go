package main

import (
	"fmt"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// unreadableLine is the plain listing's last line when it skipped sessions
// it could not read (SessionPage.Unreadable), so a table one session short
// says so, and how to learn which and why: fsck for the file store (under
// the same --state-dir and --tenant), --verbose's log for a PostgreSQL
// store, which fsck does not read. "" for none.
func unreadableLine(n int, at storeAt) string {
	if n == 0 {
		return ""
	}
	if at.postgres() {
		return fmt.Sprintf("%s could not be read: run again with --verbose to see which and why", coordination.Count(n, "session"))
	}
	return fmt.Sprintf("%s could not be read: run `massgen-mcp fsck%s all` to see which and why", coordination.Count(n, "session"), at.flags)
}
