package main

import (
	"bytes"
	"context"
	"testing"
)

// cli runs the command in-process and returns its output and exit code.
func cli(t *testing.T, args ...string) (string, int) {
	t.Helper()
	root := rootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	if err := root.ExecuteContext(context.Background()); err != nil {
		out.WriteString("error: " + err.Error())
		return out.String(), 1
	}
	return out.String(), 0
}
