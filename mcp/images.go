package mcp

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// imageArg is one image for the task: a file under the allowed roots, or
// its bytes in base64. MCP's image content blocks are results, never tool
// arguments, so images travel as this argument.
type imageArg struct {
	Path string `json:"path,omitempty"`
	Data string `json:"data,omitempty"`
	MIME string `json:"mime,omitempty"`
}

// readImages turns image arguments into the service's image inputs. A path
// must resolve (symlinks included) inside an allowed root, as a context
// path must; the bytes' type and size are checked by the service, which
// sniffs them whatever mime says.
func readImages(args []imageArg, cp clientPaths) ([]coordination.ImageInput, error) {
	if len(args) > coordination.MaxImages {
		return nil, fmt.Errorf("%w: %d images; a task takes at most %d", coordination.ErrBadInput, len(args), coordination.MaxImages)
	}
	var out []coordination.ImageInput
	for i, a := range args {
		switch {
		case (a.Path == "") == (a.Data == ""):
			return nil, fmt.Errorf("%w: images[%d] needs exactly one of path (a file under the allowed roots) or data (base64)", coordination.ErrBadInput, i)
		case a.Data != "":
			if len(a.Data) > base64.StdEncoding.EncodedLen(coordination.MaxImageBytes) {
				return nil, fmt.Errorf("%w: images[%d] is over %d MiB; an image may be at most that, so downscale or crop it", coordination.ErrBadInput, i, coordination.MaxImageBytes>>20)
			}
			data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(a.Data))
			if err != nil {
				return nil, fmt.Errorf("%w: images[%d].data is not standard base64 (%v); send the file's bytes base64-encoded, without a data: prefix", coordination.ErrBadInput, i, err)
			}
			out = append(out, coordination.ImageInput{Data: data, MIME: a.MIME, From: "data"})
		default:
			data, err := readImageUnderRoots(a.Path, cp)
			if err != nil {
				return nil, err
			}
			out = append(out, coordination.ImageInput{Data: data, MIME: a.MIME, From: a.Path})
		}
	}
	return out, nil
}

// readImageUnderRoots reads an image file that lies inside an allowed
// root, at most one byte over the per-image cap (the service words that).
func readImageUnderRoots(path string, cp clientPaths) ([]byte, error) {
	real, err := cp.resolve(path, imageUse)
	if err != nil {
		return nil, err
	}
	// As for context files: no blocking on a FIFO, no symlink swapped in.
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: image path %q cannot be read: %w", coordination.ErrBadInput, path, unwrapPathError(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: image path %q is not a regular file; name an image file", coordination.ErrBadInput, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, coordination.MaxImageBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: image path %q cannot be read: %w", coordination.ErrBadInput, path, err)
	}
	return data, nil
}
