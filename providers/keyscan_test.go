package providers

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// MaskKeys finds where a shape may start before running its regexp: it
// must mask exactly what each regexp over the whole text did, at a text's
// start and end, at a word boundary or not, and for the letters (?i)
// matches outside ASCII.
func TestMaskKeysMasksAsEachShapesRegexpDoes(t *testing.T) {
	key := "sk-test-dummy-not-a-key-0123456789"
	cases := []string{
		"", key, key + " tail", "head " + key, "x" + key, "_" + key, "-" + key, "é" + key,
		"sk-short", "sk-sk-sk-sk-sk-sk-sk-sk-sk-dummy", "xsk-sk-dummy-not-a-key-0123",
		"AIza-dummy-not-a-key-000000000000000", "xai-dummy-not-a-key-0123456789", "gsk_00000dummy00000notakey00000",
		"Bearer dummy-token-0123", "BEARER\tdummy-token-0123", "abearer dummy-token-0123", "bearer short",
		`x-api-key: "dummy-header-0123"`, `X-Goog-Api-Key=dummy0123456`, "APIKEY:dummy0123456", "api_\u212aey: dummy0123456",
		"mapi_key: dummy0123456", "?key=dummy", "&\u212aey=dummy", "?\u017fig=dummy", "?token=", "https://x/?api_token=a&b",
		"https://someone:dummy-pass@gw.example/v1", "a.b.c://u@h", "1http://u@h", "_http://u@h", "x://a://b@c", "x://", "://u@h",
		"http://u@", "a+b://u@h", "é://u@h", "lookup host on 10.0.0.2:53: no such host", "lookup h on [::1]:53",
		"xlookup h on 10.0.0.2:53", "lookup lookup h on 1:2", "lookup h on 1.2.3.4",
	}
	for _, tc := range benchTexts() {
		cases = append(cases, tc.text)
	}
	pieces := []string{
		"sk-", "AIza", "xai-", "gsk_", "bearer ", "Bearer\n", "x-api-key", "X-GOOG-API-KEY", "api_key", "apikey", "\u212a",
		"\u017f", "é", ":", "=", "\"", "'", "?", "&", "key=", "token=", "sig=", "://", "http", "@", "/", "#", " ", "\t",
		"lookup ", " on ", "10.0.0.2", ":53", "[", "]", "a", "Z", "_", "-", ".", "+", "0123456789", "dummyNotAKey", ";", ",",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(24) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		cases = append(cases, b.String())
	}
	for _, in := range cases {
		if got, want := MaskKeys(in), maskKeysByRegexp(in); got != want {
			t.Errorf("MaskKeys(%.200q)\n = %.200q\nwant %.200q (each shape's regexp)", in, got, want)
		}
	}
}
