package coordination

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// SessionQuery selects one page of a listing, newest session first.
type SessionQuery struct {
	// Status keeps only sessions in that status (running, interrupted,
	// decided, finished, failed, cancelled); empty keeps all.
	Status string
	// Text keeps only sessions whose id or task contains it (any case).
	Text string
	// Offset skips that many matching sessions; Limit caps the page (0: all).
	Offset, Limit int
}

// SessionPage is one page of sessions, newest first.
type SessionPage struct {
	Sessions []SessionSummary `json:"sessions"`
	// Total counts every session that matches the query, on any page.
	// Unfiltered, it counts the store's sessions, the unreadable ones too:
	// the list's positions (Offset, Next) count them, and a total that
	// dropped only the current page's would differ from page to page.
	Total int `json:"total"`
	// Unreadable is how many sessions this page's reading skipped, not
	// able to read them: unfiltered, those in the page's span of the
	// store's sessions (which they fill with its rows); filtered, every
	// page reads them all, and none is counted in Total.
	Unreadable int `json:"unreadable,omitempty"`
	Offset     int `json:"offset"`
	// Next is the offset of the next page, or 0 when this is the last.
	Next int `json:"next_offset,omitempty"`
}

// sessionStatuses are the statuses a listing can be filtered by.
var sessionStatuses = []string{StatusRunning, StatusInterrupted, StatusDecided, StatusFinished, StatusFailed, StatusCancelled}

// ListSessions returns one page of the store's sessions, newest first, read
// as the ledger stands (never deciding anything). Without a filter only the
// page's sessions are read; a filter reads every session to count matches.
// Unreadable sessions are skipped, as in Sessions, and counted
// (SessionPage.Unreadable).
func (svc *Service) ListSessions(ctx context.Context, q SessionQuery) (*SessionPage, error) {
	if q.Status != "" && !slices.Contains(sessionStatuses, q.Status) {
		return nil, fmt.Errorf("%w: status %q must be one of %s", ErrBadInput, q.Status, strings.Join(sessionStatuses, ", "))
	}
	if q.Offset < 0 || q.Limit < 0 {
		return nil, fmt.Errorf("%w: offset and limit must not be negative", ErrBadInput)
	}
	ids, err := svc.store.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	slices.Reverse(ids)
	page := &SessionPage{Sessions: []SessionSummary{}, Offset: q.Offset}
	filtered := q.Status != "" || q.Text != ""
	all := len(ids)
	if !filtered {
		page.Total = all
		ids = window(ids, q.Offset, q.Limit)
	}
	text := strings.ToLower(q.Text)
	matched := 0
	for _, id := range ids {
		s, l, st, err := svc.sessions.load(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			svc.log.Debug().Err(err).Str("session", id).Msg("skipping an unreadable session in the listing")
			page.Unreadable++
			continue
		}
		sum := svc.summary(s, st, svc.interrupted(ctx, s, svc.snapshot(s, l, st)))
		if filtered {
			if (q.Status != "" && sum.Status != q.Status) ||
				(text != "" && !strings.Contains(strings.ToLower(s.ID+"\n"+s.Task), text)) {
				continue
			}
			matched++
			if matched <= q.Offset || (q.Limit > 0 && matched > q.Offset+q.Limit) {
				continue
			}
		}
		page.Sessions = append(page.Sessions, sum)
	}
	// The next page starts after what this one went through: the sessions
	// it read (skipped ones included) or the matches it counted.
	end, of := q.Offset+len(ids), all
	if filtered {
		page.Total = matched
		end, of = q.Offset+len(page.Sessions), matched
	}
	if q.Limit > 0 && end < of {
		page.Next = end
	}
	return page, nil
}

// window is ids[offset:offset+limit], clipped; limit 0 means no cap.
func window(ids []string, offset, limit int) []string {
	if offset >= len(ids) {
		return nil
	}
	ids = ids[offset:]
	if limit > 0 && limit < len(ids) {
		ids = ids[:limit]
	}
	return ids
}
