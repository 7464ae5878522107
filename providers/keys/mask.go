package keys

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/massgen-go/massgen-mcp/providers"
)

// minSecret is the shortest string Mask treats as a secret. Real API keys are
// far longer; masking every occurrence of a short word such as "test" would
// garble messages without protecting anything.
const minSecret = 8

// Mask returns text with every given secret, every run of 12 or more of a
// key-shaped one's characters that reaches past its public prefix
// (maskFragments), and anything shaped like an API key or an auth header,
// replaced by a placeholder. A long secret keeps its
// last four characters ("[key …wxyz]") so a user can tell which key was
// meant; secrets shorter than 8 characters are ignored.
func Mask(text string, secrets ...string) string {
	return providers.MaskKeys(MaskSecrets(text, secrets...))
}

// MaskSecrets is Mask for the given secrets alone, with no key shapes: for
// text that may rightly hold key-shaped strings (a tool's result: code,
// docs), where only a known secret must not pass.
func MaskSecrets(text string, secrets ...string) string {
	live := make([]string, 0, len(secrets))
	for _, s := range secrets {
		if s = strings.TrimSpace(s); len(s) >= minSecret {
			live = append(live, s)
		}
	}
	// Longest first, so a secret containing another is replaced whole.
	slices.SortFunc(live, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, s := range live {
		text = strings.ReplaceAll(text, s, placeholder(s))
	}
	return maskFragments(text, live)
}

const (
	// fragmentMin is the shortest run of a secret's characters masked
	// where the whole secret is not: a server that echoes the first 40
	// characters of a key it refused, or cuts it to fit a message, must
	// not write them into the ledger.
	fragmentMin = 12
	// publicPrefix is how many of a secret's first characters a fragment
	// must reach beyond to be masked: real keys begin with a prefix their
	// docs print (sk-ant-api03-, sk-svcacct-), which a tool's result may
	// rightly hold. A run that reaches beyond is masked whole, the prefix
	// with it.
	publicPrefix = 16
)

// maskFragments replaces, in text, every run of at least fragmentMin
// characters that is part of one of the key-shaped secrets (reaching past
// its first publicPrefix) by the secret's placeholder. It looks up each of
// text's windows of fragmentMin bytes in the secrets' own (windowsOf):
// linear in text, some 16 ms a megabyte here
// (BenchmarkMaskSecretsOnAMegabyte), and a few microseconds a line.
func maskFragments(text string, secrets []string) string {
	windows := windowsOf(secrets)
	if len(windows) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for i := 0; i+fragmentMin <= len(text); {
		p, ok := windows[text[i:i+fragmentMin]]
		if !ok {
			i++
			continue
		}
		end := i + fragmentMin
		for end < len(text) {
			if _, more := windows[text[end+1-fragmentMin:end+1]]; !more {
				break
			}
			end++
		}
		b.WriteString(text[last:i])
		b.WriteString(p)
		last, i = end, end
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// knownWindows keeps the windows of each set of secrets Mask was given,
// made once: Mask runs on every line a CLI agent prints with the same
// secrets, and making them took 60 allocations and half again the time of
// the rest of Mask on a short line. At most windowsKept sets are kept (a
// process has a handful); past that each call makes its own.
var (
	knownWindows sync.Map // the secrets, joined by NUL → map[string]string
	windowsHeld  atomic.Int32
)

const windowsKept = 1024

// windowsOf maps each window of fragmentMin bytes of the key-shaped
// secrets that reaches past its public prefix to its secret's
// placeholder; empty when none is key-shaped.
func windowsOf(secrets []string) map[string]string {
	key := strings.Join(secrets, "\x00")
	if w, ok := knownWindows.Load(key); ok {
		return w.(map[string]string)
	}
	windows := map[string]string{}
	for _, s := range secrets {
		if !keyShaped(s) {
			continue
		}
		for i := publicPrefix - fragmentMin + 1; i+fragmentMin <= len(s); i++ {
			windows[s[i:i+fragmentMin]] = placeholder(s)
		}
	}
	if windowsHeld.Load() < windowsKept {
		if _, loaded := knownWindows.LoadOrStore(key, windows); !loaded {
			windowsHeld.Add(1)
		}
	}
	return windows
}

// keyShaped says whether a secret reads as an API key or token, whose
// parts are as secret as the whole: 20 characters or more of a key's
// alphabet (letters, digits, - _ . + =), letters and digits both. The
// secrets given are not all keys (an MCP server's ${VAR} values and
// headers, a CLI agent's credentials file path): a piece of a path or a
// word is left, the whole still masked. ASCII alone, so a run matched
// never begins or ends inside a character of the text.
func keyShaped(s string) bool {
	if len(s) < 20 {
		return false
	}
	var letter, digit bool
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			letter = true
		case '0' <= c && c <= '9':
			digit = true
		case c == '-', c == '_', c == '.', c == '+', c == '=':
		default:
			return false
		}
	}
	return letter && digit
}

func placeholder(secret string) string {
	if len(secret) < 20 {
		return "[key redacted]"
	}
	return "[key …" + secret[len(secret)-4:] + "]"
}

// MaskError returns an error whose text is masked. It deliberately has no
// Unwrap: a caller that walks the chain to print each layer must find no
// unmasked text. errors.Is and errors.As still see the original chain (a
// context deadline, a *providers.Error, an SDK's error type) through the Is
// and As methods. It returns nil for nil.
func MaskError(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	return &maskedError{msg: Mask(err.Error(), secrets...), err: err}
}

type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string        { return e.msg }
func (e *maskedError) Is(target error) bool { return errors.Is(e.err, target) }
func (e *maskedError) As(target any) bool   { return errors.As(e.err, target) }
