package coordination

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// RunRequest names the session a server-driven run (run_team) runs: a stored
// one to resume, or a team to create.
type RunRequest struct {
	// SessionID is the session to resume, or the id for a new one ("").
	SessionID string
	// Task, given with the id of a stored session, must be that session's.
	Task string
	// Members says the request lists agents or models: with the id of a
	// stored session it joins it only with identical settings (Create is
	// idempotent) and is refused otherwise.
	Members bool
	// Team says the request names a team at all (a task, agents, models or
	// a team file): without one, an unknown id is not found rather than
	// created.
	Team bool
	// Spec builds the team to create. It is called only when one is
	// created, so a resume never reads context files or team files again.
	Spec func() (TeamSpec, error)
}

// CreateOrResume returns the session a run will run: with the id of a stored
// session, that session as it stands (its team and rules; a retry of the
// same call, or a resume), else the session Create writes or joins. It
// decides from the store, not from what a caller read earlier.
func (svc *Service) CreateOrResume(ctx context.Context, req RunRequest) (*Session, error) {
	if req.SessionID != "" {
		s, err := svc.sessions.read(ctx, req.SessionID)
		switch {
		case err == nil && req.Members:
			// Identical settings join the session, different ones are
			// refused: Create says which.
		case err == nil:
			if task := strings.TrimSpace(req.Task); task != "" && task != strings.TrimSpace(s.Task) {
				return nil, fmt.Errorf("%w: session %s exists with another task", ErrSessionExists, s.ID)
			}
			return s, nil
		case !errors.Is(err, ErrSessionNotFound):
			return nil, err
		case !req.Team:
			return nil, err
		}
	}
	spec, err := req.Spec()
	if err != nil {
		return nil, err
	}
	return svc.Create(ctx, spec)
}
