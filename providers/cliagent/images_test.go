package cliagent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
)

func TestACLIAgentFindsTheImagesAsFilesNamedInItsPromptAndDeliversNone(t *testing.T) {
	h := newHarness(t, "images")
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	req := h.request()
	req.Images = []providers.Image{{Name: "image1.png", MIME: providers.MIMEPNG, Data: b.Bytes()}}
	act, _, err := h.step(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) != 1 {
		t.Fatalf("action = %+v", act)
	}
	var args struct{ Content string }
	json.Unmarshal(act.Calls[0].Args, &args)
	want := fmt.Sprintf("saw %s/image1.png=%d:image/png:<nil>", ImagesDir, b.Len())
	if args.Content != want {
		t.Fatalf("the CLI saw %q, want %q", args.Content, want)
	}
	// Gone before the step returns: the answer's snapshot never holds them.
	if _, err := os.Stat(filepath.Join(h.ws, ImagesDir)); !os.IsNotExist(err) {
		t.Fatalf("the images are still in the workspace: %v", err)
	}
}

func TestAStepWithoutImagesMentionsNone(t *testing.T) {
	h := newHarness(t, "images")
	if s := system(h.request(), h.ws, nil, nil, nil); strings.Contains(s, ImagesDir) {
		t.Fatalf("a step without images speaks of them:\n%s", s)
	}
}
