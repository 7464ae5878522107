package providers

import (
	"strings"
	"testing"
)

// maskKeysByRegexp is MaskKeys as it was: each shape's regexp over the
// whole text in turn. The benchmark runs it beside MaskKeys, and
// TestMaskKeysMasksAsEachShapesRegexpDoes holds MaskKeys to its output.
func maskKeysByRegexp(text string) string {
	for _, k := range keyShapes {
		text = k.re.ReplaceAllString(text, k.repl)
	}
	return text
}

// benchTexts are what a CLI agent streams: a long answer with code and no
// key, a flood of letters (the adversarial case a profile caught), and an
// answer holding the shapes MaskKeys hides.
func benchTexts() []struct{ name, text string } {
	para := "The function reads the configuration once, validates each field and returns an error a user can act on. " +
		"If the file is missing, it falls back to the defaults; see the table below for each option and its meaning.\n\n" +
		"```go\nfunc load(path string) (*Config, error) {\n\tb, err := os.ReadFile(path)\n\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"read %s: %w\", path, err)\n\t}\n\treturn parse(b)\n}\n```\n\n" +
		"| option | default |\n|---|---|\n| timeout | 30s |\n| retries | 3 |\n\nThat's all: run `go test ./...` and check the output?\n"
	answer := strings.Repeat(para, 64<<10/len(para)+1)[:64<<10]

	var letters strings.Builder
	seed := uint32(1)
	for letters.Len() < 1<<20 {
		seed = seed*1664525 + 1013904223
		n := 200 + int(seed>>20)%4000 // a run of 200–4,200 letters
		for range n {
			seed = seed*1664525 + 1013904223
			letters.WriteByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[(seed>>16)%52])
		}
		letters.WriteByte(' ')
	}
	flood := letters.String()[:1<<20]

	keys := "Set the key with `export OPENAI_API_KEY=sk-test-dummy-not-a-key-0123456789abcdef` and retry.\n" +
		"The proxy is at https://someone:dummy-pass-not-real@gw.example/v1 and " +
		"GET https://x.example/v1/models?alt=sse&token=dummytoken0123&key=dummykey0123 failed.\n" +
		"Authorization: Bearer dummy-bearer-not-a-token-0123\n"
	withKeys := strings.Repeat(para+keys, 64<<10/len(para+keys)+1)[:64<<10]
	return []struct{ name, text string }{
		{"answer-64KiB", answer},
		{"letter-runs-1MiB", flood},
		{"with-keys-64KiB", withKeys},
	}
}

func BenchmarkMaskKeys(b *testing.B) {
	for _, tc := range benchTexts() {
		for _, impl := range []struct {
			name string
			mask func(string) string
		}{{"now", MaskKeys}, {"regexp", maskKeysByRegexp}} {
			b.Run(tc.name+"/"+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(tc.text)))
				b.ReportAllocs()
				for b.Loop() {
					impl.mask(tc.text)
				}
			})
		}
	}
}
