package webui_test

import (
	"archive/zip"
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// plantingSims opens sims that, before each step, leave a symlink and a file
// larger than one file a resource serves (8 MiB) in their workspace: what an
// agent with a shell may leave behind.
func plantingSims(sp providers.Spec) (providers.Provider, error) {
	sim, err := backends.Open(sp)
	if err != nil {
		return nil, err
	}
	return providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		if req.Workspace != "" {
			_ = os.Symlink("index.html", filepath.Join(req.Workspace, "a-link.html"))
			_ = os.WriteFile(filepath.Join(req.Workspace, "big.log"), bytes.Repeat([]byte("x"), 9<<20), 0o644)
		}
		return sim.Step(ctx, req)
	}), nil
}

// A winner whose files hold a symlink or a file over the per-file cap still
// downloads as a whole zip of the files that can be carried: it was cut at
// the first such file, a zip no unzip could open.
func TestTheWinnersZipIsWholeWhenItsFilesHoldALinkOrABigFile(t *testing.T) {
	s := serveWith(t, func() *coordination.Service {
		state := t.TempDir()
		return coordination.NewService(filestore.New(filepath.Join(state, "sessions")), coordination.Options{
			Open: plantingSims, StateDir: state, Logger: zerolog.Nop()})
	})
	svc := s.service(t, "a")
	ctx := context.Background()
	sess, err := svc.Create(ctx, coordination.TeamSpec{Task: "Build a one-page landing site for a bakery", Models: []string{"sim", "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Run(ctx, sess.ID, nil); err != nil {
		t.Fatal(err)
	}
	code, body, _ := get(t, http.DefaultClient, s.url+"/ui/api/sessions/"+sess.ID+"/files.zip", "Authorization", "Bearer "+tokenA)
	if code != http.StatusOK {
		t.Fatalf("files.zip: %d %s", code, body)
	}
	zr, err := zip.NewReader(bytes.NewReader([]byte(body)), int64(len(body)))
	if err != nil {
		t.Fatalf("the zip cannot be opened (%d bytes): %v", len(body), err)
	}
	names := map[string]uint64{}
	for _, f := range zr.File {
		names[f.Name] = f.UncompressedSize64
	}
	if names["index.html"] == 0 || names["big.log"] != 9<<20 {
		t.Fatalf("the zip should carry index.html and big.log whole: %v", names)
	}
	if _, ok := names["a-link.html"]; ok {
		t.Fatalf("a symlink was put in the zip: %v", names)
	}
}
