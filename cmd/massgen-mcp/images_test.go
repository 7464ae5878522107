package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"image"
	"image/png"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers/fake"
)

// rehearseWith runs `run --rehearse --json` of the three API backends,
// through their real SDKs against the fakes, with extra flags.
func rehearseWith(t *testing.T, state string, extra ...string) coordination.TeamResult {
	t.Helper()
	args := append([]string{"run", "--rehearse", "--state-dir", state, "--plain", "--json", "--seed", "1",
		"--models", "openai/gpt-5-mini,claude/claude-haiku-4-5,gemini/gemini-2.5-flash"}, extra...)
	cmd := exec.Command(binary(t), append(args, "What is in the picture?")...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	var res coordination.TeamResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return res
}

func TestRunImageReachesEveryAPIAgentIsBilledAndIsStoredOnceOutsideTheLedger(t *testing.T) {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 64, 64))); err != nil {
		t.Fatal(err)
	}
	pic := filepath.Join(t.TempDir(), "pic.png")
	if err := os.WriteFile(pic, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := rehearseWith(t, t.TempDir())
	state := t.TempDir()
	res := rehearseWith(t, state, "--image", pic, "--image", pic)
	if res.Status != "finished" {
		t.Fatalf("status %s", res.Status)
	}
	// Every model call carried both images at ImageTokens each: at least
	// one call per agent.
	if d := res.Usage.Input - plain.Usage.Input; d < 3*2*fake.ImageTokens {
		t.Fatalf("input tokens %d with the images, %d without: the images count %d", res.Usage.Input, plain.Usage.Input, d)
	}
	if res.CostUSD == nil || plain.CostUSD == nil || *res.CostUSD <= *plain.CostUSD {
		t.Fatalf("cost %v with the images, %v without", res.CostUSD, plain.CostUSD)
	}
	sum := sha256.Sum256(b.Bytes())
	stored, err := os.ReadDir(filepath.Join(res.SessionDir, "images"))
	if err != nil || len(stored) != 1 || stored[0].Name() != hex.EncodeToString(sum[:]) {
		t.Fatalf("the session's images: %v, %v; want the one content once", stored, err)
	}
	b64 := base64.StdEncoding.EncodeToString(b.Bytes())[:48]
	filepath.WalkDir(res.SessionDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(filepath.Dir(path)) == "images" {
			return nil
		}
		data, _ := os.ReadFile(path)
		if bytes.Contains(data, b.Bytes()[16:64]) || strings.Contains(string(data), b64) {
			t.Errorf("%s holds the image's bytes", path)
		}
		return nil
	})
}

func TestRunRefusesAnImageThatIsNone(t *testing.T) {
	notes := filepath.Join(t.TempDir(), "notes.png")
	os.WriteFile(notes, []byte("just text, named .png"), 0o644)
	out, code := cli(t, "run", "--state-dir", t.TempDir(), "--models", "sim,sim", "--image", notes, "What is it?")
	if code != exitBadInput || !strings.Contains(out, "is not a PNG, JPEG, GIF or WebP image") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
