package webui

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/internal/wholefile"
)

// A new login link without a restart (`massgen-mcp ui-link`): the command
// and the server share the state directory, so the link travels through
// it, not over the network. The command writes a one-time key's hash, with
// its expiry, into <state-dir>/ui-links/ (0700; files 0600); the server,
// meeting a key it did not make, looks for its hash there and spends it by
// removing the file, which only one remover wins — so a key opens one
// browser once, on any replica sharing the directory. Whoever can write
// there can already read every session of the state directory, so the
// directory grants nothing new; no endpoint mints logins; and the key
// itself is never stored, only its hash.

// linkFile is one minted link as the directory keeps it.
type linkFile struct {
	Tenant  string    `json:"tenant"`
	Expires time.Time `json:"expires"`
}

// addressFile names the file where serve leaves the web view's base URL
// (scheme://host:port), so ui-link can print a whole link.
const addressFile = "address"

// LinkDir is where a state directory's login links travel.
func LinkDir(stateDir string) string { return filepath.Join(stateDir, "ui-links") }

func keyFile(dir, key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, hex.EncodeToString(sum[:])+".json")
}

// MintLink writes a one-time login link for the default tenant into dir,
// good for ttl, and returns its key (the link is /ui/login?key=<key>).
// Expired links left in dir are removed.
func MintLink(dir string, ttl time.Duration) (string, error) {
	if ttl <= 0 {
		return "", fmt.Errorf("%w: a login link must live a while (got %v); give a --ttl such as 15m", coordination.ErrBadInput, ttl)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("could not make %s for the login link: %w", dir, err)
	}
	pruneLinks(dir, time.Now())
	key := random()
	b, _ := json.Marshal(linkFile{Tenant: coordination.DefaultTenant, Expires: time.Now().Add(ttl).UTC()})
	// Written whole: the server never reads half a link. A fresh random
	// key names no file there, so a rename does (Create's link would need
	// a filesystem with hard links).
	if err := wholefile.Replace(keyFile(dir, key), b, 0o600); err != nil {
		return "", fmt.Errorf("could not write the login link into %s: %w", dir, err)
	}
	return key, nil
}

// spendLinkFile redeems a key minted by MintLink in dir: its tenant, once.
func spendLinkFile(dir, key string) (string, bool) {
	if dir == "" || len(key) != 64 || strings.Trim(key, "0123456789abcdef") != "" {
		return "", false
	}
	path := keyFile(dir, key)
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	// Whoever removes the file spent the key; a second browser (or
	// replica) racing for it finds it gone.
	if os.Remove(path) != nil {
		return "", false
	}
	var l linkFile
	if json.Unmarshal(b, &l) != nil || time.Now().After(l.Expires) {
		return "", false
	}
	if l.Tenant == "" {
		l.Tenant = coordination.DefaultTenant
	}
	return l.Tenant, true
}

// pruneLinks removes links past their expiry: the directory does not grow
// with links nobody opened.
func pruneLinks(dir string, now time.Time) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		var l linkFile
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err == nil && json.Unmarshal(b, &l) == nil && now.After(l.Expires) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// WriteAddress leaves the web view's base URL in dir for ui-link. With
// several servers on one state directory the last one started is named;
// a link works on any of them.
func WriteAddress(dir, base string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("could not make %s for the web view's address: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, addressFile), []byte(base+"\n"), 0o600); err != nil {
		return fmt.Errorf("could not write the web view's address into %s: %w", dir, err)
	}
	return nil
}

// ReadAddress reads what WriteAddress left in dir.
func ReadAddress(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, addressFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: no server has served the web view from this state directory (%s); start 'massgen-mcp serve --http …' with the same --state-dir, or pass --url", coordination.ErrBadInput, dir)
	}
	if err != nil {
		return "", fmt.Errorf("could not read the web view's address: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
