package filestore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/permissions"
)

var _ coordination.PermissionLog = (*Store)(nil)

// permissionsName is the session's audit of permission decisions, one JSON
// object a line, appended as each is made.
const permissionsName = "permissions.jsonl"

// AppendPermission adds one line to permissions.jsonl and fsyncs it: an
// audit that loses its last decisions in a crash would not be one. O_APPEND
// lands each single write whole at the end, whichever agent appends.
func (s *Store) AppendPermission(ctx context.Context, id string, rec permissions.Record) error {
	dir, err := s.existing(id)
	if err != nil {
		return err
	}
	rec.Time = normTime(rec.Time)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return fmt.Errorf("cannot encode a permission decision for session %q: %w", id, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, permissionsName), os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, fileMode)
	if err != nil {
		return fmt.Errorf("cannot open the permission log of session %q: %w", id, diskFull(err, dir, b.Len()))
	}
	_, err = f.Write(b.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot append to the permission log of session %q: %w", id, diskFull(err, dir, b.Len()))
	}
	return nil
}

// Permissions reads permissions.jsonl; a line that does not parse (a torn
// tail) is skipped, as fsck reports.
func (s *Store) Permissions(ctx context.Context, id string) ([]permissions.Record, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	recs, _, err := readPermissions(dir)
	return recs, err
}

// readPermissions reads a session's permission log and counts the lines it
// could not read.
func readPermissions(dir string) ([]permissions.Record, int, error) {
	data, err := readFile(filepath.Join(dir, permissionsName), maxTimeline)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var out []permissions.Record
	bad := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r permissions.Record
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			bad++
			continue
		}
		out = append(out, r)
	}
	return out, bad, sc.Err()
}
