//go:build !unix

package workspace

import "io/fs"

func fingerprint(fi fs.FileInfo) *Fingerprint {
	return &Fingerprint{MTime: fi.ModTime().UnixNano()}
}
