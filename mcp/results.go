package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Tools publish no output schema. No client of ours reads one, and they
// cost the most of tools/list (35 K of its 61 K characters, sent in every
// conversation); each description says the result's shape in a line instead,
// and structuredContent still carries it. The result types stay the wire
// types of wire.go, and the tests check every result against the schema of
// its type here (Options.ValidateOutput), where the contract is kept.

// resultTypes are the schemas of each tool's structured result: the tool's
// own type, and Pending for a call that returns before its work is done
// (pending.go).
var resultTypes = map[string][]json.RawMessage{
	"run_team":               {schemaOf[TeamResult](), schemaOf[TaskHandle]()},
	"start_team":             {schemaOf[startTeamResult]()},
	"step":                   {schemaOf[StepResult](), schemaOf[Pending]()},
	"team_status":            {schemaOf[StatusView]()},
	"finalize_team":          {schemaOf[TeamResult](), schemaOf[Pending]()},
	"cancel_team":            {schemaOf[TeamResult]()},
	"apply_changes":          {schemaOf[ApplyResult]()},
	"list_backends":          {schemaOf[listBackendsResult]()},
	"generate_eval_criteria": {schemaOf[generateCriteriaResult](), schemaOf[Pending]()},
	"checkpoint":             {schemaOf[CheckpointResult]()},
}

// schemaOf is the JSON schema mcp-go generates for a result type.
func schemaOf[T any]() json.RawMessage {
	var t mcpgo.Tool
	mcpgo.WithOutputSchema[T]()(&t)
	raw, err := json.Marshal(t.OutputSchema)
	if err != nil {
		panic(fmt.Sprintf("the schema of %T cannot be written: %v", *new(T), err))
	}
	return raw
}

// resultCheck validates structured results against their tools' types.
type resultCheck map[string][]*jsonschema.Schema

func newResultCheck() resultCheck {
	c := resultCheck{}
	for name, schemas := range resultTypes {
		for i, raw := range schemas {
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				panic(fmt.Sprintf("tool %s: result schema is not JSON: %v", name, err))
			}
			comp := jsonschema.NewCompiler()
			url := fmt.Sprintf("mem:///massgen-mcp/%s/result-%d.json", name, i)
			if err := comp.AddResource(url, doc); err != nil {
				panic(fmt.Sprintf("tool %s: %v", name, err))
			}
			s, err := comp.Compile(url)
			if err != nil {
				panic(fmt.Sprintf("tool %s: result schema does not compile: %v", name, err))
			}
			c[name] = append(c[name], s)
		}
	}
	return c
}

// middleware turns a result that fits none of its tool's types into an
// error result naming the mismatch.
func (c resultCheck) middleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		res, err := next(ctx, req)
		if err != nil || res == nil || res.IsError || res.StructuredContent == nil {
			return res, err
		}
		if err := c.check(req.Params.Name, res.StructuredContent); err != nil {
			return mcpgo.NewToolResultError(err.Error()), nil
		}
		return res, nil
	}
}

func (c resultCheck) check(tool string, structured any) error {
	body, err := json.Marshal(structured)
	if err != nil {
		return fmt.Errorf("the result of %s cannot be encoded: %w", tool, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("the result of %s is not JSON: %w", tool, err)
	}
	var why []string
	for _, s := range c[tool] {
		err := s.Validate(v)
		if err == nil {
			return nil
		}
		if verr, ok := err.(*jsonschema.ValidationError); ok {
			why = append(why, (&argsSchema{}).violations(verr)...) // no published schema: no argument hints
			continue
		}
		why = append(why, err.Error())
	}
	if len(why) == 0 {
		return fmt.Errorf("tool %s has no result type in resultTypes", tool)
	}
	return fmt.Errorf("the result of %s fits none of its types: %s", tool, strings.Join(why, "; "))
}
