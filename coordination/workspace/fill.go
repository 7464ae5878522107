package workspace

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// FillWorkspace writes files of equal size, bytes in total, in ten
// directories: the workspace the snapshot benchmarks measure (the Go
// benchmark and massgen-bench snapshot).
func FillWorkspace(dir string, files int, bytes int64) error {
	size := bytes / int64(files)
	buf := make([]byte, size)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < files; i++ {
		for j := range buf {
			buf[j] = byte('a' + r.IntN(26))
		}
		p := filepath.Join(dir, fileName(i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// TouchFiles rewrites the first n files FillWorkspace wrote, in place, with
// round's number: what an agent's step changes before it answers.
func TouchFiles(dir string, n, round int) error {
	for j := 0; j < n; j++ {
		f, err := os.OpenFile(filepath.Join(dir, fileName(j)), os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f, "%08d", round)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func fileName(i int) string { return fmt.Sprintf("dir%d/file%04d.txt", i%10, i) }
