package coordination

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestAgentIDsMayHoldDotsButNotLeadWithOne(t *testing.T) {
	for id, ok := range map[string]bool{
		"agent_a": true, "claude-4.6": true, "a.b.c": true,
		".": false, "..": false, ".step.lock": false, "a/b": false, "": false, strings.Repeat("a", 65): false,
	} {
		if err := CheckAgentID(id); (err == nil) != ok {
			t.Errorf("agent id %q: %v, want valid = %v", id, err, ok)
		} else if err != nil && !errors.Is(err, ErrBadInput) {
			t.Errorf("agent id %q: %v is not ErrBadInput", id, err)
		}
	}
	for id, ok := range map[string]bool{"team_1-x": true, "a.b": false, "..": false, "a/b": false, "": false} {
		if err := CheckSessionID(id); (err == nil) != ok {
			t.Errorf("session id %q: %v, want valid = %v", id, err, ok)
		}
	}
}

func TestAnonNameNamesEveryNumber(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, MaxAgents, MaxAgents + 1, 123, -1} {
		if got, want := Alias(n), "agent"+strconv.Itoa(n); got != want {
			t.Errorf("Alias(%d) = %q, want %q", n, got, want)
		}
	}
}
