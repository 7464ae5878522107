package coordination

import "errors"

// The errors a caller can act on. They are wrapped with context; match them
// with errors.Is. mcp maps them to isError results and the CLI to exit codes,
// each in one place.
var (
	ErrSessionNotFound = errors.New("no such session")
	ErrSessionExists   = errors.New("a session with this id already exists")
	ErrSessionFinished = errors.New("the session has already finished")
	ErrSessionRunning  = errors.New("the session is already running")
	ErrAgentNotFound   = errors.New("no such agent in this team")
	ErrAgentBusy       = errors.New("the agent already has a step in flight")
	ErrNotNext         = errors.New("the agent is not due to act")
	ErrBadSettings     = errors.New("invalid settings")
	ErrBadSpec         = errors.New("invalid model spec")
	ErrBadAction       = errors.New("invalid action")
	ErrStaleView       = errors.New("the submission does not answer the latest view issued to this agent")
	ErrNotHost         = errors.New("the agent is not a host agent")
	ErrHostInRunTeam   = errors.New("teams with host agents cannot be run by the server")
	ErrBadInput        = errors.New("invalid input")
)
