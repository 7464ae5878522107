package install

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
)

// ErrForeignEntry is a config that already holds a massgen entry install did
// not write — the user's own. Install leaves it alone unless told to
// replace it (Options.Force).
var ErrForeignEntry = errors.New("the config already has its own massgen entry")

// getEntry is the server entry as the file writes it, or nil: the JSON value
// (comments inside it included) or the TOML table with its sub-tables.
func getEntry(t target, data []byte) ([]byte, error) {
	if t.format == formatTOML {
		return tomlGet(data, t.key)
	}
	return jsonGet(data, t.key)
}

// setEntry puts entry at the key; verbatim puts it exactly as given (an
// entry the user wrote, going back) rather than indented to its place.
func setEntry(t target, data, entry []byte, verbatim bool) ([]byte, error) {
	if t.format == formatTOML {
		return tomlSet(data, t.key, entry)
	}
	return jsonSet(data, t.key, entry, verbatim)
}

func deleteEntry(t target, data []byte) ([]byte, error) {
	if t.format == formatTOML {
		return tomlDelete(data, t.key)
	}
	return jsonDelete(data, t.key)
}

// sameEntry compares two entries by meaning, not by layout.
func sameEntry(t target, a, b []byte) bool {
	if t.format == formatJSON {
		return sameJSON(a, b)
	}
	x, errX := tomlCurrent(a, t.key)
	y, errY := tomlCurrent(b, t.key)
	return errX == nil && errY == nil && x != nil && reflect.DeepEqual(x, y)
}

// wroteIt tells whether the entry in a file is the one install last wrote
// there: the record keeps that entry (a record from before it kept one can
// only vouch for a file nobody touched since).
func wroteIt(t target, rec *record, data, cur []byte) bool {
	switch {
	case rec == nil:
		return false
	case rec.Entry != nil:
		return rec.ours(t, cur)
	default:
		return digest(data) == rec.After
	}
}

// foreign is the refusal to replace the user's own entry: it shows the entry
// and says how to replace it anyway.
func foreign(t target, cur []byte) error {
	var b strings.Builder
	for line := range strings.Lines(string(bytes.TrimSpace(masked(t, cur)))) {
		b.WriteString("    " + line)
	}
	return &foreignError{path: t.path, entry: b.String()}
}

type foreignError struct{ path, entry string }

func (e *foreignError) Error() string {
	return e.path + " already has a \"" + ServerName + "\" entry that massgen-mcp did not write, and install leaves it as it is:\n" +
		e.entry + "\nTo replace it, run install again with --force; uninstall then puts this entry back."
}

func (e *foreignError) Unwrap() error { return ErrForeignEntry }
