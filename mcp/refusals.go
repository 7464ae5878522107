package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/tidwall/gjson"
)

// refusal is the reply to a message beyond the caps (bounds.go), or nil if
// the message is within them: a tool call's arguments get the tool's isError
// result (the caller, often a model, corrects them), anything else a
// JSON-RPC invalid-params error. Both transports send it instead of handing
// the message to mcp-go, whose first step would decode it whole. status is
// the HTTP status to send it with.
func (s *Server) refusal(msg []byte) (reply []byte, status int) {
	err := checkMessage(msg, s.sizeRules)
	if err == nil {
		return nil, 0
	}
	id := json.RawMessage("null")
	if raw := gjson.GetBytes(msg, "id"); raw.Exists() && (raw.Type == gjson.Number || raw.Type == gjson.String) && len(raw.Raw) <= maxNameBytes {
		id = json.RawMessage(raw.Raw)
	}
	var v any
	status = http.StatusBadRequest
	var inArgs *argumentsTooLarge
	if errors.As(err, &inArgs) {
		status = http.StatusOK
		v = struct {
			JSONRPC string                `json:"jsonrpc"`
			ID      json.RawMessage       `json:"id"`
			Result  *mcpgo.CallToolResult `json:"result"`
		}{"2.0", id, s.handler.errorResult(context.Background(), inArgs.tool, inArgs.err)}
	} else {
		v = map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": mcpgo.INVALID_PARAMS, "message": err.Error()}}
	}
	reply, merr := json.Marshal(v)
	if merr != nil {
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"the message is beyond this server's size caps"}}`), http.StatusBadRequest
	}
	return reply, status
}

// boundedInput is stdio's input as mcp-go reads it: whole lines of at most
// max bytes that are within the caps. A line beyond them never reaches
// mcp-go; its refusal is written to the output instead, under the same lock
// as every other message there, so no two messages interleave.
type boundedInput struct {
	s    *Server
	in   *bufio.Reader
	max  int
	out  *lockedWriter
	sync *clientSync // answers to the server's own pings stop here
	line []byte      // what is left of the line being passed on
}

func (b *boundedInput) Read(p []byte) (int, error) {
	for len(b.line) == 0 {
		line, err := b.readLine()
		if len(line) > 0 {
			b.line = line
			break
		}
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, b.line)
	b.line = b.line[n:]
	return n, nil
}

// readLine reads the next line that may pass, answering the others.
func (b *boundedInput) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := b.in.ReadSlice('\n')
		if len(line)+len(chunk) > b.max {
			// Too long to hold: drop it to its end, and say so.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = b.in.ReadSlice('\n')
			}
			b.reply([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the message is larger than this server's limit of ` + sizeText(int64(b.max)) + `; pass large material as files under an allowed root, or in parts"}}`))
			if err != nil {
				return nil, err
			}
			line = line[:0]
			continue
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if b.sync != nil && b.sync.answer(line) {
				line = line[:0]
				if err != nil {
					return nil, err
				}
				continue
			}
			if r, _ := b.s.refusal(line); r != nil {
				if gjson.GetBytes(line, "id").Exists() {
					b.reply(r)
				}
				line = line[:0]
				if err != nil {
					return nil, err
				}
				continue
			}
			// The tasks extension's methods are answered here (taskrpc.go).
			if r, ok := b.s.taskMethod(context.Background(), line); ok {
				if r != nil {
					b.reply(r)
				}
				line = line[:0]
				if err != nil {
					return nil, err
				}
				continue
			}
		}
		return line, err
	}
}

func (b *boundedInput) reply(msg []byte) {
	_, _ = b.out.Write(append(msg, '\n'))
}

// lockedWriter writes each message whole: mcp-go writes a message in one
// Write under its own lock, which the refusals above do not share.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
