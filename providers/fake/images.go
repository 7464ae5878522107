package fake

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// ImageTokens is what one image costs in a fake's usage, whatever its size
// (Gemini bills 258 tokens for an image up to 384 px a side): an image's
// base64 text counts for nothing, this instead.
const ImageTokens = 258

// CallImage is one image a request carried, as its wire format said it.
type CallImage struct {
	MIME  string // the declared type, which matched the bytes
	Bytes int    // the decoded size
}

// inputChars is the length the fakes count input tokens from (a token per
// four characters): the body without the images' base64, plus ImageTokens
// per image.
func (c Call) inputChars() int {
	return len(c.Body) - c.imageChars + 4*ImageTokens*len(c.Images)
}

// withImages reads the images of a request in its format's wire shape onto
// c, or says what the real API would refuse about one: an image that is not
// base64 data, bytes that are no image, or bytes of another type than the
// one declared.
func (c *Call) withImages() string {
	var found []wireImage
	var err error
	switch c.Format {
	case "responses":
		found, err = responsesImages(c.Body)
	case "chat":
		found, err = chatImages(c.Body)
	case anthropicFormat:
		found, err = anthropicImages(c.Body)
	case "gemini":
		found, err = geminiImages(c.Body)
	}
	if err != nil {
		return err.Error()
	}
	for i, w := range found {
		data, err := base64.StdEncoding.DecodeString(w.data)
		if err != nil {
			return fmt.Sprintf("image %d: the data is not valid base64: %v", i+1, err)
		}
		if got := providers.SniffImage(data); got == "" || got != w.mime {
			return fmt.Sprintf("image %d: the image does not match the provided media type %s", i+1, w.mime)
		}
		c.Images = append(c.Images, CallImage{MIME: w.mime, Bytes: len(data)})
		c.imageChars += len(w.data)
	}
	return ""
}

// wireImage is an image as a request carried it: its declared type and its
// base64 data.
type wireImage struct{ mime, data string }

// dataURL splits a data: URL; OpenAI's formats carry images so.
func dataURL(u string) (wireImage, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	meta, data, ok2 := strings.Cut(rest, ",")
	mime, ok3 := strings.CutSuffix(meta, ";base64")
	if !ok || !ok2 || !ok3 {
		return wireImage{}, fmt.Errorf("this fake takes images only as base64 data URLs (data:image/png;base64,…), not %.40q", u)
	}
	return wireImage{mime: mime, data: data}, nil
}

// responsesImages finds the input_image parts of a Responses request.
func responsesImages(body []byte) ([]wireImage, error) {
	var q struct {
		Input json.RawMessage `json:"input"`
	}
	var items []struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(body, &q) != nil || json.Unmarshal(q.Input, &items) != nil {
		return nil, nil // a string input carries no images
	}
	var out []wireImage
	for _, it := range items {
		var parts []struct {
			Type     string  `json:"type"`
			ImageURL *string `json:"image_url"`
		}
		if json.Unmarshal(it.Content, &parts) != nil {
			continue
		}
		for _, p := range parts {
			switch {
			case p.Type == "image_url":
				//lint:ignore ST1005 the API's own words, which clients show
				return nil, fmt.Errorf("Invalid value: 'image_url'. Supported values are: 'input_text', 'input_image', 'output_text', 'refusal', 'input_file', 'computer_screenshot', and 'summary_text'.")
			case p.Type != "input_image":
			case p.ImageURL == nil:
				return nil, fmt.Errorf("input_image needs an image_url (or a file_id, which this fake does not serve)")
			default:
				w, err := dataURL(*p.ImageURL)
				if err != nil {
					return nil, err
				}
				out = append(out, w)
			}
		}
	}
	return out, nil
}

// chatImages finds the image_url parts of a Chat Completions request.
func chatImages(body []byte) ([]wireImage, error) {
	var q struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &q) != nil {
		return nil, nil
	}
	var out []wireImage
	for _, m := range q.Messages {
		var parts []struct {
			Type     string `json:"type"`
			ImageURL *struct {
				URL string `json:"url"`
			} `json:"image_url"`
		}
		if json.Unmarshal(m.Content, &parts) != nil {
			continue
		}
		for _, p := range parts {
			switch {
			case p.Type == "input_image":
				//lint:ignore ST1005 the API's own words, which clients show
				return nil, fmt.Errorf("Invalid value: 'input_image'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', and 'file'.")
			case p.Type != "image_url":
			case p.ImageURL == nil:
				return nil, fmt.Errorf("an image_url part needs image_url.url")
			default:
				w, err := dataURL(p.ImageURL.URL)
				if err != nil {
					return nil, err
				}
				out = append(out, w)
			}
		}
	}
	return out, nil
}

// anthropicImages finds the image blocks of a Messages request.
func anthropicImages(body []byte) ([]wireImage, error) {
	var q struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &q) != nil {
		return nil, nil
	}
	var out []wireImage
	for _, m := range q.Messages {
		var blocks []struct {
			Type   string `json:"type"`
			Source *struct {
				Type      string `json:"type"`
				MediaType string `json:"media_type"`
				Data      string `json:"data"`
			} `json:"source"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			switch {
			case b.Type != "image":
			case b.Source == nil || b.Source.Type != "base64":
				return nil, fmt.Errorf("this fake takes image blocks only with a base64 source")
			default:
				out = append(out, wireImage{mime: b.Source.MediaType, data: b.Source.Data})
			}
		}
	}
	return out, nil
}

// geminiImages finds the inline_data parts of a generateContent request
// (the Go SDK writes them inlineData; the API reads both spellings).
func geminiImages(body []byte) ([]wireImage, error) {
	type blob struct {
		MIMEType  string `json:"mimeType"`
		MIMEType2 string `json:"mime_type"`
		Data      string `json:"data"`
	}
	var q struct {
		Contents []struct {
			Parts []struct {
				InlineData  *blob `json:"inlineData"`
				InlineData2 *blob `json:"inline_data"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if json.Unmarshal(body, &q) != nil {
		return nil, nil
	}
	var out []wireImage
	for _, c := range q.Contents {
		for _, p := range c.Parts {
			b := p.InlineData
			if b == nil {
				b = p.InlineData2
			}
			if b == nil {
				continue
			}
			out = append(out, wireImage{mime: b.MIMEType + b.MIMEType2, data: b.Data})
		}
	}
	return out, nil
}
