package pgstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/massgen-go/massgen-mcp/coordination"
)

var _ coordination.ImageStore = (*Store)(nil)

// PutImage implements coordination.ImageStore over the blobs: content
// addressed per tenant, so a session's image is stored once (and shared by
// every session of the tenant given the same bytes).
func (s *Store) PutImage(ctx context.Context, _ string, data []byte) (string, error) {
	sum, _, err := s.PutBlob(ctx, bytes.NewReader(data), coordination.MaxImageBytes)
	return sum, err
}

// Image implements coordination.ImageStore.
func (s *Store) Image(ctx context.Context, _ string, sum string) ([]byte, error) {
	r, _, err := s.OpenBlob(ctx, sum)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, coordination.MaxImageBytes+1))
	if err != nil {
		return nil, err
	}
	// Checked as a workspace's files are when materialised: the bytes are
	// sent to a model as the image the session was given.
	if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
		return nil, fmt.Errorf("image %s is stored damaged: its content's SHA-256 is %x", sum, got)
	}
	return data, nil
}
