package mcp

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"fmt"
	"os"
	"strings"
	"sync"
)

// minTokenLength refuses tokens short enough to guess.
const minTokenLength = 16

// Tokens are the bearer tokens of a --tokens-file: each line "tenant token",
// '#' starts a comment. Each token makes its holder that tenant. Reload
// re-reads the file (on SIGHUP); a file that does not parse leaves the tokens
// as they were. Two tenants whose names differ only in letter case are
// refused (sameButForCase).
type Tokens struct {
	path string

	mu     sync.RWMutex
	tokens []tenantToken
}

type tenantToken struct {
	tenant string
	token  []byte
}

// LoadTokens reads a tokens file.
func LoadTokens(path string) (*Tokens, error) {
	t := &Tokens{path: path}
	if err := t.Reload(); err != nil {
		return nil, err
	}
	return t, nil
}

// Reload re-reads the file; on an error the tokens already loaded stay.
func (t *Tokens) Reload() error {
	data, err := os.ReadFile(t.path)
	if err != nil {
		return fmt.Errorf("cannot read the tokens file %s: %w", t.path, err)
	}
	parsed, err := parseTokens(data)
	if err != nil {
		return fmt.Errorf("tokens file %s: %w", t.path, err)
	}
	t.mu.Lock()
	t.tokens = parsed
	t.mu.Unlock()
	return nil
}

// Len is how many tokens are loaded.
func (t *Tokens) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.tokens)
}

// Tenants lists the tenants named in the file, in file order.
func (t *Tokens) Tenants() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []string
	seen := map[string]bool{}
	for _, tt := range t.tokens {
		if !seen[tt.tenant] {
			seen[tt.tenant] = true
			out = append(out, tt.tenant)
		}
	}
	return out
}

// fingerprintTenant finds the tenant of the token whose SHA-256 (hex) is
// fp (TokenFingerprint).
func (t *Tokens) fingerprintTenant(fp []byte) (string, bool) {
	return t.find(fp, func(token []byte) []byte { return []byte(TokenFingerprint(string(token))) })
}

// tenant finds the tenant of a token.
func (t *Tokens) tenant(token []byte) (string, bool) {
	return t.find(token, func(token []byte) []byte { return token })
}

// find finds the tenant of the token whose form (the token itself, or its
// fingerprint) is got. Every token is compared, in constant time, so timing
// says nothing about which one nearly matched.
func (t *Tokens) find(got []byte, form func(token []byte) []byte) (string, bool) {
	if t == nil {
		return "", false
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	found := ""
	for _, tt := range t.tokens {
		if subtle.ConstantTimeCompare(got, form(tt.token)) == 1 {
			found = tt.tenant
		}
	}
	return found, found != ""
}

// parseTokens reads "tenant token" lines. Errors name the line, never the
// token.
func parseTokens(data []byte) ([]tenantToken, error) {
	var out []tenantToken
	seen := map[string]int{}
	spelled := map[string]spelling{strings.ToLower(DefaultTenant): {DefaultTenant, 0}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
			continue
		case len(fields) != 2:
			return nil, fmt.Errorf("line %d: want \"tenant token\" (two fields separated by spaces), got %d fields", n, len(fields))
		// Neither field is repeated: with the two swapped, the first is
		// the token, and the error goes to the terminal and, at a
		// reload, to the log.
		case !ValidTenant(fields[0]):
			return nil, fmt.Errorf("line %d: the first field, the tenant name, must be 1-64 letters, digits, '_' or '-' (the token comes second)", n)
		case len(fields[1]) < minTokenLength:
			return nil, fmt.Errorf("line %d: the second field, the token, is shorter than %d characters; use a long random one (e.g. openssl rand -hex 32), after the tenant name", n, minTokenLength)
		}
		if first, dup := seen[fields[1]]; dup {
			return nil, fmt.Errorf("line %d: the token is the same as on line %d; give every tenant its own", n, first)
		}
		seen[fields[1]] = n
		if err := sameButForCase(spelled, fields[0], n); err != nil {
			return nil, err
		}
		out = append(out, tenantToken{tenant: fields[0], token: []byte(fields[1])})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
