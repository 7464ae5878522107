package fake_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/anthropic"
	"github.com/massgen-go/massgen-mcp/providers/fake"
	"github.com/massgen-go/massgen-mcp/providers/gemini"
	"github.com/massgen-go/massgen-mcp/providers/openai"
)

const imageTestKey = "sk-test-not-a-key-0000"

// pngBytes is a small real PNG.
func pngBytes(t testing.TB) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// imageAPIs are the four wire formats, each reached through its adapter's
// real SDK client.
var imageAPIs = []struct {
	name, format string
	open         func(ep providers.Endpoint) (providers.Provider, error)
	backend      string
	model        string
	base         func(url string) string
}{
	{"responses", "responses", openai.NewResponses, "openai", "gpt-5-mini", func(u string) string { return u + "/v1" }},
	{"chat", "chat", openai.NewChat, "together", "meta-llama/Llama-4-Scout-17B-16E-Instruct", func(u string) string { return u + "/v1" }},
	{"anthropic", "anthropic", anthropic.New, "claude", "claude-haiku-4-5", func(u string) string { return u }},
	{"gemini", "gemini", gemini.New, "gemini", "gemini-2.5-flash", func(u string) string { return u }},
}

func imageStep(ims ...providers.Image) providers.Request {
	return providers.Request{
		Purpose: providers.PurposeStep,
		System:  "You are one agent of a team.",
		Prompt:  "What colour is the dot in image1.png?",
		Tools: []providers.Tool{{Name: providers.ToolNewAnswer, Description: "Submit a new answer.",
			Schema: []byte(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`)}},
		Images: ims,
	}
}

// TestEveryAPIGetsTheImagesInItsOwnWireFormat sends one PNG through each
// adapter: the fake finds it only in its format's own shape (input_image,
// image_url, an image block, inline_data), decodes it to the same bytes,
// and bills it ImageTokens instead of its base64's length.
func TestEveryAPIGetsTheImagesInItsOwnWireFormat(t *testing.T) {
	data := pngBytes(t)
	for _, api := range imageAPIs {
		t.Run(api.name, func(t *testing.T) {
			script := fake.NewScript()
			srv := httptest.NewServer(fake.NewAll(script))
			defer srv.Close()
			p, err := api.open(providers.Endpoint{Backend: api.backend, Model: api.model, BaseURL: api.base(srv.URL), APIKey: imageTestKey, HTTPClient: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			_, plain, err := p.Step(context.Background(), imageStep())
			if err != nil {
				t.Fatalf("step without images: %v", err)
			}
			_, withImage, err := p.Step(context.Background(), imageStep(providers.Image{Name: "image1.png", MIME: providers.MIMEPNG, Data: data}))
			if err != nil {
				t.Fatalf("step with an image: %v", err)
			}
			calls := script.Calls()
			last := calls[len(calls)-1]
			if last.Format != api.format || len(last.Images) != 1 || last.Images[0].MIME != providers.MIMEPNG || last.Images[0].Bytes != len(data) {
				t.Fatalf("the fake saw %s with images %+v, want one %s of %d bytes", last.Format, last.Images, providers.MIMEPNG, len(data))
			}
			if len(calls[len(calls)-2].Images) != 0 {
				t.Fatalf("the step without images carried %+v", calls[len(calls)-2].Images)
			}
			// The image's part wraps it in a little JSON of its own, a few
			// tokens on top of ImageTokens.
			if d := withImage.Input - plain.Input; d < fake.ImageTokens || d > fake.ImageTokens+40 {
				t.Fatalf("input tokens %d with the image, %d without: the image counts %d, want about %d", withImage.Input, plain.Input, d, fake.ImageTokens)
			}
			if plain.CostUSD != nil && withImage.CostUSD != nil && *withImage.CostUSD <= *plain.CostUSD {
				t.Fatalf("cost %v with the image, %v without", *withImage.CostUSD, *plain.CostUSD)
			}
		})
	}
}

// TestFakesRefuseAnImageWhoseBytesAreNotItsType: declared JPEG, bytes PNG —
// every API refuses that, and so does each fake.
func TestFakesRefuseAnImageWhoseBytesAreNotItsType(t *testing.T) {
	data := pngBytes(t)
	for _, api := range imageAPIs {
		t.Run(api.name, func(t *testing.T) {
			script := fake.NewScript()
			srv := httptest.NewServer(fake.NewAll(script))
			defer srv.Close()
			p, err := api.open(providers.Endpoint{Backend: api.backend, Model: api.model, BaseURL: api.base(srv.URL), APIKey: imageTestKey, HTTPClient: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = p.Step(context.Background(), imageStep(providers.Image{Name: "image1.jpg", MIME: providers.MIMEJPEG, Data: data}))
			if err == nil || !strings.Contains(err.Error(), "does not match the provided media type") {
				t.Fatalf("Step = %v, want the API's refusal of a mislabelled image", err)
			}
		})
	}
}
