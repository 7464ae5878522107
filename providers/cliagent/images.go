package cliagent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// ImagesDir is where a CLI agent finds the task's images: a directory of
// its workspace (its working directory), which the step removes before it
// ends so that the images never become part of the files it delivers.
const ImagesDir = ".massgen-images"

// placeImages writes the task's images into the run's working directory
// and returns what removes them again.
func placeImages(req providers.Request, workdir string) (remove func(), err error) {
	if len(req.Images) == 0 {
		return func() {}, nil
	}
	dir := filepath.Join(workdir, ImagesDir)
	remove = func() { os.RemoveAll(dir) }
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot give the agent the task's images: %w", err)
	}
	for _, im := range req.Images {
		// The name is the core's (imageN.ext), never a caller's path.
		if !filepath.IsLocal(im.Name) || strings.ContainsAny(im.Name, `/\`) {
			remove()
			return nil, fmt.Errorf("image name %q is not a plain file name", im.Name)
		}
		if err := os.WriteFile(filepath.Join(dir, im.Name), im.Data, 0o600); err != nil {
			remove()
			return nil, fmt.Errorf("cannot give the agent the task's images: %w", err)
		}
	}
	return remove, nil
}

// imagesNote tells the CLI agent where the task's images are.
func imagesNote(req providers.Request) string {
	if len(req.Images) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The task comes with %d image(s), saved as files in your workspace; open them to see them (they are removed when the step ends, so do not deliver them):\n", len(req.Images))
	for _, im := range req.Images {
		fmt.Fprintf(&b, "- %s/%s (%s, %d bytes)\n", ImagesDir, im.Name, im.MIME, len(im.Data))
	}
	return b.String()
}
