package anthropic

import (
	"encoding/json"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
)

func events(t *testing.T, frames ...string) accumulator {
	t.Helper()
	var a accumulator
	for _, f := range frames {
		var ev sdk.MessageStreamEventUnion
		if err := json.Unmarshal([]byte(f), &ev); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := a.add(ev); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return a
}

func TestMessageDeltaTotalsOverwriteMessageStart(t *testing.T) {
	a := events(t,
		`{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":1}}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":12,"cache_read_input_tokens":700,"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200},"output_tokens":50,"output_tokens_details":{"thinking_tokens":20}}}`,
		`{"type":"message_stop"}`,
	)
	r := a.partial()
	if u := r.Usage; u.Input != 1012 || u.CachedInput != 700 || u.Output != 50 || u.Reasoning != 20 || r.CacheWriteInput != 300 || r.StopReason != "end_turn" || !a.stopped {
		t.Errorf("result %+v usage %+v", r, r.Usage)
	}
	// Only a delta's present fields overwrite: here just the output.
	a = events(t,
		`{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":5,"cache_creation_input_tokens":7,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":7},"output_tokens":1}}}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`,
	)
	if r := a.partial(); r.Usage.Input != 22 || r.Usage.CachedInput != 5 || r.Usage.Output != 9 || r.CacheWriteInput != 7 || r.CacheWrite1hInput != 7 {
		t.Errorf("result %+v usage %+v", r, r.Usage)
	}
}

func TestToolInputGivenWholeInBlockStart(t *testing.T) {
	a := events(t,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"vote","input":{"agent_id":"agent1","reason":"r"}}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"u","name":"new_answer","input":{}}}`,
	)
	if got := string(a.blocks[0].args()); got != `{"agent_id":"agent1","reason":"r"}` {
		t.Errorf("args = %s", got)
	}
	if got := string(a.blocks[1].args()); got != `{}` {
		t.Errorf("args of a block without deltas = %s", got)
	}
}
