package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// maxTaskBytes bounds a task read from a file or standard input: a task is
// a prompt, not a corpus (context files are for that).
const maxTaskBytes = 1 << 20

// readTask finds the task: the one argument, standard input when that
// argument is "-", or --task-file (where "-" is standard input too).
func readTask(cmd *cobra.Command, file string, args []string) (string, error) {
	switch {
	case file != "" && len(args) > 0:
		return "", fmt.Errorf("%w: give the task as an argument or with --task-file, not both", coordination.ErrBadInput)
	case file != "":
		return readTaskFrom(cmd, file)
	case len(args) == 1 && args[0] == "-":
		return readTaskFrom(cmd, "-")
	case len(args) == 1:
		return args[0], nil
	}
	return "", fmt.Errorf("%w: give the task as one quoted argument, e.g. massgen-mcp run --models sim,sim,sim \"What is 17 * 23?\"; or - to read it from standard input, or --task-file FILE", coordination.ErrBadInput)
}

func readTaskFrom(cmd *cobra.Command, file string) (string, error) {
	var r io.Reader = cmd.InOrStdin()
	where := "standard input"
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return "", fmt.Errorf("%w: cannot read the task file: %w", coordination.ErrBadInput, err)
		}
		defer f.Close()
		r, where = f, file
	}
	data, err := io.ReadAll(io.LimitReader(r, maxTaskBytes+1))
	if err != nil {
		return "", fmt.Errorf("%w: cannot read the task from %s: %w", coordination.ErrBadInput, where, err)
	}
	if len(data) > maxTaskBytes {
		return "", fmt.Errorf("%w: the task in %s is over %d bytes; put long material in a context file and keep the task short", coordination.ErrBadInput, where, maxTaskBytes)
	}
	task := strings.TrimSpace(string(data))
	if task == "" {
		return "", fmt.Errorf("%w: %s holds no task; write what the team should do", coordination.ErrBadInput, where)
	}
	return task, nil
}
