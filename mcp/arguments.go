package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// argsSchema checks a tool's arguments against its input schema as enforced
// (schema.go) before the handler runs, so a wrong type, a missing field or an unknown
// property is an isError result the model can correct (SEP-1303) and never a
// crash.
//
// mcp-go's own WithInputSchemaValidation is not used: it renders violations
// with %+v of the validator's internals ("<root>: &{Properties:[task]}"),
// which no model can act on. This one says what is wrong in words.
type argsSchema struct {
	tool   string
	schema *jsonschema.Schema
	// raw is the schema as published, for the names an unknown argument
	// may have meant (argumenthints.go).
	raw json.RawMessage
}

var english = message.NewPrinter(language.English)

// errBadArguments marks arguments that do not fit a tool's input schema.
var errBadArguments = errors.New("invalid arguments")

// newArgsSchema compiles a tool's input schema. The schemas are generated
// from Go types at start-up, so failing to compile one is a programming error.
func newArgsSchema(tool mcpgo.Tool) *argsSchema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(enforced(tool.RawInputSchema)))
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema is not JSON: %v", tool.Name, err))
	}
	c := jsonschema.NewCompiler()
	url := "mem:///massgen-mcp/" + tool.Name + "/input.json"
	if err := c.AddResource(url, doc); err != nil {
		panic(fmt.Sprintf("tool %s: %v", tool.Name, err))
	}
	s, err := c.Compile(url)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema does not compile: %v", tool.Name, err))
	}
	return &argsSchema{tool: tool.Name, schema: s, raw: tool.RawInputSchema}
}

// check validates raw arguments (absent arguments count as {}).
func (a *argsSchema) check(req mcpgo.CallToolRequest) error {
	raw := req.Params.RawArguments
	if len(raw) == 0 {
		var err error
		if raw, err = json.Marshal(req.Params.Arguments); err != nil {
			return fmt.Errorf("%w: the arguments of %s cannot be read: %w", errBadArguments, a.tool, err)
		}
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		raw = []byte("{}")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%w: the arguments of %s are not valid JSON: %w", errBadArguments, a.tool, err)
	}
	dropNullMembers(v) // null means absent (schema.go)
	err = a.schema.Validate(v)
	if err == nil {
		return nil
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return fmt.Errorf("%w: the arguments of %s do not match its input schema: %w", errBadArguments, a.tool, err)
	}
	return fmt.Errorf("%w: the arguments of %s do not match its input schema: %s", errBadArguments, a.tool, strings.Join(a.violations(verr), "; "))
}

// violations lists the leaf problems of a validation error, each with where
// it is ("task", "agents[0].model", or "the arguments" for the top level);
// an argument the schema does not know comes with the name it may have
// meant.
func (a *argsSchema) violations(e *jsonschema.ValidationError) []string {
	if len(e.Causes) == 0 {
		where := "the arguments"
		if len(e.InstanceLocation) > 0 {
			var b strings.Builder
			for i, seg := range e.InstanceLocation {
				if isIndex(seg) {
					fmt.Fprintf(&b, "[%s]", seg)
					continue
				}
				if i > 0 {
					b.WriteByte('.')
				}
				b.WriteString(seg)
			}
			where = b.String()
		}
		msg := where + ": " + e.ErrorKind.LocalizedString(english)
		if k, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
			if hints := unknownArgumentHints(k, propertiesAt(a.raw, e.InstanceLocation)); len(hints) > 0 {
				msg += "; " + strings.Join(hints, "; ")
			}
		}
		return []string{msg}
	}
	var out []string
	for _, c := range e.Causes {
		out = append(out, a.violations(c)...)
	}
	return out
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
