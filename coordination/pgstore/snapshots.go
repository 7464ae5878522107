package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// Workspaces across replicas: each replica works in a directory of its own
// (Options.WorkDir, laid out like the file store's state directory), the
// snapshots' content is in blobs and their manifests in the snapshots
// table, so a replica materialises any snapshot it has not taken itself
// (workspace.Remote). Without a WorkDir the store keeps no workspaces.

var (
	_ coordination.WorkspaceStore = (*Store)(nil)
	_ workspace.Keeper            = (*snapshots)(nil)
)

// WorkDir implements coordination.WorkspaceStore: the session's directory
// under this replica's work directory (the default tenant's in
// <dir>/sessions, another's in <dir>/tenants/<tenant>/sessions).
func (s *Store) WorkDir(id string) string {
	if s.db.workDir == "" || coordination.CheckSessionID(id) != nil {
		return ""
	}
	return filepath.Join(s.SessionsDir(), id)
}

// SessionsDir is the directory of this tenant's sessions' workspaces on
// this replica ("" without a WorkDir): the service hides it, and every path
// under it, from clients that must not see the server's paths
// (coordination.Service.HidePaths), as it hides the file store's.
func (s *Store) SessionsDir() string {
	switch {
	case s.db.workDir == "":
		return ""
	case s.tenant == coordination.DefaultTenant:
		return filepath.Join(s.db.workDir, "sessions")
	}
	return filepath.Join(s.db.workDir, "tenants", s.tenant, "sessions")
}

// Snapshots implements coordination.WorkspaceStore.
func (s *Store) Snapshots(id string) workspace.Remote { return &snapshots{s: s, id: id} }

// snapshots is one session's snapshots in the database.
type snapshots struct {
	s  *Store
	id string

	mu     sync.Mutex
	kept   map[string]bool // blobs Keep asked about: whether each is kept
	keptAt time.Time
}

// Put keeps the content in the replica's snapshot and in the blobs, read
// back from the snapshot's read-only copy (the live file may change under
// the agent meanwhile). Content already stored is not sent again.
func (r *snapshots) Put(dst string, src *os.File, perm fs.FileMode) (int64, string, error) {
	n, sum, err := workspace.DirBlobs{}.Put(dst, src, perm)
	if err != nil {
		return 0, "", err
	}
	if n > DefaultBlobLimit {
		// Refused before a byte is sent: PutBlob would refuse it past
		// the limit, after writing that much to the database, at every
		// answer the agent gave.
		os.Remove(dst)
		return 0, "", fmt.Errorf("%w: a file larger than the %d MiB the shared store keeps of one file; remove it (or leave it out of the workspace) and answer again", workspace.ErrTooLarge, DefaultBlobLimit>>20)
	}
	ctx := context.Background()
	// Touched as it is found: the manifest naming it lands only with the
	// answer, and a prune's collection meanwhile must see it in use.
	have, err := r.touch(ctx, []string{sum})
	if err != nil {
		os.Remove(dst)
		return 0, "", err
	}
	if have[sum] {
		return n, sum, nil
	}
	f, err := os.Open(dst)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	stored, _, err := r.s.PutBlob(ctx, f, DefaultBlobLimit)
	if err != nil {
		os.Remove(dst)
		return 0, "", err
	}
	if stored != sum {
		os.Remove(dst)
		return 0, "", fmt.Errorf("a snapshot's file changed while it was stored (SHA-256 %s, then %s); snapshot again", sum, stored)
	}
	return n, sum, nil
}

// Share implements workspace.Blobs: the earlier snapshot's content, if
// the blobs still hold it. A snapshot on disk may name a blob that is gone
// (its session deleted and its blobs collected while this replica kept
// the files): Share refuses it, and the snapshot stores the content again,
// so its manifest never names a blob another replica cannot read.
func (r *snapshots) Share(prev, dst, sum string) error {
	ok, err := r.holds(sum)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("blob %s: %w", sum, ErrBlobNotFound)
	}
	return workspace.DirBlobs{}.Share(prev, dst, sum)
}

