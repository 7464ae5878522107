package filestore

import (
	"errors"
	"os"
	"path/filepath"
)

// spendFiles reports an agent's spend files (spendfile.go) that do not
// read. A live holder's file and a gone holder's are both sound: the
// second is recorded by the agent's next step, a run's start or the
// session's end, so neither is a problem. One that does not parse is
// skipped by every reader, and what it kept is counted nowhere.
func (c *checker) spendFiles(agentDir string) {
	des, err := os.ReadDir(agentDir)
	if err != nil {
		return
	}
	for _, sn := range spendNames(des) {
		var d *damagedError
		if _, err := readSpend(filepath.Join(agentDir, sn.name)); errors.As(err, &d) {
			c.damage(d, "nothing reads it, so the session's cost lacks the spend it kept: account for it by hand, then remove the file")
		}
	}
}
