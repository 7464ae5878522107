package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

type snapshotFlags struct {
	files   int
	mb      int
	changed string
	runs    int
	dir     string
}

func benchSnapshotCommand() *cobra.Command {
	var f snapshotFlags
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Workspace snapshot cost per answer: 1,000 files / 50 MB, by the number of files changed",
		Example: `  massgen-bench snapshot
  massgen-bench snapshot --files 5000 --mb 200 --changed 0,50,500`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return benchSnapshot(cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.files, "files", 1000, "files in the workspace")
	fl.IntVar(&f.mb, "mb", 50, "total size of the workspace in MB")
	fl.StringVar(&f.changed, "changed", "0,10,100,1000", "comma-separated numbers of files changed before each answer")
	fl.IntVar(&f.runs, "runs", 7, "answers snapshotted per row (the median is reported)")
	fl.StringVar(&f.dir, "dir", "", "where workspaces are made (default the system temp dir); snapshot cost depends on its file system")
	return cmd
}

// benchSnapshot times Team.Stage, the snapshot an answer takes as it lands,
// against the first snapshot of the same workspace (every file copied): the
// cost should follow the changed files, not the workspace's size.
func benchSnapshot(out, errw io.Writer, f snapshotFlags) error {
	var changed []int
	for _, s := range strings.Split(f.changed, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 || n > f.files {
			return fmt.Errorf("%w: --changed %q must list numbers from 0 to --files (%d)", coordination.ErrBadInput, f.changed, f.files)
		}
		changed = append(changed, n)
	}
	if f.files < 1 || f.mb < 1 || f.runs < 1 {
		return fmt.Errorf("%w: --files, --mb and --runs must be at least 1", coordination.ErrBadInput)
	}
	base := f.dir
	if base == "" {
		base = os.TempDir()
	}
	fmt.Fprintf(out, "# massgen-bench snapshot\n\n%d files, %d MB, under %s; median of %d answers per row\n\n", f.files, f.mb, base, f.runs)
	fmt.Fprintf(out, "| files changed | snapshot per answer (target < 100 ms) | against the first, full snapshot | per changed file |\n|---|---|---|---|\n")
	var zero time.Duration
	for _, c := range changed {
		progress(errw, "snapshot: %d of %d files changed …", c, f.files)
		first, med, err := snapshotRow(base, f.files, int64(f.mb)<<20, c, f.runs)
		if err != nil {
			return err
		}
		if c == 0 {
			zero = med
		}
		per := "—"
		if c > 0 && zero > 0 {
			per = fmt.Sprintf("%.2f ms", float64((med-zero).Microseconds())/1000/float64(c))
		}
		fmt.Fprintf(out, "| %d | %s | %.3f × | %s |\n", c, ms(med), float64(med)/float64(first), per)
	}
	fmt.Fprintln(out)
	return nil
}

// snapshotRow fills a workspace, takes its first snapshot (timed: the full
// copy), then runs answers that each change c files first.
func snapshotRow(base string, files int, bytes int64, c, runs int) (first, median time.Duration, err error) {
	dir, err := os.MkdirTemp(base, "massgen-bench-snapshot-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	t := workspace.NewTeam(dir, nil, "")
	live, err := t.Prepare("agent_a")
	if err != nil {
		return 0, 0, err
	}
	if err := workspace.FillWorkspace(live, files, bytes); err != nil {
		return 0, 0, err
	}
	time.Sleep(100 * time.Millisecond) // out of the racily-clean window
	step := 1
	land := func() (time.Duration, error) {
		start := time.Now()
		stage, _, err := t.Stage("agent_a", step)
		if err == nil {
			err = os.Rename(stage, t.StepDir("agent_a", step))
		}
		step++
		return time.Since(start), err
	}
	if first, err = land(); err != nil {
		return 0, 0, err
	}
	var times []time.Duration
	for i := range runs {
		if err := workspace.TouchFiles(live, c, i); err != nil {
			return 0, 0, err
		}
		d, err := land()
		if err != nil {
			return 0, 0, err
		}
		times = append(times, d)
	}
	slices.Sort(times)
	return first, times[len(times)/2], nil
}
