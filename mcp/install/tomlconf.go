package install

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlServer is Codex's [mcp_servers.NAME] table.
type tomlServer struct {
	Command string   `toml:"command"`
	Args    []string `toml:"args"`
	EnvVars []string `toml:"env_vars,omitempty"`
}

// tomlEntry is the table's text: the header, then its keys as go-toml
// writes them.
func tomlEntry(command string, args, vars []string) []byte {
	body, _ := toml.Marshal(tomlServer{Command: command, Args: args, EnvVars: vars})
	return append([]byte("[mcp_servers."+ServerName+"]\n"), body...)
}

// tomlBlock is one [table] of a file: its key path and the bytes from its
// header line to the next header.
type tomlBlock struct {
	path       []string
	start, end int
	array      bool
}

// tomlLayout finds a file's table blocks, and the line of any key/value under
// key that is not in a [key…] table of its own (dotted keys or an inline
// table), which massgen-mcp does not rewrite.
func tomlLayout(data []byte, key []string) (blocks []tomlBlock, loose int, err error) {
	var p unstable.Parser
	p.Reset(data)
	var cur []string
	for p.NextExpression() {
		e := p.Expression()
		var path []string
		first := -1
		var firstRaw unstable.Range
		it := e.Key()
		for it.Next() {
			k := it.Node()
			if first < 0 {
				first, firstRaw = int(k.Raw.Offset), k.Raw
			}
			path = append(path, string(k.Data))
		}
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			start := bytes.LastIndexByte(data[:max(first, 0)], '\n') + 1
			if n := len(blocks); n > 0 {
				blocks[n-1].end = commentsAbove(data, start)
			}
			blocks = append(blocks, tomlBlock{path: path, start: start, end: len(data), array: e.Kind == unstable.ArrayTable})
			cur = path
		case unstable.KeyValue:
			full := append(slices.Clone(cur), path...)
			if hasPrefix(full, key) && !hasPrefix(cur, key) && loose == 0 {
				loose = p.Shape(firstRaw).Start.Line
			}
		}
	}
	if err := p.Error(); err != nil {
		return nil, 0, fmt.Errorf("is not valid TOML, so massgen-mcp does not edit it: %w", err)
	}
	return blocks, loose, nil
}

// commentsAbove is where the comment lines directly above the line at start
// begin (start when there are none): they are about the table that header
// opens, and stay with it, not with the table before.
func commentsAbove(data []byte, start int) int {
	for start > 0 {
		ls := bytes.LastIndexByte(data[:start-1], '\n') + 1
		line := bytes.TrimSpace(data[ls:start])
		if !bytes.HasPrefix(line, []byte("#")) || bytes.Contains(line, []byte(`"""`)) || bytes.Contains(line, []byte("'''")) {
			break
		}
		start = ls
	}
	return start
}

func hasPrefix(path, prefix []string) bool {
	return len(path) >= len(prefix) && slices.Equal(path[:len(prefix)], prefix)
}

// tomlCurrent decodes the value at key, or nil.
func tomlCurrent(data []byte, key []string) (any, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("is not valid TOML, so massgen-mcp does not edit it: %w", err)
	}
	var v any = doc
	for _, k := range key {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil
		}
		if v, ok = m[k]; !ok {
			return nil, nil
		}
	}
	return v, nil
}

// tomlSet makes the file's [mcp_servers.massgen] table the entry: unchanged
// when it already says the same, replaced in place when it differs (its
// sub-tables too), appended at the end when it is missing. Every other byte
// — comments, order, formatting — stays.
func tomlSet(before []byte, key []string, entry []byte) ([]byte, error) {
	blocks, loose, err := tomlLayout(before, key)
	if err != nil {
		return nil, err
	}
	if loose > 0 {
		return nil, fmt.Errorf("line %d sets %s outside a [%s] table (dotted keys or an inline table), which massgen-mcp does not rewrite; remove it (codex mcp remove %s) and install again", loose, strings.Join(key, "."), strings.Join(key, "."), ServerName)
	}
	cur, err := tomlCurrent(before, key)
	if err != nil {
		return nil, err
	}
	want, err := tomlCurrent(entry, key)
	if err != nil {
		return nil, err
	}
	if cur != nil && reflect.DeepEqual(cur, want) {
		return before, nil
	}
	out, at := cutBlocks(before, blocks, key)
	if at < 0 {
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		if len(bytes.TrimSpace(out)) > 0 {
			out = append(out, '\n')
		}
		return append(out, entry...), nil
	}
	res := append(slices.Clone(out[:at]), entry...)
	if rest := out[at:]; len(rest) > 0 {
		res = append(res, '\n')
		res = append(res, rest...)
	}
	return res, nil
}

// tomlDelete removes the [mcp_servers.massgen] table and its sub-tables.
func tomlDelete(cur []byte, key []string) ([]byte, error) {
	blocks, loose, err := tomlLayout(cur, key)
	if err != nil {
		return nil, err
	}
	if loose > 0 {
		return nil, fmt.Errorf("line %d sets %s outside a [%s] table, which massgen-mcp does not rewrite; remove it with codex mcp remove %s", loose, strings.Join(key, "."), strings.Join(key, "."), ServerName)
	}
	out, at := cutBlocks(cur, blocks, key)
	if at < 0 {
		return cur, nil
	}
	// The blank line that separated the table from what came before goes
	// with it.
	if at == len(out) {
		trimmed := bytes.TrimRight(out, "\n")
		if len(trimmed) > 0 {
			trimmed = append(trimmed, '\n')
		}
		return trimmed, nil
	}
	return out, nil
}

// cutBlocks removes every block under key and says where the first one was
// (-1 when there was none). Array tables under key are left alone.
func cutBlocks(data []byte, blocks []tomlBlock, key []string) ([]byte, int) {
	var out []byte
	at, last := -1, 0
	for _, b := range blocks {
		if b.array || !hasPrefix(b.path, key) {
			continue
		}
		out = append(out, data[last:b.start]...)
		if at < 0 {
			at = len(out)
		}
		last = b.end
	}
	if at < 0 {
		return data, -1
	}
	return append(out, data[last:]...), at
}

// tomlGet is the text of the [mcp_servers.massgen] table and its
// sub-tables, or nil.
func tomlGet(data []byte, key []string) ([]byte, error) {
	blocks, _, err := tomlLayout(data, key)
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, b := range blocks {
		if !b.array && hasPrefix(b.path, key) {
			out = append(out, bytes.TrimRight(data[b.start:b.end], " \t\r\n")...)
			out = append(out, '\n')
		}
	}
	return out, nil
}
