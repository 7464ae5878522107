package coordination_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// askService is a service over the file store of the state directory
// state, as serve opens it, for the ask tests' file handshake; now stands
// in its clock (nil: the real one).
func askService(state string, now func() time.Time) *coordination.Service {
	return coordination.NewService(filestore.New(filepath.Join(state, "sessions")), coordination.Options{Logger: zerolog.Nop(), Open: backends.Open, StateDir: state, Now: now})
}

// stepSession creates a session of two sims that nothing runs (driven
// step by step), for a test to leave asks in and answer them.
func stepSession(t *testing.T, svc *coordination.Service) *coordination.Session {
	t.Helper()
	s, err := svc.Create(context.Background(), coordination.TeamSpec{Task: "x", Models: []string{"sim", "sim"}, Driver: coordination.DriverStep})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
