package filestore

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// The final files are a projection of the session's latest finished entry:
// final/result.json is its result, indented, and final/answer.md the final
// answer alone, for people and for MassGen's readers. AppendSession writes
// them as the entry lands (again on every amended finished entry, and with
// an apply recorded after it laid over it), and Tidy rebuilds them from the
// session log when they are missing or damaged.

// writeFinal writes final/answer.md and final/result.json, each atomically;
// answer.md first, so a result.json on disk always has its answer beside it.
func writeFinal(dir string, res *coordination.TeamResult) error {
	body, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode the final result: %w", err)
	}
	answer := coordination.Deref(res.FinalAnswer)
	final := filepath.Join(dir, "final")
	err = os.MkdirAll(final, dirMode)
	if err == nil {
		err = writeAtomic(final, "answer.md", []byte(answer))
	}
	if err == nil {
		err = writeAtomic(final, "result.json", body)
	}
	if err != nil {
		return fmt.Errorf("cannot write the final answer to %s: %w", final, diskFull(err, final, len(body)+len(answer)))
	}
	return nil
}

// rebuildFinal writes the final files again from the session's latest
// finished entry, with its latest apply laid over it as the session's
// result has it (coordination.FinishedResult), if it has one; it tells
// whether it wrote them.
func rebuildFinal(dir, id string) (bool, error) {
	entries, err := readSessionLog(dir, ours(dir))
	if err != nil {
		return false, nil // a damaged log stops the session when its ledger is read, naming the file
	}
	fin := coordination.FinishedResult(entries)
	if fin == nil {
		return false, nil
	}
	if err := writeFinal(dir, fin); err != nil {
		return false, fmt.Errorf("cannot rebuild the final files of session %q: %w", id, err)
	}
	return true, nil
}
