package fake

import (
	"net/http"
	"strings"
)

// floodPiece is one piece of a ReplyFlood stream's endless text: large, so
// that a test reaches a client's response cap in few events.
var floodPiece = strings.Repeat("all work and no play makes a long reply ", 400)

// cutConnection drops a started response's connection: the client sees the
// body end in a read error, with no terminal event and no usage after what
// was sent (net/http aborts the handler without logging it).
func cutConnection() { panic(http.ErrAbortHandler) }

// flooding says whether a ReplyFlood stream goes on: until the client hangs
// up (its request's context ends) or a write fails.
func flooding(r *http.Request, err error) bool { return err == nil && r.Context().Err() == nil }
