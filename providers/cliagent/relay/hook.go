package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrRefused is Hook's error when the question got no answer: the CLI's
// hook protocol reads an exit status of 2 as a refusal with stderr as its
// reason, so a step that cannot be reached refuses (fail closed).
var ErrRefused = errors.New("refused")

// Hook answers one permission question of a CLI's hook (Codex's
// PreToolUse, Gemini CLI's BeforeTool): the CLI's JSON on in is forwarded
// to the Step as a HookTool call and the Step's answer, already in the
// CLI's wire, is written to out. Any failure is ErrRefused with why.
func Hook(ctx context.Context, v View, in io.Reader, out io.Writer) error {
	q, err := io.ReadAll(io.LimitReader(in, MaxLine+1))
	switch {
	case err != nil:
		return fmt.Errorf("%w: cannot read the tool call: %w", ErrRefused, err)
	case len(q) > MaxLine:
		return fmt.Errorf("%w: the tool call is larger than %d bytes", ErrRefused, MaxLine)
	case !json.Valid(q):
		return fmt.Errorf("%w: the tool call is not JSON", ErrRefused)
	}
	verdict, err := ask(ctx, v.Socket, Call{Tool: HookTool, Arguments: q}, GateTimeout)
	if err != nil {
		return fmt.Errorf("%w: the step that started you is not answering: %w", ErrRefused, err)
	}
	if !verdict.Accepted {
		return fmt.Errorf("%w: %s", ErrRefused, verdict.Message)
	}
	_, err = io.WriteString(out, verdict.Message)
	return err
}
