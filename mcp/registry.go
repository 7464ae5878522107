package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// tools lists every tool the server offers: the one place to see the whole
// surface.
func tools(h *handler) []server.ServerTool {
	return []server.ServerTool{
		runTeamTool(h),
		startTeamTool(h),
		stepTool(h),
		teamStatusTool(h),
		finalizeTeamTool(h),
		cancelTeamTool(h),
		applyChangesTool(h),
		listBackendsTool(h),
		generateEvalCriteriaTool(h),
		checkpointTool(h),
	}
}

// typedHandler checks a tool's arguments against its input schema, decodes
// them into In, and turns any error the handler returns into an isError
// result with a fix. After the schema check a decoding failure is rare (a
// number too large for an int).
func typedHandler[In any](h *handler, tool mcpgo.Tool, fn func(ctx context.Context, req mcpgo.CallToolRequest, in In) (*mcpgo.CallToolResult, error)) server.ToolHandlerFunc {
	name := tool.Name
	schema := newArgsSchema(tool)
	sizes := sizeRules(enforced(tool.RawInputSchema))
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		// Counts and sizes first: nothing below may parse item by item
		// what the caps refuse (the transports have checked already;
		// in-process callers have not).
		if err := checkArguments(req.Params.RawArguments, sizes); err != nil {
			return h.errorResult(ctx, name, err), nil
		}
		if err := checkOperatorOnly(ctx, name, req); err != nil {
			return h.errorResult(ctx, name, err), nil
		}
		if err := schema.check(req); err != nil {
			return h.errorResult(ctx, name, err), nil
		}
		var in In
		if err := req.BindArguments(&in); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				err = fmt.Errorf("%s: %s does not fit a %s", te.Field[strings.LastIndex(te.Field, ".")+1:], te.Value, te.Type)
			}
			return h.errorResult(ctx, name, fmt.Errorf("%w: the arguments of %s cannot be used: %w", errBadArguments, name, err)), nil
		}
		decoded(ctx) // decoding.go
		res, err := fn(ctx, req, in)
		if err != nil {
			return h.errorResult(ctx, name, err), nil
		}
		return res, nil
	}
}

// annotations says how a tool behaves, sending only the hints that differ
// from the spec's defaults (not read-only, destructive, not idempotent, open
// world): every byte of tools/list is paid for in every conversation.
// Nothing here is destructive, so every tool that is not read-only says so
// (the hint means nothing on a read-only one).
func annotations(title string, readOnly, idempotent, openWorld bool) mcpgo.ToolOption {
	yes, no := true, false
	a := mcpgo.ToolAnnotation{Title: title}
	if readOnly {
		a.ReadOnlyHint = &yes
	} else {
		a.DestructiveHint = &no
	}
	if idempotent {
		a.IdempotentHint = &yes
	}
	if !openWorld {
		a.OpenWorldHint = &no
	}
	return mcpgo.WithToolAnnotation(a)
}
