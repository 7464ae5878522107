//go:build unix

package workspace

import (
	"io/fs"
	"syscall"
)

// fingerprint reads a file's inode and times from its stat.
func fingerprint(fi fs.FileInfo) *Fingerprint {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &Fingerprint{MTime: fi.ModTime().UnixNano()}
	}
	return &Fingerprint{
		Ino:   uint64(st.Ino),
		MTime: fi.ModTime().UnixNano(),
		CTime: ctime(st),
	}
}
