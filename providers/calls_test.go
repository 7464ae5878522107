package providers

import (
	"encoding/json"
	"testing"
)

// TestCallsEncodeAsAMapWould: the workflow calls' arguments are the bytes a
// map of the same keys encodes to (sorted keys, HTML escaped), so that
// changing how they are built changes no seeded run.
func TestCallsEncodeAsAMapWould(t *testing.T) {
	for _, text := range []string{"", "391", "a \"quoted\" <b>&</b>\nline", "ünïcode\u2028"} {
		want, _ := json.Marshal(map[string]string{"content": text})
		if got := NewAnswerCall(text); string(got.Args) != string(want) || got.Name != ToolNewAnswer {
			t.Errorf("NewAnswerCall(%q) = %s %s, want %s", text, got.Name, got.Args, want)
		}
		want, _ = json.Marshal(map[string]string{"agent_id": "agent2", "reason": text})
		if got := VoteCall("agent2", text); string(got.Args) != string(want) || got.Name != ToolVote {
			t.Errorf("VoteCall(%q) = %s %s, want %s", text, got.Name, got.Args, want)
		}
	}
}
