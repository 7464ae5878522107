package coordination

import (
	"context"
	"fmt"

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
	// hold, permissions.ErrAnswered for one a person already answered,
	// permissions.ErrExpired for one refused at its timeout, or an
	// approval of one that has lapsed (below). A refusal is stored
	// whatever the expiry: a late asker's own must stand.
	AnswerApproval(ctx context.Context, id string, resp permissions.ApprovalResponse) error
	// PendingApprovals lists the requests with no answer that have not
	// lapsed, oldest first. A request has lapsed once its Expires is more
	// than MaxClockSkew past (by the store's clock): its asker, which
	// refuses it at the expiry by its own clock, is gone.
	PendingApprovals(ctx context.Context, id string) ([]permissions.ApprovalRequest, error)
	// ExpireApprovals refuses the lapsed requests with no answer in their
	// askers' stead (by permissions.ByTimeout, for
	// permissions.AskerGone), appends refusal(r) of each to the
	// session's permission log in the same write, and returns those this
	// call refused, each to one caller only. The refusal and its record
	// land both or neither: a refused ask is no longer pending, so no
	// later call returns it again, and an expiry whose answer was lost
	// (committed, the caller told the store was unavailable) left to its
	// caller to record would never be recorded.
	ExpireApprovals(ctx context.Context, id string, refusal func(permissions.ApprovalRequest) permissions.Record) ([]permissions.ApprovalRequest, error)
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
	read := func() (permissions.ApprovalResponse, bool) {
		r, ok, err := box.ApprovalAnswer(wctx, id, req.ID)
		return r, err == nil && ok
	}
	refuse := func(r permissions.ApprovalResponse) error { return box.AnswerApproval(wctx, id, r) }
	return permissions.Await(ctx, req, read, refuse)
}
