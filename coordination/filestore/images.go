package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/massgen-go/massgen-mcp/coordination"
)

var _ coordination.ImageStore = (*Store)(nil)

// imagesDir is a session's images, each a file named by its SHA-256: the
// session.json refers to them, the ledger never holds them.
const imagesDir = "images"

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// PutImage implements coordination.ImageStore: <session>/images/<sha256>,
// written once (atomically; the same content again is left as it is).
func (s *Store) PutImage(ctx context.Context, id string, data []byte) (string, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(data)
	sum := hex.EncodeToString(h[:])
	dir = filepath.Join(dir, imagesDir)
	if _, err := os.Stat(filepath.Join(dir, sum)); err == nil {
		return sum, nil
	}
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return "", fmt.Errorf("cannot keep the images of session %s: %w", id, err)
	}
	if err := writeAtomic(dir, sum, data); err != nil {
		return "", fmt.Errorf("cannot keep an image of session %s: %w", id, err)
	}
	return sum, nil
}

// Image implements coordination.ImageStore, checking the bytes still hash
// to their name.
func (s *Store) Image(ctx context.Context, id, sum string) ([]byte, error) {
	dir, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	if !sha256Hex.MatchString(sum) {
		return nil, fmt.Errorf("%q is not a SHA-256: %w", sum, coordination.ErrBadInput)
	}
	path := filepath.Join(dir, imagesDir, sum)
	data, err := readFile(path, coordination.MaxImageBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("session %s has no image %s (its images/ directory lost it)", id, sum)
	}
	if err != nil {
		return nil, err
	}
	if h := sha256.Sum256(data); hex.EncodeToString(h[:]) != sum {
		return nil, damaged(path, errors.New("its content no longer matches its SHA-256 name"))
	}
	return data, nil
}
