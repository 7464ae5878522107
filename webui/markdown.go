package webui

import (
	"bytes"
	"html"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// md renders an answer's markdown. goldmark without html.WithUnsafe drops
// raw HTML (it writes "<!-- raw HTML omitted -->") and links of dangerous
// schemes (javascript:, vbscript:, data: but images), so what a model wrote
// cannot script the page; remoteImages keeps it from loading anything.
var md = goldmark.New(goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(remoteImages{}, 100))))

// remoteImages turns an image a model named elsewhere into a link to it:
// the page loads nothing from elsewhere (its CSP would block the image
// anyway, with a console error and a broken picture), and its host learns
// nothing of who reads the answer. An inline data: image stays.
type remoteImages struct{}

func (remoteImages) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	var images []*ast.Image
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if img, ok := n.(*ast.Image); ok && entering && !bytes.HasPrefix(bytes.ToLower(img.Destination), []byte("data:")) {
			images = append(images, img)
		}
		return ast.WalkContinue, nil
	})
	for _, img := range images {
		link := ast.NewLink()
		link.Destination, link.Title = img.Destination, img.Title
		for c := img.FirstChild(); c != nil; {
			next := c.NextSibling()
			link.AppendChild(link, c)
			c = next
		}
		if !link.HasChildren() {
			// An image without alt text would be an empty, invisible link.
			link.AppendChild(link, ast.NewString(img.Destination))
		}
		img.Parent().ReplaceChild(img.Parent(), img, link)
	}
}

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
