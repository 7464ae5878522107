package coordination

import (
	"bytes"
	"testing"
)

// TestVoteToolIsTheSameFromTheCache: the shared vote tool for an enum is the
// one built for it, and different enums never share one.
func TestVoteToolIsTheSameFromTheCache(t *testing.T) {
	for _, enum := range [][]string{{"agent1"}, {"agent1", "agent2"}, {"agent2", "agent1"}, {"agent1", "agent2", "agent3"}} {
		want := buildVoteTool(enum)
		for range 2 {
			got := voteTool(enum)
			if got.Name != want.Name || got.Description != want.Description || !bytes.Equal(got.Schema, want.Schema) {
				t.Fatalf("vote tool for %v: got %s, want %s", enum, got.Schema, want.Schema)
			}
		}
	}
	if bytes.Equal(voteTool([]string{"agent1", "agent2"}).Schema, voteTool([]string{"agent1", "agent3"}).Schema) {
		t.Fatal("different enums must give different tools")
	}
}
