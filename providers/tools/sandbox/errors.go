package sandbox

import "errors"

// ErrUnavailable is wrapped when commands cannot run sandboxed here; the
// message says why and what to do (see Probe).
var ErrUnavailable = errors.New("the command sandbox is not available")

// ErrBadSpec is wrapped by every refusal of a Spec or an argv.
var ErrBadSpec = errors.New("bad sandbox spec")
