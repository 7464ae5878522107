package memstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/massgen-go/massgen-mcp/coordination"
)

var _ coordination.ImageStore = (*Store)(nil)

// PutImage implements coordination.ImageStore: the session keeps each
// content once, as long as it keeps the session.
func (s *Store) PutImage(ctx context.Context, id string, data []byte) (string, error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(data)
	sum := hex.EncodeToString(h[:])
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.images == nil {
		ss.images = map[string][]byte{}
	}
	if _, ok := ss.images[sum]; !ok {
		ss.images[sum] = append([]byte(nil), data...)
	}
	return sum, nil
}

// Image implements coordination.ImageStore. The bytes are shared with the
// store; callers only read them.
func (s *Store) Image(ctx context.Context, id, sum string) ([]byte, error) {
	ss, err := s.live(ctx, id)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	data, ok := ss.images[sum]
	if !ok {
		return nil, fmt.Errorf("session %s has no image with SHA-256 %s", id, sum)
	}
	return data, nil
}
