package pgstore

import (
	"bytes"
	"context"
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
	return io.ReadAll(io.LimitReader(r, coordination.MaxImageBytes+1))
}
