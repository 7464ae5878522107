package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// diskFullReport is what `run --json` prints when the disk fills up.
type diskFullReport struct {
	Error       string `json:"error"` // "disk_full"
	Message     string `json:"message"`
	SessionID   string `json:"session_id,omitempty"`
	Path        string `json:"path"`
	NeededBytes int64  `json:"needed_bytes"`
	FreeBytes   int64  `json:"free_bytes"` // -1: unknown
	Resume      string `json:"resume,omitempty"`
}

// diskFullExit turns a write that ran out of space into exit 4 (resumable),
// saying where, how much space the write needed and how to resume; with
// --json the same as a JSON object on stdout. dir is the --state-dir given,
// which the resume command keeps. Any other error is returned as
// it is.
func diskFullExit(out io.Writer, err error, dir, id string, asJSON bool) error {
	var full *coordination.DiskFullError
	if !errors.As(err, &full) {
		return err
	}
	r := diskFullReport{Error: "disk_full", Message: err.Error(), SessionID: id, Path: full.Path, NeededBytes: full.Need, FreeBytes: full.Free}
	msg := err.Error()
	if id != "" {
		r.Resume = resumeCommand(dir, id)
		msg = fmt.Sprintf("%s; nothing half-written was kept: free at least %d bytes in %s, then resume with: %s", err, full.Need, full.Path, r.Resume)
	}
	if asJSON {
		if perr := printIndented(out, r); perr != nil {
			return perr
		}
	}
	return &exitError{code: exitCancelled, msg: msg, printed: false}
}
