package coordination

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/massgen-go/massgen-mcp/permissions"
)

// RunRequest names the session a server-driven run (run_team) runs: a stored
// one to resume, or a team to create.
type RunRequest struct {
	// SessionID is the session to resume, or the id for a new one ("").
	SessionID string
	// Task, given with the id of a stored session, must be that session's.
	Task string
	// Previous, given with the id of a stored session, must be the session
	// it follows up (Session.Previous): a retry naming another turn to
	// continue is not the same request.
	Previous string
	// Members says the request lists agents or models: with the id of a
	// stored session it joins it only with identical settings (Create is
	// idempotent) and is refused otherwise.
	Members bool
	// Team says the request names a team at all (a task, agents, models or
	// a team file): without one, an unknown id is not found rather than
	// created.
	Team bool
	// Permissions is the client's narrowing (TeamSpec.Permissions). With
	// the id of a stored session it must be what the session keeps: a
	// resume runs on the rules the session was created with, and a client
	// must not believe it narrowed them when it did not.
	Permissions *permissions.Rules
	// TeamName, given with the id of a stored session that has a name for
	// its team (Session.TeamName), must be that name (OtherTeamError). The
	// session Spec creates keeps its own TeamSpec.TeamName.
	TeamName string
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
		if err == nil {
			// Before the task: a request under another team's name is
			// the wrong session whatever its task.
			if err := checkTeamName(s, req.TeamName); err != nil {
				return nil, err
			}
		}
		switch {
		case err == nil && req.Members:
			// Identical settings join the session, different ones are
			// refused: Create says which.
		case err == nil:
			if task := strings.TrimSpace(req.Task); task != "" && task != strings.TrimSpace(s.Task) {
				return nil, fmt.Errorf("%w: session %s exists with another task", ErrSessionExists, s.ID)
			}
			if req.Previous != "" && req.Previous != s.Previous {
				follows := "follows up no session"
				if s.Previous != "" {
					follows = "follows up " + s.Previous
				}
				return nil, fmt.Errorf("%w: session %s exists and %s, not %s; choose another session id to continue %s", ErrSessionExists, s.ID, follows, req.Previous, req.Previous)
			}
			if !keepsNarrowing(s, req.Permissions) {
				return nil, fmt.Errorf("%w: session %s was created with other permissions; a resume keeps the rules it was created with, so start a new session to narrow them", ErrSessionExists, s.ID)
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

// keepsNarrowing tells whether every agent of s keeps the client's
// narrowing c; no narrowing asked for is always kept.
func keepsNarrowing(s *Session, c *permissions.Rules) bool {
	if c == nil || c.IsZero() {
		return true
	}
	// Compared as stored: a session read back from a file or a row has
	// been through JSON, where an empty list and none are one.
	want, err := json.Marshal(c)
	if err != nil {
		return false
	}
	for _, a := range s.Agents {
		got, err := json.Marshal(a.Narrowing)
		if a.Narrowing == nil || err != nil || !bytes.Equal(got, want) {
			return false
		}
	}
	return true
}
