package providers

import (
	"bytes"
	"encoding/base64"
	"fmt"
)

// Image is one image that comes with the task: every agent whose model
// takes images is sent it in its API's own wire format, and a CLI agent
// finds it as a file in its workspace. Data is the image's bytes, whole.
type Image struct {
	Name string // what the prompt calls it: image1.png, image2.jpeg, …
	MIME string // image/png, image/jpeg, image/gif or image/webp
	Data []byte
}

// The image types every API of the team takes alike (OpenAI, Anthropic and
// Gemini all read these four; none takes them all beyond these).
const (
	MIMEPNG  = "image/png"
	MIMEJPEG = "image/jpeg"
	MIMEGIF  = "image/gif"
	MIMEWebP = "image/webp"
)

// SniffImage names the image type of data from its first bytes, or "" for
// anything that is not a PNG, JPEG, GIF or WebP image. A declared type is
// never trusted: the APIs refuse an image whose bytes and type disagree.
func SniffImage(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return MIMEPNG
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return MIMEJPEG
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return MIMEGIF
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return MIMEWebP
	}
	return ""
}

// ImageExt is the file extension for an image type ("png" for image/png).
func ImageExt(mime string) string {
	switch mime {
	case MIMEJPEG:
		return "jpg"
	case MIMEGIF:
		return "gif"
	case MIMEWebP:
		return "webp"
	}
	return "png"
}

// ImageName is the name the prompt gives the n-th image (1-based).
func ImageName(n int, mime string) string { return fmt.Sprintf("image%d.%s", n, ImageExt(mime)) }

// Base64 is the image's bytes in standard base64, as Anthropic's and
// Gemini's wire formats carry them.
func (im Image) Base64() string { return base64.StdEncoding.EncodeToString(im.Data) }

// DataURL is the image as a data: URL, as OpenAI's wire formats carry it.
func (im Image) DataURL() string { return "data:" + im.MIME + ";base64," + im.Base64() }
