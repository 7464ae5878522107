package filestore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers"
)

var _ coordination.ToolLog = (*Store)(nil)

// toolLogName is the file beside a step's entry that lists its tool calls,
// one JSON object a line.
const toolLogName = "tools.jsonl"

// WriteToolLog writes agents/<agent>/NNN/tools.jsonl atomically (a hidden
// temp file renamed into place, then fsynced). The step directory must
// exist: the log is written once the step has landed.
func (s *Store) WriteToolLog(ctx context.Context, id, agent string, step int, recs []providers.ToolRecord) error {
	dir, err := s.stepDir(ctx, id, agent, step)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("cannot encode a tool record of step %d of agent %q: %w", step, agent, err)
		}
	}
	if err := writeDerived(dir, toolLogName, b.Bytes()); err != nil {
		return fmt.Errorf("cannot write %s of step %d of agent %q in session %q: %w", toolLogName, step, agent, id, diskFull(err, dir, b.Len()))
	}
	return syncDir(dir)
}

// ToolLog reads a step's tools.jsonl; none when the step made no tool call.
func (s *Store) ToolLog(ctx context.Context, id, agent string, step int) ([]providers.ToolRecord, error) {
	dir, err := s.stepDir(ctx, id, agent, step)
	if err != nil {
		return nil, err
	}
	data, err := readFile(filepath.Join(dir, toolLogName), maxTimeline)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []providers.ToolRecord
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var r providers.ToolRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return out, damaged(filepath.Join(dir, toolLogName), fmt.Errorf("line %d: %w", n, err))
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// stepDir is a landed step's directory.
func (s *Store) stepDir(ctx context.Context, id, agent string, step int) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	dir, err := s.existing(id)
	if err != nil {
		return "", err
	}
	ad, err := agentPath(dir, agent)
	if err != nil {
		return "", err
	}
	sd := filepath.Join(ad, stepName(step))
	if !isDir(sd) {
		return "", fmt.Errorf("step %d of agent %q in session %q is not recorded: %w", step, agent, id, coordination.ErrBadInput)
	}
	return sd, nil
}
