package webui

import (
	"strings"
	"testing"
)

func TestMarkdownDropsRawHTMLAndScriptLinks(t *testing.T) {
	got := markdownHTML("# Hi\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[x](javascript:alert(1)) **bold**")
	for _, bad := range []string{"<script", "onerror", "javascript:"} {
		if strings.Contains(got, bad) {
			t.Errorf("rendered markdown carries %q:\n%s", bad, got)
		}
	}
	if !strings.Contains(got, "<h1") || !strings.Contains(got, "<strong>bold</strong>") {
		t.Errorf("markdown not rendered:\n%s", got)
	}
}

func TestDiffLinesKeepsWhatBothShare(t *testing.T) {
	got := diffLines("a\nb\nc", "a\nc\nd")
	want := []diffLine{{"=", "a"}, {"-", "b"}, {"=", "c"}, {"+", "d"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// TestAnAnswersRemoteImageIsALinkNotAnImage: an image a model's answer names
// elsewhere is shown as a link to it, never loaded by the page. Before, it
// was an <img> that only the page's CSP kept from loading (a console error
// on every page showing the answer, a broken image, and a beacon to the
// image's host wherever the CSP is lost on the way).
func TestAnAnswersRemoteImageIsALinkNotAnImage(t *testing.T) {
	got := markdownHTML("See ![the chart](https://example.com/chart.png \"Chart\") here.")
	if strings.Contains(got, "<img") {
		t.Errorf("a remote image is loaded by the page:\n%s", got)
	}
	if !strings.Contains(got, `<a href="https://example.com/chart.png"`) || !strings.Contains(got, "the chart") {
		t.Errorf("the image is not shown as a link with its text:\n%s", got)
	}
}
