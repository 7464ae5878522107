package keys

import (
	"cmp"
	"errors"
	"regexp"
	"slices"
	"strings"
)

// minSecret is the shortest string Mask treats as a secret. Real API keys are
// far longer; masking every occurrence of a short word such as "test" would
// garble messages without protecting anything.
const minSecret = 8

// keyShapes catch credentials Mask was not told about: an SDK error that
// echoes a header, a key from another variable, a URL with ?key=.
var keyShapes = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{16,}`), "sk-[redacted]"},
	{regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{30,}`), "AIza[redacted]"},
	{regexp.MustCompile(`\bxai-[A-Za-z0-9_\-]{20,}`), "xai-[redacted]"},
	{regexp.MustCompile(`\bgsk_[A-Za-z0-9]{20,}`), "gsk_[redacted]"},
	{regexp.MustCompile(`(?i)(\bbearer\s+)[A-Za-z0-9._~+/=\-]{8,}`), "${1}[redacted]"},
	{regexp.MustCompile(`(?i)(\b(?:x-api-key|x-goog-api-key|api-key|api_key|apikey)["']?\s*[:=]\s*["']?)[^\s"'&,;]{8,}`), "${1}[redacted]"},
	{regexp.MustCompile(`([?&](?:key|api_key|api-key)=)[^&\s"']+`), "${1}[redacted]"},
}

// Mask returns text with every given secret, and anything shaped like an API
// key or an auth header, replaced by a placeholder. A long secret keeps its
// last four characters ("[key …wxyz]") so a user can tell which key was
// meant; secrets shorter than 8 characters are ignored.
func Mask(text string, secrets ...string) string {
	text = MaskSecrets(text, secrets...)
	for _, k := range keyShapes {
		text = k.re.ReplaceAllString(text, k.repl)
	}
	return text
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
	return text
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
