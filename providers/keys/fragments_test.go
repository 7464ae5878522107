package keys

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A key with a public prefix of 13 characters (as Anthropic's
// sk-ant-api03-), then its secret part; an obvious dummy, of no
// provider's shape.
const fragmentedKey = "DUMMY-pfx-03-DUMMY-fragment-test-NOT-A-REAL-KEY-qrst"

// A server that echoes part of a key it refused (its first 40
// characters, or the key cut to fit a message) gets no run of 12 or more
// of the key's characters past its public prefix into the text kept;
// shorter runs, and the prefix the docs print, stay.
func TestMaskSecretsMasksEveryLongRunOfAKeysCharacters(t *testing.T) {
	k := fragmentedKey
	for _, tc := range []struct {
		name, in string
		gone     []string
		keep     []string
	}{
		{"the key's first 40 characters", "401: invalid x-api-key '" + k[:40] + "…'", []string{k[13:40], k[20:32]}, []string{"401: invalid x-api-key '", "…'", "[key …qrst]"}},
		{"a run from its middle", "token ends in " + k[25:45] + ", refused", []string{k[25:45]}, []string{"token ends in [key …qrst], refused"}},
		{"its last 12", "key …" + k[len(k)-12:], []string{k[len(k)-12:]}, []string{"key …[key …qrst]"}},
		{"two runs", k[20:33] + " and " + k[30:50], []string{k[20:33], k[30:50]}, []string{" and "}},
		{"the whole key still", "bad " + k, []string{k[13:]}, []string{"bad [key …qrst]"}},
		{"11 characters stay", "ends " + k[30:41], nil, []string{"ends " + k[30:41]}},
		{"the public prefix stays", "its keys begin DUMMY-pfx-03-DUM, then more", nil, []string{"DUMMY-pfx-03-DUM, then more"}},
		{"other text untouched", strings.Repeat("nothing of the key here ", 5), nil, []string{strings.Repeat("nothing of the key here ", 5)}},
		{"a run next to a character of two bytes", "é" + k[20:40] + "é", []string{k[20:40]}, []string{"é[key …qrst]é"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := MaskSecrets(tc.in, k)
			if !utf8.ValidString(out) {
				t.Errorf("%q is not UTF-8", out)
			}
			masked(t, out, tc.gone, tc.keep)
		})
	}
}

// Secrets that are not keys (an MCP server's ${VAR} values, a credentials
// file's path) are masked whole, never by their pieces: a tool's result
// that names the project a path ends in keeps it.
func TestMaskSecretsMasksOnlyAKeysPiecesNotAPathsOrAWords(t *testing.T) {
	for _, secret := range []string{
		"/home/alice/src/massgen-project/credentials.json", // a path
		"/home/alice/src/Projets-numériques/rapport",       // not ASCII
		"massgen-project-settings-for-dev",                 // words, no digit
		"Bearer DUMMY-header-value-0000-0000",              // a header, with a space
	} {
		in := "package " + secret[len(secret)-20:] + " and " + secret
		out := MaskSecrets(in, secret)
		if want := "package " + secret[len(secret)-20:] + " and [key …"; !strings.HasPrefix(out, want) {
			t.Errorf("MaskSecrets(%q) = %q; want the piece kept and the whole masked (%q…)", in, out, want)
		}
	}
}

// Each set of secrets masks its own keys' pieces, however many sets came
// before it (their windows are kept, windowsOf): a key not given this time
// is not masked, and one given is, alone or with another.
func TestMaskSecretsMasksThePiecesOfTheSecretsGivenEachTime(t *testing.T) {
	other := "DUMMY-pfx-03-DUMMY-another-key-NOT-A-REAL-KEY-wxyz"
	text := "pieces " + fragmentedKey[20:40] + " and " + other[20:40]
	for _, tc := range []struct {
		secrets    []string
		gone, keep []string
	}{
		{[]string{fragmentedKey}, []string{fragmentedKey[20:40]}, []string{other[20:40]}},
		{[]string{other}, []string{other[20:40]}, []string{fragmentedKey[20:40]}},
		{[]string{fragmentedKey, other}, []string{fragmentedKey[20:40], other[20:40]}, []string{"[key …qrst] and [key …wxyz]"}},
		{[]string{fragmentedKey}, []string{fragmentedKey[20:40]}, []string{other[20:40]}},
	} {
		masked(t, MaskSecrets(text, tc.secrets...), tc.gone, tc.keep)
	}
}

// BenchmarkMaskSecretsOnAMegabyte: a tool's result of a megabyte with no
// key in it, the cost every result pays.
func BenchmarkMaskSecretsOnAMegabyte(b *testing.B) {
	text := strings.Repeat("some tool output, a line of code; ", 1<<20/34)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		MaskSecrets(text, fragmentedKey, plantedKey)
	}
}
