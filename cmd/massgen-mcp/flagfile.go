package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// flagFileError is a file a flag names that cannot be read: the flag, the
// path as given, where a relative one was looked for and why in a word,
// and (errorFix) what to give instead, where the bare "open x: no such
// file or directory" named neither the flag nor what it wants.
type flagFileError struct {
	flag, path string
	want       string // what the flag takes, e.g. "a JSON file of your plan"
	dir        bool   // the path is a directory
	err        error
}

// flagFile reads the file flag names at path; want says what it takes,
// for the advice when it cannot be read.
func flagFile(flag, path, want string) ([]byte, error) {
	data, err := os.ReadFile(path)
	return data, flagFileErr(flag, path, want, err)
}

// flagFileErr is err, met opening or reading the file flag names at path,
// as a flagFileError when it is that file's to fix (missing, unreadable, a
// directory); other errors pass as they are.
func flagFileErr(flag, path, want string, err error) error {
	if err == nil {
		return nil
	}
	fi, serr := os.Stat(path)
	dir := serr == nil && fi.IsDir()
	if pe := (*fs.PathError)(nil); !dir && (!errors.As(err, &pe) || pe.Path != path) {
		return err
	}
	return &flagFileError{flag: flag, path: path, want: want, dir: dir, err: err}
}

// statFlagFile is flagFileErr's refusal of a file flag names, checked
// before a reader that words its own errors (teamfile.Load, whose errors
// name the files the team file names too): nil when path is a file.
func statFlagFile(flag, path, want string) error {
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		return &flagFileError{flag: flag, path: path, want: want, dir: true, err: fs.ErrInvalid}
	}
	return flagFileErr(flag, path, want, err)
}

func (e *flagFileError) Error() string {
	where := ""
	if !filepath.IsAbs(e.path) {
		if abs, err := filepath.Abs(e.path); err == nil {
			where = " (looked for at " + abs + ")"
		}
	}
	var why string
	switch {
	case e.dir:
		return fmt.Sprintf("%v: %s %s is a directory, not a file", coordination.ErrBadInput, e.flag, e.path)
	case errors.Is(e.err, fs.ErrNotExist):
		why = "no such file"
	case errors.Is(e.err, fs.ErrPermission):
		why = "permission denied"
	default:
		why = "cannot be read"
		var pe *fs.PathError
		if errors.As(e.err, &pe) {
			why += ": " + pe.Err.Error()
		}
	}
	return fmt.Sprintf("%v: %s %s: %s%s", coordination.ErrBadInput, e.flag, e.path, why, where)
}

// Unwrap keeps both the kind (bad input, exit 1) and the file's own error.
func (e *flagFileError) Unwrap() []error { return []error{coordination.ErrBadInput, e.err} }

// fix is errorFix's line for it.
func (e *flagFileError) fix() string {
	switch {
	case e.dir:
		return fmt.Sprintf("give %s the path of a file in it: %s.", e.flag, e.want)
	case errors.Is(e.err, fs.ErrPermission):
		return fmt.Sprintf("make %s readable by you (chmod u+r), or give %s another path: %s.", e.path, e.flag, e.want)
	}
	return fmt.Sprintf("check the path (a relative one is read from the current directory), or give %s the path of %s.", e.flag, e.want)
}
