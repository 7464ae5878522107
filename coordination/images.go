package coordination

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// Caps on the images that come with a task. Every step of every agent
// carries them all, so their size multiplies by agents × rounds; the
// per-image cap is the smallest the APIs take (Anthropic's 5 MB).
const (
	MaxImages      = 8
	MaxImageBytes  = 5 << 20
	MaxImagesBytes = 20 << 20
)

// ErrNoVision is wrapped by the error for a team one of whose models
// cannot read the images that come with the task.
var ErrNoVision = errors.New("a model of the team cannot read images")

// ImageInput is one image a caller gives with the task: its bytes, the
// type the caller declared ("" if none) and where it came from (a path, or
// "data"), for the error that names it.
type ImageInput struct {
	Data []byte
	MIME string
	From string
}

// ImageRef is an image as the session keeps it: a reference into the
// store's images (ImageStore), never the bytes; the ledger holds nothing
// of it.
type ImageRef struct {
	Name   string `json:"name"`
	MIME   string `json:"mime"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// ImageStore is implemented by a store that keeps a session's images: each
// content once per session (the same bytes given twice are one image),
// apart from the session's setup and ledger, which refer to it by SHA-256.
// A store without it runs no task with images.
type ImageStore interface {
	// PutImage stores data for session id and returns its SHA-256 (hex).
	PutImage(ctx context.Context, id string, data []byte) (sum string, err error)
	// Image reads the image with that SHA-256 back.
	Image(ctx context.Context, id, sum string) ([]byte, error)
}

// checkImages sniffs and sizes a caller's images: PNG, JPEG, GIF or WebP
// only, whatever was declared, within MaxImages, MaxImageBytes and
// MaxImagesBytes.
func checkImages(in []ImageInput) ([]providers.Image, error) {
	if len(in) > MaxImages {
		return nil, fmt.Errorf("%w: %d images; a task takes at most %d, so send the ones that matter", ErrBadInput, len(in), MaxImages)
	}
	var out []providers.Image
	total := 0
	for i, im := range in {
		what := fmt.Sprintf("image %d (%s)", i+1, im.From)
		mime := providers.SniffImage(im.Data)
		switch {
		case len(im.Data) == 0:
			return nil, fmt.Errorf("%w: %s is empty", ErrBadInput, what)
		case len(im.Data) > MaxImageBytes:
			return nil, fmt.Errorf("%w: %s is %s; an image may be at most %s, so downscale or crop it", ErrBadInput, what, sizeWords(len(im.Data)), sizeWords(MaxImageBytes))
		case mime == "":
			return nil, fmt.Errorf("%w: %s is not a PNG, JPEG, GIF or WebP image (judged by its bytes); convert it to one of those", ErrBadInput, what)
		case im.MIME != "" && !strings.EqualFold(im.MIME, mime):
			return nil, fmt.Errorf("%w: %s is declared %s but its bytes are %s; give the right mime or leave it out", ErrBadInput, what, im.MIME, mime)
		}
		total += len(im.Data)
		out = append(out, providers.Image{Name: providers.ImageName(i+1, mime), MIME: mime, Data: im.Data})
	}
	if total > MaxImagesBytes {
		return nil, fmt.Errorf("%w: the images total %s; a task's images may total at most %s, so send fewer or smaller ones", ErrBadInput, sizeWords(total), sizeWords(MaxImagesBytes))
	}
	return out, nil
}

func sizeWords(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", (n+1023)>>10)
}

// imageRefs are the references a session keeps of its images.
func imageRefs(ims []providers.Image) []ImageRef {
	refs := make([]ImageRef, len(ims))
	for i, im := range ims {
		sum := sha256.Sum256(im.Data)
		refs[i] = ImageRef{Name: im.Name, MIME: im.MIME, Bytes: int64(len(im.Data)), SHA256: hex.EncodeToString(sum[:])}
	}
	return refs
}

// checkVision refuses a team with images when one of its agents' models
// cannot read them, naming every such agent at once. Refused rather than
// warned: an agent blind to the images would still answer and vote, its
// vote counting as much as those that saw them, and no one would know —
// and the refusal costs nothing, as no step has run.
func checkVision(s *Session) error {
	var whys []error
	for _, a := range s.Agents {
		sp, err := a.Spec()
		if err != nil {
			continue
		}
		if ok, why := providers.TakesImages(sp); !ok {
			whys = append(whys, fmt.Errorf("agent %s (%s): %s", a.ID, providers.ShowSpec(a.Model), why))
		}
	}
	if len(whys) == 0 {
		return nil
	}
	lines := make([]string, len(whys))
	for i, w := range whys {
		lines[i] = w.Error()
	}
	return &listedError{msg: fmt.Sprintf("%v: %v: %s; give those agents a model that reads images (e.g. openai/gpt-5.4, claude, gemini), or leave them out",
		ErrBadInput, ErrNoVision, strings.Join(lines, "; ")), errs: []error{ErrBadInput, ErrNoVision}}
}

// putImages stores a new session's images (Create, once the session is
// written).
func (svc *Service) putImages(ctx context.Context, s *Session, ims []providers.Image) error {
	if len(ims) == 0 {
		return nil
	}
	st, _ := svc.store.(ImageStore)
	for i, im := range ims {
		sum, err := st.PutImage(ctx, s.ID, im.Data)
		if err != nil {
			return fmt.Errorf("storing image %d of session %s: %w", i+1, s.ID, err)
		}
		if sum != s.Images[i].SHA256 {
			return fmt.Errorf("storing image %d of session %s: the store kept other bytes (SHA-256 %s, not %s)", i+1, s.ID, sum, s.Images[i].SHA256)
		}
	}
	return nil
}

// images reads a session's images back for a model call; nil for a
// session without images.
func (svc *Service) images(ctx context.Context, s *Session) ([]providers.Image, error) {
	if len(s.Images) == 0 {
		return nil, nil
	}
	st, ok := svc.store.(ImageStore)
	if !ok {
		return nil, fmt.Errorf("session %s has images but this store keeps none", s.ID)
	}
	out := make([]providers.Image, len(s.Images))
	for i, ref := range s.Images {
		data, err := st.Image(ctx, s.ID, ref.SHA256)
		if err != nil {
			return nil, fmt.Errorf("reading image %s of session %s: %w", ref.Name, s.ID, err)
		}
		out[i] = providers.Image{Name: ref.Name, MIME: ref.MIME, Data: data}
	}
	return out, nil
}

// imagesNote is what the prompt says of the task's images, after the task.
func imagesNote(s *Session) string {
	if len(s.Images) == 0 {
		return ""
	}
	names := make([]string, len(s.Images))
	for i, im := range s.Images {
		names[i] = im.Name
	}
	return fmt.Sprintf("\n<IMAGES>\nThe message comes with %d image(s), given to you with it: %s.\n<END OF IMAGES>\n", len(s.Images), strings.Join(names, ", "))
}

// withImages checks a new session's images and records their references
// on it: refused before anything is written or any provider called when
// one is not an image or too large, when the store keeps no images, or
// when an agent's model cannot read them.
func (svc *Service) withImages(s *Session, in []ImageInput) ([]providers.Image, error) {
	if len(in) == 0 {
		return nil, nil
	}
	ims, err := checkImages(in)
	if err != nil {
		return nil, err
	}
	if _, ok := svc.store.(ImageStore); !ok {
		return nil, fmt.Errorf("%w: this server's store keeps no images; run the task without them", ErrBadInput)
	}
	if err := checkVision(s); err != nil {
		return nil, err
	}
	s.Images = imageRefs(ims)
	return ims, nil
}

// EstimateImageTokens is an image's worst case in an estimate, the one
// the providers charge a reply cut before its usage report by.
const EstimateImageTokens = providers.EstimateImageTokens

// imageTokens is the worst case of a step's images.
func imageTokens(s *Session) int64 { return int64(len(s.Images)) * EstimateImageTokens }
