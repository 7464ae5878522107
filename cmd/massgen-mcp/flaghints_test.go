package main

import (
	"strings"
	"testing"
)

// TestAnUnknownFlagNamesTheFlagMeant: MassGen's --model is --models here,
// and a near miss of a command's own flag is named.
func TestAnUnknownFlagNamesTheFlagMeant(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--model", "openai/gpt-5.4", "What is 2+2?"}, "unknown flag: --model; did you mean --models (comma-separated model specs, one per agent"},
		{[]string{"run", "--backend", "openai", "What is 2+2?"}, "did you mean --models (backend/model specs"},
		{[]string{"checkpoint", "--model", "sim"}, "did you mean --models"},
		{[]string{"criteria", "--models", "sim", "Write fizzbuzz.py"}, "unknown flag: --models; did you mean --model?"},
		{[]string{"run", "--max-round", "3", "What is 2+2?"}, "did you mean --max-rounds?"},
		{[]string{"run", "--no-display", "What is 2+2?"}, "did you mean --plain"},
		{[]string{"status", "--verbos"}, "did you mean --verbose?"},
		{[]string{"run", "--frobnicate", "What is 2+2?"}, "unknown flag: --frobnicate (massgen-mcp run --help lists the flags)"},
	} {
		out, code := cli(t, c.args...)
		if code != exitBadInput || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, output %q; want %q", c.args, code, out, c.want)
		}
	}
}
