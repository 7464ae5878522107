package mcp

import (
	"strings"

	"github.com/rs/zerolog"
)

// zerologWriter routes mcp-go's own log lines (it logs through log and slog)
// into our zerolog logger, which writes to stderr: stdout belongs to the
// protocol.
type zerologWriter struct{ log zerolog.Logger }

func (w zerologWriter) Write(p []byte) (int, error) {
	w.log.Warn().Str("from", "mcp-go").Msg(strings.TrimSpace(string(p)))
	return len(p), nil
}
