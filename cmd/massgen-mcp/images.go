package main

import (
	"io"
	"os"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// readImageFiles reads run --image files: the user's own files, so any
// path they can read (no roots, unlike a client's paths). Type and size
// are the service's to check; a file is read only to one byte over the
// cap, so a huge one is refused without being loaded.
func readImageFiles(paths []string) ([]coordination.ImageInput, error) {
	var out []coordination.ImageInput
	for _, p := range paths {
		const want = "an image file (PNG, JPEG, GIF or WebP)"
		f, err := os.Open(p)
		if err != nil {
			return nil, flagFileErr("--image", p, want, err)
		}
		data, err := io.ReadAll(io.LimitReader(f, coordination.MaxImageBytes+1))
		f.Close()
		if err != nil {
			return nil, flagFileErr("--image", p, want, err)
		}
		out = append(out, coordination.ImageInput{Data: data, From: p})
	}
	return out, nil
}
