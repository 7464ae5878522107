package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/pgstore"
)

// TestAStateDirectoryServesAtMostSixteenReplicas: a serve on a state
// directory another holds works in the first free one of replicas/2 to
// replicas/16 under it, in that order; with all sixteen held it opens
// nothing more and says so: how many hold it, and to stop one or give this
// server a --state-dir of its own. The directories are held by a fake
// pgstore.Open, so no database is needed.
func TestAStateDirectoryServesAtMostSixteenReplicas(t *testing.T) {
	work := t.TempDir()
	all := []string{work}
	for n := 2; n <= maxReplicasPerDir; n++ {
		all = append(all, filepath.Join(work, "replicas", strconv.Itoa(n)))
	}
	for _, held := range []int{0, 1, 5, maxReplicasPerDir - 1, maxReplicasPerDir} {
		t.Run(strconv.Itoa(held)+" held", func(t *testing.T) {
			var asked []string
			opened := new(pgstore.DB)
			open := func(_ context.Context, _ string, opts pgstore.Options) (*pgstore.DB, error) {
				asked = append(asked, opts.WorkDir)
				if len(asked) > 2*maxReplicasPerDir {
					t.Fatalf("asked for %d work directories; the state directory serves %d", len(asked), maxReplicasPerDir)
				}
				if slices.Contains(all[:held], opts.WorkDir) {
					return nil, fmt.Errorf("%w: %s is held", pgstore.ErrWorkDirInUse, opts.WorkDir)
				}
				return opened, nil
			}
			db, err := openReplica(context.Background(), "postgres://unused", work, open)
			if held < len(all) {
				if err != nil || db != opened || !slices.Equal(asked, all[:held+1]) {
					t.Fatalf("openReplica opened a store: %v, error %v, after asking for %v; want the store on %s, the first free one", db != nil, err, asked, all[held])
				}
				return
			}
			if db != nil || !errors.Is(err, pgstore.ErrWorkDirInUse) {
				t.Fatalf("openReplica opened a store: %v, error %v; want none and ErrWorkDirInUse", db != nil, err)
			}
			if !slices.Equal(asked, all) {
				t.Errorf("asked for %v; want %v, each once and in order", asked, all)
			}
			for _, says := range []string{work, "replicas/2 to replicas/16", "16 in all", "stop one", "--state-dir"} {
				if !strings.Contains(err.Error(), says) {
					t.Errorf("the error does not say %q: %v", says, err)
				}
			}
		})
	}
}
