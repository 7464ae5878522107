package wholefile

import (
	"io"
	"io/fs"
)

// DirBatch is how many entries of a directory ReadDirBatches reads at a
// time: a directory of a million entries is never held whole.
const DirBatch = 1024

// dirReader is an open directory (an *os.File, from os.Open or an
// os.Root's Open).
type dirReader interface {
	ReadDir(n int) ([]fs.DirEntry, error)
}

// ReadDirBatches passes dir's entries to each, DirBatch at a time, in the
// order the directory gives them, until the end, an error of the read, or
// an error of each (which stops the read and is returned: a walk past its
// caps).
func ReadDirBatches(dir dirReader, each func([]fs.DirEntry) error) error {
	for {
		ents, err := dir.ReadDir(DirBatch)
		if len(ents) > 0 {
			if eerr := each(ents); eerr != nil {
				return eerr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
