package main

import (
	"encoding/json"
	"io"
	"strings"
)

// printIndented writes v as indented JSON, the --json form of every command.
func printIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// splitModels reads a --models list: comma-separated specs, blanks dropped.
func splitModels(list string) []string {
	var models []string
	for _, m := range strings.Split(list, ",") {
		if m = strings.TrimSpace(m); m != "" {
			models = append(models, m)
		}
	}
	return models
}
