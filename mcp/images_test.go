package mcp

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
)

func writePNG(t *testing.T, path string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 6, 6))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func imageRun(images ...map[string]any) string {
	return mustJSON(map[string]any{"task": "What is in the picture?", "models": []string{"sim/strong", "sim"}, "wait": true, "images": images})
}

func TestRunTeamTakesImagesByPathUnderARootOrAsData(t *testing.T) {
	root := t.TempDir()
	img := writePNG(t, filepath.Join(root, "pic.png"))
	c := inProcess(t, newFileServer(t, Options{Roots: []string{root}}), false)
	var res coordination.TeamResult
	decode(t, callTool(t, c, "run_team", imageRun(map[string]any{"path": "pic.png"}, map[string]any{"data": base64.StdEncoding.EncodeToString(img), "mime": "image/png"})), &res)
	if res.Status != coordination.StatusFinished {
		t.Fatalf("status %s", res.Status)
	}
}

func TestImagesOutsideTheRootsOrNotImagesAreRefused(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	writePNG(t, filepath.Join(elsewhere, "secret.png"))
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("not an image"), 0o644)
	c := inProcess(t, newMemServer(t, Options{Roots: []string{root}}), false)
	cases := []struct {
		name  string
		image map[string]any
		words []string
	}{
		{"a path outside the roots", map[string]any{"path": filepath.Join(elsewhere, "secret.png")}, []string{"outside the allowed roots"}},
		{"a symlink out of the roots", map[string]any{"path": "link.png"}, []string{"outside the allowed roots"}},
		{"a text file", map[string]any{"path": "notes.txt"}, []string{"image 1 (notes.txt) is not a PNG, JPEG, GIF or WebP image"}},
		{"data that is not base64", map[string]any{"data": "not base64!"}, []string{"images[0].data is not standard base64"}},
		{"both path and data", map[string]any{"path": "notes.txt", "data": "AAAA"}, []string{"exactly one of path"}},
		{"a mislabelled image", map[string]any{"data": base64.StdEncoding.EncodeToString([]byte("GIF89a.........")), "mime": "image/png"}, []string{"declared image/png but its bytes are image/gif"}},
	}
	if err := os.Symlink(filepath.Join(elsewhere, "secret.png"), filepath.Join(root, "link.png")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, callTool(t, c, "run_team", imageRun(tc.image)), "bad_input", tc.words...)
		})
	}
}
