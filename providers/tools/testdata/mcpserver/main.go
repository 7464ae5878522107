// Command mcpserver is a small stdio MCP server for the tests of
// providers/tools: echo, boot (an id drawn at start, so a restart shows),
// env (one variable), where (whether it runs in the sandbox), crash (exits
// at once), wait (says so on stderr, then answers when its call is
// cancelled or after a minute: a call in flight) and secret (for
// exclude_tools). With -fail it exits before serving, with a message on
// stderr, as a misconfigured server does. With -rude it has three more
// tools that misbehave: flood (writes one line of mib MiB to stdout, then
// says "flood all written" on stderr), slow (answers after ms
// milliseconds, whether or not its call was cancelled) and stop (the
// server reads and answers nothing more, as one hung for good). With MCPSERVER_TOKEN set, -fail
// and crash print the token, as a server refused by its API may.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	fail := flag.Bool("fail", false, "exit before serving")
	rude := flag.Bool("rude", false, "add flood, slow and stop")
	flag.Parse()
	if *fail {
		chatter()
		if tok := os.Getenv("MCPSERVER_TOKEN"); tok != "" {
			fmt.Fprintf(os.Stderr, "mcpserver: token %s was refused\n", tok)
		}
		fmt.Fprintln(os.Stderr, "mcpserver: cannot start: the config file is missing")
		os.Exit(2)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	boot := hex.EncodeToString(b)

	s := server.NewMCPServer("mcpserver", "1.0.0")
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo the text back."), mcp.WithString("text", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("boot", mcp.WithDescription("This process's boot id.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(boot), nil
		})
	s.AddTool(mcp.NewTool("env", mcp.WithDescription("One environment variable."), mcp.WithString("name", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			v, ok := os.LookupEnv(req.GetString("name", ""))
			if !ok {
				return mcp.NewToolResultError("not set"), nil
			}
			return mcp.NewToolResultText(v), nil
		})
	s.AddTool(mcp.NewTool("where", mcp.WithDescription("Working directory and HOME.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			wd, _ := os.Getwd()
			return mcp.NewToolResultText(fmt.Sprintf("wd=%s home=%s", wd, os.Getenv("HOME"))), nil
		})
	s.AddTool(mcp.NewTool("crash", mcp.WithDescription("Exit at once.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			chatter()
			if tok := os.Getenv("MCPSERVER_TOKEN"); tok != "" {
				fmt.Fprintf(os.Stderr, "mcpserver: token %s expired\n", tok)
			}
			fmt.Fprintln(os.Stderr, "mcpserver: crashing on request")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(mcp.NewTool("wait", mcp.WithDescription("Answer after a minute.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "mcpserver: waiting")
			select {
			case <-ctx.Done():
			case <-time.After(time.Minute):
			}
			return mcp.NewToolResultText("waited"), nil
		})
	s.AddTool(mcp.NewTool("secret", mcp.WithDescription("A tool the operator excludes.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("secret"), nil
		})
	var stdin io.Reader = os.Stdin
	if *rude {
		h := &haltable{r: os.Stdin}
		addRude(s, h)
		stdin = h
	}
	if err := serveStdio(s, stdin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// chatter writes lines to stderr one at a time, as a server logging its way
// down does, so that its last words come after many writes: what it said
// last must still be read before its end is quoted.
func chatter() {
	for i := range 40 {
		fmt.Fprintf(os.Stderr, "mcpserver: shutting down (%d)\n", i)
	}
}

// addRude adds the tools that misbehave (-rude).
func addRude(s *server.MCPServer, h *haltable) {
	s.AddTool(mcp.NewTool("flood", mcp.WithDescription("Write one huge line."), mcp.WithNumber("mib", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			chunk := strings.Repeat("x", 1<<20)
			_, _ = os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`)
			for range req.GetInt("mib", 1) {
				if _, err := os.Stdout.WriteString(chunk); err != nil {
					return nil, err
				}
			}
			fmt.Fprintln(os.Stderr, "mcpserver: flood all written")
			<-ctx.Done()
			return mcp.NewToolResultText("flooded"), nil
		})
	s.AddTool(mcp.NewTool("slow", mcp.WithDescription("Answer late."), mcp.WithNumber("ms", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ms := req.GetInt("ms", 0)
			time.Sleep(time.Duration(ms) * time.Millisecond)
			return mcp.NewToolResultText(fmt.Sprintf("slow %d done", ms)), nil
		})
	s.AddTool(mcp.NewTool("stop", mcp.WithDescription("Read and answer nothing more.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h.halt()
			select {} // never answers
		})
}

// haltable is the server's stdin until stop halts it: from then on a read
// never returns, as in a server hung for good, so what the client writes
// fills the pipe. (A SIGSTOP did this too, but something on a loaded
// machine now and then sent the stopped process a SIGCONT.)
type haltable struct {
	r      io.Reader
	halted atomic.Bool
}

func (h *haltable) halt() { h.halted.Store(true) }

func (h *haltable) Read(p []byte) (int, error) {
	if h.halted.Load() {
		select {}
	}
	return h.r.Read(p)
}

// serveStdio is server.ServeStdio reading stdin from r: a SIGTERM or
// SIGINT ends it, as there.
func serveStdio(s *server.MCPServer, r io.Reader) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return server.NewStdioServer(s).Listen(ctx, r, os.Stdout)
}
