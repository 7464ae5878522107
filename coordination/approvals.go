package coordination

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/massgen-go/massgen-mcp/permissions"
)

// ApprovalBox is implemented by a store that keeps the handshake of asks
// for a person itself, as rows (pgstore), where the file store keeps them as
// files in the session's directory (permissions.AskFile). Either way a
// request waits for the first answer; a second is refused.
type ApprovalBox interface {
	// RequestApproval stores a new request.
	RequestApproval(ctx context.Context, id string, req permissions.ApprovalRequest) error
	// ApprovalAnswer reads a request's answer; ok is false while it has
	// none.
	ApprovalAnswer(ctx context.Context, id, request string) (resp permissions.ApprovalResponse, ok bool, err error)
	// AnswerApproval stores the answer to a request; the first stands.
	// It fails with permissions.ErrNoRequest for a request it does not
	// hold, permissions.ErrAnswered for one already answered.
	AnswerApproval(ctx context.Context, id string, resp permissions.ApprovalResponse) error
	// PendingApprovals lists the requests with no answer, oldest first.
	PendingApprovals(ctx context.Context, id string) ([]permissions.ApprovalRequest, error)
}

// askBox is permissions.AskFile over a store's ApprovalBox: the request is
// stored, the answer polled for until the request expires or ctx ends, and
// then refused by the handshake itself (fail-closed); an answer that lands
// first stands.
func askBox(ctx context.Context, box ApprovalBox, id string, req permissions.ApprovalRequest) (permissions.ApprovalResponse, error) {
	// The store's writes outlive the step's context: the refusal of an
	// ended step is written after it ended.
	wctx := context.WithoutCancel(ctx)
	if err := box.RequestApproval(wctx, id, req); err != nil {
		return permissions.ApprovalResponse{}, fmt.Errorf("store the approval request: %w", err)
	}
	t := time.NewTicker(permissions.PollEvery)
	defer t.Stop()
	deadline := time.NewTimer(time.Until(req.Expires))
	defer deadline.Stop()
	for {
		if r, ok, err := box.ApprovalAnswer(wctx, id, req.ID); err == nil && ok {
			return r, nil
		}
		select {
		case <-t.C:
			continue
		case <-ctx.Done():
		case <-deadline.C:
		}
		why := "timeout"
		if ctx.Err() != nil {
			why = "step ended"
		}
		err := box.AnswerApproval(wctx, id, permissions.ApprovalResponse{ID: req.ID, By: why, At: time.Now().UTC()})
		if r, ok, rerr := box.ApprovalAnswer(wctx, id, req.ID); rerr == nil && ok {
			return r, nil // ours, or the person's that came first
		}
		if err == nil || errors.Is(err, permissions.ErrAnswered) {
			err = errors.New("the approval's answer could not be read back")
		}
		return permissions.ApprovalResponse{ID: req.ID, By: why}, err
	}
}
