package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/massgen-go/massgen-mcp/permissions"
)

// callTimeout bounds one forwarded workflow call: the Step answers at once
// (it only checks the call's shape), so a silent socket means the step is
// gone. An extra tool runs in the Step, bounded by its own call timeout (an
// MCP call's is two minutes): extraTimeout is above it.
const (
	callTimeout  = 30 * time.Second
	extraTimeout = 3 * time.Minute
)

// GateTimeout bounds a permission question: an ask may wait for a person
// (the rules' approval timeout, five minutes by default and at most a
// day), and the Step refuses once that has passed, so the relay waits
// longer than any approval may: a question it gave up on first would be
// refused without the Step, and a CLI's hook killed at the CLI's own
// timeout lets the call run (Codex and Gemini CLI treat a hook that timed
// out as one that raised no objection; cliagent.HookTimeout is longer).
const GateTimeout = permissions.MaxApprovalTimeout + 10*time.Minute

// extraWorkers is how many tool calls the server runs at once when it
// serves extra tools (mcp-go's default is 5): each slow MCP call holds a
// worker for up to extraTimeout, and a new_answer or vote queued behind
// five of them would wait that long. Idle workers cost a goroutine each.
const extraWorkers = 64

// Serve runs the workflow server for a view over a pair of streams (the
// CLI's pipes) until the input ends or ctx is done.
func Serve(ctx context.Context, v View, in io.Reader, out io.Writer, version string) error {
	s := server.NewMCPServer("massgen-workflow", version, server.WithToolCapabilities(false))
	for _, t := range v.Tools {
		s.AddTool(mcp.NewToolWithRawSchema(t.Name, t.Description, t.Schema), forward(v.Socket, t.Name, callTimeout))
	}
	for _, t := range v.Extra {
		s.AddTool(mcp.NewToolWithRawSchema(t.Name, t.Description, t.Schema), forward(v.Socket, t.Name, extraTimeout))
	}
	if v.Permission {
		s.AddTool(mcp.NewToolWithRawSchema(PromptTool, "Decides whether a tool call may run (called by the CLI, not the model).", promptSchema),
			forward(v.Socket, PromptTool, GateTimeout))
	}
	stdio := server.NewStdioServer(s)
	if len(v.Extra) > 0 || v.Permission {
		server.WithWorkerPoolSize(extraWorkers)(stdio)
	}
	err := stdio.Listen(ctx, in, out)
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// forward sends one call to the Step, waiting at most within, and turns
// its answer into the tool's result: an extra tool's result as it is; a
// workflow call accepted is a plain result, refused an error result the
// model can act on.
func forward(socket, name string, within time.Duration) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := json.Marshal(req.GetRawArguments())
		if err != nil || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		v, err := ask(ctx, socket, Call{Tool: name, Arguments: args}, within)
		switch {
		case err != nil:
			return mcp.NewToolResultError("The step that started you is no longer listening (" + err.Error() + "); stop now."), nil
		case v.Result != nil && v.Result.IsError:
			return mcp.NewToolResultError(v.Result.Content), nil
		case v.Result != nil:
			return mcp.NewToolResultText(v.Result.Content), nil
		case !v.Accepted:
			return mcp.NewToolResultError(v.Message), nil
		}
		return mcp.NewToolResultText(v.Message), nil
	}
}

// Ask sends one workflow call over a step's socket and reads the verdict.
func Ask(ctx context.Context, socket string, c Call) (Verdict, error) {
	return ask(ctx, socket, c, callTimeout)
}

func ask(ctx context.Context, socket string, c Call, within time.Duration) (Verdict, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return Verdict{}, fmt.Errorf("cannot reach the step: %w", err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	line, err := json.Marshal(c)
	if err != nil {
		return Verdict{}, err
	}
	if _, err := conn.Write(append(line, '\n')); err != nil {
		return Verdict{}, fmt.Errorf("cannot send the call: %w", err)
	}
	r := bufio.NewReaderSize(conn, 4096)
	reply, err := r.ReadBytes('\n')
	if err != nil && len(reply) == 0 {
		return Verdict{}, fmt.Errorf("no verdict from the step: %w", err)
	}
	var v Verdict
	if err := json.Unmarshal(reply, &v); err != nil {
		return Verdict{}, fmt.Errorf("the step's verdict is not JSON: %w", err)
	}
	return v, nil
}
