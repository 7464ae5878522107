package coordination_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/coordtest"
	"github.com/massgen-go/massgen-mcp/providers"
)

// testPNG is a real PNG whose bytes are unique to its side.
func testPNG(t testing.TB, side int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, side, side))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestEveryStepIsGivenTheTasksImagesAndTheLedgerHoldsNoneOfThem(t *testing.T) {
	models, scripts, provs := coordtest.Team(t, 3)
	h := coordtest.New(t, provs)
	img := testPNG(t, 40)
	s := h.Create(coordination.TeamSpec{Models: models, Task: "What is drawn here?",
		Images: []coordination.ImageInput{{Data: img, From: "sketch.png"}, {Data: img, MIME: "image/PNG", From: "data"}}})
	if len(s.Images) != 2 || s.Images[0].Name != "image1.png" || s.Images[1].Name != "image2.png" || s.Images[0].SHA256 != s.Images[1].SHA256 || s.Images[0].Bytes != int64(len(img)) {
		t.Fatalf("session images = %+v", s.Images)
	}
	h.Run(s.ID)
	for i, sc := range scripts {
		reqs := sc.Requests()
		if len(reqs) == 0 {
			t.Fatalf("agent %d was never called", i)
		}
		for _, r := range reqs {
			if len(r.Images) != 2 || !bytes.Equal(r.Images[0].Data, img) || r.Images[1].MIME != providers.MIMEPNG {
				t.Fatalf("agent %d step %d got images %d, want both", i, r.StepNumber, len(r.Images))
			}
			if !strings.Contains(r.Prompt, "2 image(s), given to you with it: image1.png, image2.png") {
				t.Fatalf("the prompt does not name the images:\n%s", r.Prompt)
			}
		}
	}
	ledger, err := json.Marshal(h.Ledger(s.ID))
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(img)
	if bytes.Contains(ledger, img[8:40]) || bytes.Contains(ledger, []byte(b64[:40])) {
		t.Fatal("the ledger holds image bytes")
	}
	setup, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(setup, []byte(b64[:40])) || !bytes.Contains(setup, []byte(s.Images[0].SHA256)) {
		t.Fatalf("the session keeps images other than by reference: %s", setup)
	}
	stored, err := h.Store.Image(context.Background(), s.ID, s.Images[0].SHA256)
	if err != nil || !bytes.Equal(stored, img) {
		t.Fatalf("the store's image = %d bytes, %v", len(stored), err)
	}
}

func TestImagesThatAreNoImageOrTooLargeAreRefusedBeforeAnythingIsWritten(t *testing.T) {
	big := append(testPNG(t, 4), make([]byte, coordination.MaxImageBytes)...)
	four := append(testPNG(t, 4), make([]byte, 4<<20)...)
	cases := []struct {
		name   string
		images []coordination.ImageInput
		want   string
	}{
		{"text is not an image", []coordination.ImageInput{{Data: []byte("hello, world"), From: "notes.txt"}}, "image 1 (notes.txt) is not a PNG, JPEG, GIF or WebP image"},
		{"a BMP is not taken", []coordination.ImageInput{{Data: append([]byte("BM"), make([]byte, 64)...), From: "x.bmp"}}, "is not a PNG, JPEG, GIF or WebP image"},
		{"a mislabelled image", []coordination.ImageInput{{Data: testPNG(t, 4), MIME: "image/jpeg", From: "data"}}, "is declared image/jpeg but its bytes are image/png"},
		{"one image over the cap", []coordination.ImageInput{{Data: big, From: "huge.png"}}, "image 1 (huge.png) is 5.0 MiB; an image may be at most 5.0 MiB"},
		{"images over the total", []coordination.ImageInput{{Data: four, From: "a"}, {Data: four, From: "b"}, {Data: four, From: "c"}, {Data: four, From: "d"}, {Data: four, From: "e"}}, "the images total 20.0 MiB; a task's images may total at most 20.0 MiB"},
		{"too many images", make([]coordination.ImageInput, coordination.MaxImages+1), "9 images; a task takes at most 8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			models, _, provs := coordtest.Team(t, 2)
			h := coordtest.New(t, provs)
			_, err := h.Service.Create(context.Background(), coordination.TeamSpec{Models: models, Task: "Describe it", Images: c.images})
			if !errors.Is(err, coordination.ErrBadInput) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Create = %v, want ErrBadInput saying %q", err, c.want)
			}
			if ids, _ := h.Store.Sessions(context.Background()); len(ids) != 0 {
				t.Fatalf("a refused team left sessions %v", ids)
			}
		})
	}
}

func TestATeamWithAModelThatCannotReadImagesIsRefusedNamingIt(t *testing.T) {
	models, _, provs := coordtest.Team(t, 2)
	for _, m := range []string{"deepseek/deepseek-chat", "openai/gpt-3.5-turbo"} {
		provs[m] = &coordtest.Scripted{}
	}
	h := coordtest.New(t, provs)
	spec := coordination.TeamSpec{Models: append(models, "deepseek/deepseek-chat", "openai/gpt-3.5-turbo"), Task: "Describe it",
		Images: []coordination.ImageInput{{Data: testPNG(t, 4), From: "a.png"}}}
	_, err := h.Service.Create(context.Background(), spec)
	if !errors.Is(err, coordination.ErrNoVision) || !errors.Is(err, coordination.ErrBadInput) {
		t.Fatalf("Create = %v, want ErrNoVision", err)
	}
	for _, want := range []string{"deepseek/deepseek-chat): the deepseek API reads text only", "openai/gpt-3.5-turbo): the model gpt-3.5-turbo reads text only", "give those agents a model that reads images"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("the refusal %q does not say %q", err, want)
		}
	}
	// Without images the same team is fine: only the images ask for eyes.
	spec.Images = nil
	if _, err := h.Service.Create(context.Background(), spec); err != nil {
		t.Fatalf("the team without images: %v", err)
	}
}
