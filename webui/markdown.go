package webui

import (
	"bytes"
	"html"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// md renders an answer's markdown. goldmark without html.WithUnsafe drops
// raw HTML (it writes "<!-- raw HTML omitted -->") and links of dangerous
// schemes (javascript:, vbscript:, data: but images), so what a model wrote
// cannot script the page.
var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

// maxMarkdown caps the text rendered as markdown; a longer answer is shown
// as escaped text, which costs nothing to render.
const maxMarkdown = 256 << 10

// markdownHTML is text as safe HTML.
func markdownHTML(text string) string {
	if len(text) > maxMarkdown {
		return "<pre>" + html.EscapeString(text) + "</pre>"
	}
	var b bytes.Buffer
	if err := md.Convert([]byte(text), &b); err != nil {
		return "<pre>" + html.EscapeString(text) + "</pre>"
	}
	return b.String()
}
