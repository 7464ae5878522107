package keys

import (
	"cmp"
	"errors"
	"slices"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// minSecret is the shortest string Mask treats as a secret. Real API keys are
// far longer; masking every occurrence of a short word such as "test" would
// garble messages without protecting anything.
const minSecret = 8

// Mask returns text with every given secret, and anything shaped like an API
// key or an auth header, replaced by a placeholder. A long secret keeps its
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