// Keep implements workspace.Keeper: one statement touches every blob a
// snapshot is about to share (blobsTouch), where Share alone would cost a
// round trip a file.
func (r *snapshots) Keep(sums []string) error {
	kept, err := r.touch(context.Background(), sums)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.kept, r.keptAt = kept, time.Now()
	r.mu.Unlock()
	return nil
}

// touch tells which of sums the blobs hold, touching them (blobsTouch):
// one statement for one blob or a snapshot's many.
func (r *snapshots) touch(ctx context.Context, sums []string) (map[string]bool, error) {
	rows, err := r.s.db.pool.Query(ctx, blobsTouch, r.s.tenant, sums, touchEvery.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("looking up a snapshot's files in PostgreSQL: %w", err)
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("looking up a snapshot's files in PostgreSQL: %w", err)
	}
	kept := make(map[string]bool, len(sums))
	for _, sum := range sums {
		kept[sum] = false
	}
	for _, sum := range have {
		kept[sum] = true
	}
	return kept, nil
}

// holds tells whether the blob sum is kept: as Keep found it lately, else
// asked (touch). Keep's answer holds for touchEvery, as a touch skipped
// for being recent does: a collection's grace is at least twice that.
func (r *snapshots) holds(sum string) (bool, error) {
	r.mu.Lock()
	ok, asked := r.kept[sum]
	asked = asked && time.Since(r.keptAt) < touchEvery
	r.mu.Unlock()
	if asked {
		return ok, nil
	}
	have, err := r.touch(context.Background(), []string{sum})
	return have[sum], err
}

// Manifest implements workspace.Remote.
func (r *snapshots) Manifest(agent string, step int) (*workspace.Manifest, bool, error) {
	var data []byte
	err := r.s.db.pool.QueryRow(context.Background(), `SELECT manifest::text FROM snapshots WHERE tenant = $1 AND session_id = $2 AND agent_id = $3 AND step = $4`,
		r.s.tenant, r.id, agent, step).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the snapshot of step %d of %q in session %q: %w", step, agent, r.id, err)
	}
	m := &workspace.Manifest{}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, false, fmt.Errorf("the snapshot of step %d of %q in session %q is stored damaged: %w", step, agent, r.id, err)
	}
	return m, true, nil
}

// SaveBase implements workspace.Remote. The first base recorded stays: two
// replicas starting one session take the same content.
func (r *snapshots) SaveBase(m *workspace.Manifest) (bool, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return false, err
	}
	tag, err := r.s.db.pool.Exec(context.Background(), `INSERT INTO snapshots (tenant, session_id, agent_id, step, manifest)
		VALUES ($1, $2, '', 0, $3) ON CONFLICT DO NOTHING`, r.s.tenant, r.id, data)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// Steps implements workspace.Remote.
func (r *snapshots) Steps(agent string) ([]int, error) {
	rows, err := r.s.db.pool.Query(context.Background(), `SELECT step FROM snapshots WHERE tenant = $1 AND session_id = $2 AND agent_id = $3 AND step > 0 ORDER BY step`,
		r.s.tenant, r.id, agent)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int])
}

// Open implements workspace.Remote.
func (r *snapshots) Open(sum string) (io.ReadCloser, error) {
	rc, _, err := r.s.OpenBlob(context.Background(), sum)
	return rc, err
}

// stagedSnapshot reads the manifest of an answer's staged snapshot, which
// Append records with the answer; nil without a stage.
func stagedSnapshot(e coordination.Entry) ([]byte, error) {
	if e.Stage == "" {
		return nil, nil
	}
	data, err := os.ReadFile(filepath.Join(e.Stage, workspace.ManifestName))
	if err != nil {
		return nil, fmt.Errorf("reading the answer's staged snapshot: %w", err)
	}
	return data, nil
}

// placeStage moves an answer's staged snapshot to its step directory once
// the answer is recorded, so this replica need not materialise it again.
// A failure only costs that: the snapshot is in the database.
func (s *Store) placeStage(stage string, step int) {
	if stage == "" {
		return
	}
	dst := filepath.Join(filepath.Dir(stage), fmt.Sprintf("%03d", step))
	if err := os.Rename(stage, dst); err != nil {
		s.db.log.Warn().Err(err).Str("stage", stage).Msg("an answer's snapshot stays in the database only; this replica will read it from there")
		os.RemoveAll(stage)
	}
}
