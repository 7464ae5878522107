package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// stampLayout is Python's datetime.isoformat() for an aware UTC time, cut to
// milliseconds: MassGen writes timestamps this way, and "-07:00" (not "Z07:00")
// is what makes Go print "+00:00" for UTC.
const stampLayout = "2006-01-02T15:04:05.000-07:00"

func stamp(t time.Time) string { return t.UTC().Format(stampLayout) }

// parseStamp reads any timestamp MassGen or a person may have written: RFC 3339
// with or without fractions, Python's naive isoformat (taken as UTC), or a space
// instead of the T. An unreadable timestamp is the zero time, never an error: a
// step's content matters more than its clock.
func parseStamp(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}
	}
	for _, layout := range []string{
		time.RFC3339Nano,
		"2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999",
	} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// normTime is the precision every stored time has: milliseconds in UTC, the
// most the step-mode files keep. A zero time means "now".
func normTime(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Truncate(time.Millisecond)
}

// stepName is a step directory's name: three digits, more past 999.
func stepName(n int) string { return fmt.Sprintf("%03d", n) }

// stepNumber parses a step directory's name; false for anything that is not
// all ASCII digits (temp dirs, workspace, lock files).
func stepNumber(name string) (int, bool) {
	if name == "" || len(name) > 9 {
		return 0, false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(name)
	return n, err == nil
}

// marshal renders JSON as MassGen does (two-space indent) and without HTML
// escaping, so answers with <, > and & stay readable on disk.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeFileSync writes a new file and flushes it to disk.
func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeAtomic replaces dir/name with data: a reader sees the old file or the
// new one, never a mix, and after a crash the new one is either whole or absent.
func writeAtomic(dir, name string, data []byte) error {
	return wholefile.Replace(filepath.Join(dir, name), data, fileMode)
}

// writeDerived replaces dir/name atomically (readers never see a torn file)
// without fsync. It is for files derived from the ledger and rewritten at
// every step — status.json, last_action.json — whose loss in a power cut loses
// nothing the step directories do not hold; skipping their four fsyncs halves
// the cost of a step on disk. The temp file is locked until it is renamed, so
// Tidy and fsck tell a dead writer's temp (unlocked) from one being written,
// whatever its age (derivedTemp).
func writeDerived(dir, name string, data []byte) error {
	err := writeDerivedOnce(dir, name, data)
	if errors.Is(err, fs.ErrNotExist) {
		// Tidy may take a temp for a leftover in the instant between its
		// creation and its lock; the write is simply made again.
		err = writeDerivedOnce(dir, name, data)
	}
	return err
}

func writeDerivedOnce(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	lockFD(int(f.Fd())) // best effort: an unlocked temp only ages into a leftover
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(fileMode)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// derivedTemp tells a temp of writeDerived whose writer is gone: nobody holds
// its lock. Such a temp is a leftover at once, so a resume right after a kill
// removes it (the age rule would keep it for a minute, and a run never
// tidies again).
func derivedTemp(path string) bool {
	base := filepath.Base(path)
	if !strings.HasPrefix(base, ".status.json.tmp-") && !strings.HasPrefix(base, ".last_action.json.tmp-") {
		return false
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	held, err := isLocked(path)
	return err == nil && !held
}

// writeNew creates dir/name atomically and fails with fs.ErrExist if it is
// already there, so two writers that both think they own a number never
// overwrite each other.
func writeNew(dir, name string, data []byte) error {
	return wholefile.Create(filepath.Join(dir, name), data, fileMode)
}

// syncDir makes a rename or a new entry in dir durable.
func syncDir(dir string) error { return wholefile.SyncDir(dir) }

// numbered lists the entries of dir whose names (minus suffix) are step
// numbers, in numeric order; wantDir picks directories or plain files.
func numbered(dir, suffix string, wantDir bool) ([]numberedName, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	return numberedOf(des, suffix, wantDir), nil
}

// numberedOf is numbered for a listing already read (a step lock's take
// reads the agent's directory once for its steps and its spend files).
func numberedOf(des []fs.DirEntry, suffix string, wantDir bool) []numberedName {
	var out []numberedName
	for _, de := range des {
		if de.IsDir() != wantDir {
			continue
		}
		stem, ok := strings.CutSuffix(de.Name(), suffix)
		if !ok {
			continue
		}
		if n, ok := stepNumber(stem); ok {
			out = append(out, numberedName{n, de.Name()})
		}
	}
	sortNumbered(out)
	return out
}

type numberedName struct {
	n    int
	name string
}

func sortNumbered(s []numberedName) {
	// Insertion sort: listings are short and usually already in order.
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && (s[j].n < s[j-1].n || s[j].n == s[j-1].n && s[j].name < s[j-1].name); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
