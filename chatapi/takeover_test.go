package chatapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// TestAChatRequestFollowingARunItsHolderHandsOverTakesItUp: a streamed
// chat request on B names a session A runs; A stops and hands the run over
// while no replica has taken it up. The client asked for the answer, so B
// takes the run up and answers it finished, where it answered the
// interrupted session (a 500-free reply, but no answer).
func TestAChatRequestFollowingARunItsHolderHandsOverTakesItUp(t *testing.T) {
	stores := &replicaStores{stores: map[string]coordination.Store{}}
	ctx := context.Background()
	// A long lease: only the hand-over (which expires it at once) may let
	// B take the run, never a renewal a loaded machine made late.
	a := coordination.NewService(stores.of("a"), coordination.Options{
		Logger: zerolog.Nop(), Open: backends.Open,
		HandOver: true, RunHeartbeat: 100 * time.Millisecond, RunLeaseTTL: 10 * time.Second,
	})
	s, err := a.Create(ctx, coordination.TeamSpec{SessionID: "chat_handed", Task: "What is 6 * 7?", Models: []string{"sim:latency=400ms", "sim:latency=400ms"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Start(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	b := serveOn(t, mcp.Options{}, mcp.HTTPOptions{}, stores)
	c := b.client(tokenA)
	stream := c.Chat.Completions.NewStreaming(ctx, ask("massgen/quick", "What is 6 * 7?"), option.WithJSONSet("massgen_session_id", s.ID))
	// The first chunk goes out once B follows A's run.
	if !stream.Next() {
		t.Fatalf("no first chunk: %v", stream.Err())
	}
	if _, running := b.service(t, "a").Running(s.ID); running {
		t.Fatal("B runs the session A holds")
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := a.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	last := stream.Current().RawJSON()
	for stream.Next() {
		last = stream.Current().RawJSON()
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("the stream B answered: %v", err)
	}
	if m := metaOf(t, last); m.SessionID != s.ID || m.Status != coordination.StatusFinished {
		t.Errorf("B's answer after A handed the run over: %+v; want the run taken up and finished", m)
	}
}
