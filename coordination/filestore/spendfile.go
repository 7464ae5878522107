package filestore

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A step in flight keeps its spend so far beside its step lock, one file
// per take of the lock, named for the take's key
// (agents/<id>/.spent-<key>.json): a process that dies mid-step (SIGKILL,
// the OOM killer) leaves what its turns cost where the agent's next step,
// a run's start or the session's end finds it (sharedspend.go,
// deadspend.go). One file per take, not per agent: a take that finds a
// gone holder's spend writes its own beside it, and each is recorded, and
// removed, under its own key. The kernel drops a dead holder's lock, so a
// spend file whose lock is free was left by a holder that is gone.
//
// A file says which step it was for. A take that finds a gone holder's
// file renames it to .dead-<key>.json, because the taker lands the same
// step number: from then on the file is that holder's spend whatever lands
// at its number. Until then, a file whose step has landed is the landing's
// own, its holder gone between the entry and the file's removal: it is
// removed, not counted, since the step's entry counts it.

// spendFile is a spend file's content.
type spendFile struct {
	Step     int       `json:"step"`
	CostUSD  float64   `json:"cost_usd"` // unknown costs counted as zero
	Tokens   int64     `json:"tokens"`   // input plus output
	SharedAt time.Time `json:"shared_at"`
}

const (
	spentPrefix = ".spent-"
	deadPrefix  = ".dead-"
	spendSuffix = ".json"
)

// spendName is a spend file as its agent's directory lists it: its key,
// and whether a take found it left by a holder that is gone.
type spendName struct {
	name string
	key  string
	dead bool
}

// spendNames picks the spend files of an agent directory's listing: regular
// files named .spent-<key>.json or .dead-<key>.json, a key of letters,
// digits, '-' and '_'. Their temps (..spent-<key>.json.tmp-*) and a file
// moved aside (<name>.damaged-<time>) are not.
func spendNames(des []fs.DirEntry) []spendName {
	var out []spendName
	for _, de := range des {
		if !de.Type().IsRegular() {
			continue
		}
		if sn, ok := parseSpendName(de.Name()); ok {
			out = append(out, sn)
		}
	}
	return out
}

func parseSpendName(name string) (spendName, bool) {
	stem, ok := strings.CutSuffix(name, spendSuffix)
	if !ok {
		return spendName{}, false
	}
	sn := spendName{name: name}
	if sn.key, ok = strings.CutPrefix(stem, spentPrefix); !ok {
		if sn.key, ok = strings.CutPrefix(stem, deadPrefix); !ok {
			return spendName{}, false
		}
		sn.dead = true
	}
	return sn, validKey(sn.key)
}

func validKey(key string) bool {
	if key == "" || len(key) > 128 {
		return false
	}
	for _, r := range key {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func spentPath(agentDir, key string) string {
	return filepath.Join(agentDir, spentPrefix+key+spendSuffix)
}

func deadPath(agentDir, key string) string {
	return filepath.Join(agentDir, deadPrefix+key+spendSuffix)
}

// readSpend reads a spend file; a missing one is fs.ErrNotExist (recorded
// meanwhile), one that does not parse is damage (fsck reports it).
func readSpend(path string) (spendFile, error) {
	var f spendFile
	data, err := readJSONFile(path)
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, damaged(path, fmt.Errorf("the step's spend it kept does not parse: %w", err))
	}
	return f, nil
}

// removeSpend removes the spend files of key in agentDir, whichever its
// state. A removal that fails leaves a file whose key the ledger holds:
// the next reader records nothing more for it (spenderRest) and removes it
// again (SpendRecorded).
func removeSpend(agentDir, key string) {
	os.Remove(spentPath(agentDir, key))
	os.Remove(deadPath(agentDir, key))
}
