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
