package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
	"github.com/massgen-go/massgen-mcp/coordination/pgstore/pgtest"
)

// TestPostgresReplicasServeTheWinnersFilesAfterAFailover: a team of sims
// builds a site on replica A (each answer snapshots its files into the
// database); A is SIGKILLed after answers with files landed; B claims the
// run, materialises the snapshots it did not take, finishes, and serves
// the winner's files — and every answer's, A's included — byte for byte:
// each file's content through the files resource hashes to the SHA-256 A
// recorded, and equals the blob in the database.
func TestPostgresReplicasServeTheWinnersFilesAfterAFailover(t *testing.T) {
	dsn := pgtest.Schema(t)
	bin := binary(t)
	ctx := context.Background()
	st := pgTenant(t, dsn, coordination.DefaultTenant)

	b := startServer(t, bin, t.TempDir(), "--store", dsn, "--resume-interrupted")
	a := startServer(t, bin, t.TempDir(), "--store", dsn)
	ca := connect(t, a.url, nil)
	const id = "pg_files"
	args := map[string]any{
		"session_id": id,
		"task":       "Build a one-page landing site for a bakery.",
		"models": []string{
			"sim/strong:latency=150ms:seed=11", "sim:accuracy=0.3:latency=300ms:seed=12",
			"sim:accuracy=0.5:latency=200ms:seed=13", "sim/strong:latency=250ms:seed=14",
		},
		"wait": false,
	}
	if res, err := callTool(ctx, ca, "run_team", args); err != nil || res.IsError {
		t.Fatalf("run_team on A: %v %s", err, resultText(res))
	}
	waitFor(t, 30*time.Second, "answers with files on A", func() bool { return answersIn(ctx, st, id) >= 2 })
	ca.Close()
	a.kill()
	before := answersIn(ctx, st, id)
	if finishedIn(ctx, st, id) {
		t.Fatal("the run finished before A was killed; the test fails nothing over")
	}
	waitFor(t, 2*time.Minute, id+" finishing on B", func() bool { return finishedIn(ctx, st, id) })
	checkStoredLedger(t, st, id)

	cb := connect(t, b.url, nil)
	defer cb.Close()
	res, err := callTool(ctx, cb, "team_status", map[string]any{"session_id": id})
	if err != nil || res.IsError {
		t.Fatalf("team_status on B: %v %s", err, resultText(res))
	}
	var status struct {
		Result struct {
			Winner *struct {
				Label string `json:"label"`
			} `json:"winner"`
			Files []struct {
				Path   string `json:"path"`
				Bytes  int64  `json:"bytes"`
				SHA256 string `json:"sha256"`
			} `json:"files"`
		} `json:"result"`
	}
	if err := structured(res, &status); err != nil {
		t.Fatal(err)
	}
	r := status.Result
	if r.Winner == nil || len(r.Files) == 0 {
		t.Fatalf("team_status on B shows no winner's files: %s", resultText(res))
	}
	for _, f := range r.Files {
		data := readAnswerFile(ctx, t, cb, id, r.Winner.Label, f.Path)
		checkServed(ctx, t, st, "the winner's "+f.Path, data, f.Bytes, f.SHA256)
	}
	// Every answer's files, those A snapshotted before it died included.
	l, err := st.Ledger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	served := 0
	for _, es := range l.Agents {
		for _, e := range es {
			if e.Kind != coordination.KindAnswer {
				continue
			}
			var list struct {
				Files []struct {
					Path   string `json:"path"`
					Bytes  int64  `json:"bytes"`
					SHA256 string `json:"sha256"`
				} `json:"files"`
			}
			if err := readJSONResource(ctx, cb, fmt.Sprintf("massgen://sessions/%s/files/%s", id, e.Label), &list); err != nil {
				t.Fatalf("B listing the files of %s: %v", e.Label, err)
			}
			if len(list.Files) == 0 {
				t.Errorf("B lists no files for answer %s (a sim's answer on a build task has some)", e.Label)
			}
			for _, f := range list.Files {
				data := readAnswerFile(ctx, t, cb, id, e.Label, f.Path)
				checkServed(ctx, t, st, e.Label+"'s "+f.Path, data, f.Bytes, f.SHA256)
				served++
			}
		}
	}
	t.Logf("A killed after %d answers with files; B finished the run and served %d files of every answer and the winner's %d byte for byte", before, served, len(r.Files))
}

// answersIn counts the answers landed in a session.
func answersIn(ctx context.Context, st coordination.Store, id string) int {
	l, err := st.Ledger(ctx, id)
	if err != nil {
		return 0
	}
	n := 0
	for _, es := range l.Agents {
		for _, e := range es {
			if e.Kind == coordination.KindAnswer {
				n++
			}
		}
	}
	return n
}

// readAnswerFile reads one file of an answer through the files resource.
func readAnswerFile(ctx context.Context, t *testing.T, c *client.Client, id, label, path string) []byte {
	t.Helper()
	var rr mcpgo.ReadResourceRequest
	rr.Params.URI = fmt.Sprintf("massgen://sessions/%s/files/%s/%s", id, label, path)
	out, err := c.ReadResource(ctx, rr)
	if err != nil || len(out.Contents) != 1 {
		t.Fatalf("reading %s: %v", rr.Params.URI, err)
	}
	switch c := out.Contents[0].(type) {
	case mcpgo.TextResourceContents:
		return []byte(c.Text)
	case mcpgo.BlobResourceContents:
		data, err := base64.StdEncoding.DecodeString(c.Blob)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	t.Fatalf("%s: contents of type %T", rr.Params.URI, out.Contents[0])
	return nil
}

// checkServed: content served is the size and SHA-256 the snapshot
// recorded, and the database's blob of that SHA-256 byte for byte.
func checkServed(ctx context.Context, t *testing.T, st *pgstore.Store, what string, data []byte, size int64, sum string) {
	t.Helper()
	h := sha256.Sum256(data)
	if int64(len(data)) != size || hex.EncodeToString(h[:]) != sum {
		t.Errorf("%s served %d bytes with SHA-256 %x; the snapshot recorded %d bytes, %s", what, len(data), h, size, sum)
		return
	}
	r, n, err := st.OpenBlob(ctx, sum)
	if err != nil {
		t.Errorf("%s: the database has no blob %s: %v", what, sum, err)
		return
	}
	defer r.Close()
	blob, err := io.ReadAll(r)
	if err != nil || int64(len(blob)) != n || !bytes.Equal(blob, data) {
		t.Errorf("%s served differs from the database's blob", what)
	}
}

// readJSONResource reads a JSON resource into v.
func readJSONResource(ctx context.Context, c *client.Client, uri string, v any) error {
	var rr mcpgo.ReadResourceRequest
	rr.Params.URI = uri
	out, err := c.ReadResource(ctx, rr)
	if err != nil {
		return err
	}
	if len(out.Contents) != 1 {
		return fmt.Errorf("%s: %d contents", uri, len(out.Contents))
	}
	tc, ok := out.Contents[0].(mcpgo.TextResourceContents)
	if !ok {
		return fmt.Errorf("%s: contents of type %T", uri, out.Contents[0])
	}
	return json.Unmarshal([]byte(tc.Text), v)
}
