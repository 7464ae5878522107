package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/massgen-go/massgen-mcp/providers"
)

// step is a stand-in for the Step's end of the socket: it refuses the
// first call and accepts the second, recording what it was sent.
func step(t *testing.T) (string, *[]Call) {
	t.Helper()
	sock, ln := listen(t)
	var got []Call
	go func() {
		for n := 0; ; n++ {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(conn).ReadBytes('\n')
			var c Call
			_ = json.Unmarshal(line, &c)
			got = append(got, c)
			v := Verdict{Accepted: n > 0, Message: "try again"}
			if v.Accepted {
				v.Message = "Recorded."
			}
			b, _ := json.Marshal(v)
			conn.Write(append(b, '\n'))
			conn.Close()
		}
	}()
	return sock, &got
}

// listen opens the Step's end of a socket, in a short path (a Unix
// socket's path has a 108-byte limit that t.TempDir can exceed).
func listen(t *testing.T) (string, net.Listener) {
	t.Helper()
	dir, err := os.MkdirTemp("", "relay-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return sock, ln
}

func connect(t *testing.T, v View) *client.Client {
	t.Helper()
	cin, sout := io.Pipe()
	sin, cout := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go Serve(ctx, v, sin, sout, "test")
	c := client.NewClient(transport.NewIO(cin, cout, io.NopCloser(strings.NewReader(""))))
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcpgo.InitializeRequest{}
	init.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcpgo.Implementation{Name: "t", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRelayOffersExactlyTheViewsToolsAndReturnsTheStepsVerdict(t *testing.T) {
	sock, got := step(t)
	vote := providers.Tool{Name: "vote", Description: "Vote.", Schema: json.RawMessage(`{"type":"object","properties":{"agent_id":{"type":"string","enum":["agent1","agent3"]},"reason":{"type":"string"}},"required":["agent_id","reason"]}`)}
	c := connect(t, View{Socket: sock, Tools: []providers.Tool{vote}})
	ctx := context.Background()
	list, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != "vote" {
		t.Fatalf("tools = %+v", list.Tools)
	}
	schema, _ := json.Marshal(list.Tools[0].InputSchema)
	if !strings.Contains(string(schema), `"enum":["agent1","agent3"]`) {
		t.Fatalf("vote's schema lost the view's vote_enum: %s", schema)
	}
	req := mcpgo.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "vote", map[string]any{"agent_id": "agent3", "reason": "r"}
	res, err := c.CallTool(ctx, req)
	if err != nil || !res.IsError || res.Content[0].(mcpgo.TextContent).Text != "try again" {
		t.Fatalf("a refused call is an error result with the step's words: %+v %v", res, err)
	}
	res, err = c.CallTool(ctx, req)
	if err != nil || res.IsError || res.Content[0].(mcpgo.TextContent).Text != "Recorded." {
		t.Fatalf("an accepted call: %+v %v", res, err)
	}
	if len(*got) != 2 || (*got)[0].Tool != "vote" || !strings.Contains(string((*got)[0].Arguments), `"agent3"`) {
		t.Fatalf("forwarded = %+v", *got)
	}
}

func TestRelayWithTheStepGoneTellsTheModelToStop(t *testing.T) {
	c := connect(t, View{Socket: filepath.Join(t.TempDir(), "gone.sock"), Tools: []providers.Tool{{Name: "new_answer", Schema: json.RawMessage(`{"type":"object"}`)}}})
	req := mcpgo.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "new_answer", map[string]any{"content": "x"}
	res, err := c.CallTool(context.Background(), req)
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(mcpgo.TextContent).Text, "no longer listening") {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestReadViewRefusesWhatItCannotServe(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"nosocket": `{"tools":[{"name":"vote"}]}`, "notools": `{"socket":"/s"}`, "junk": `{`} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		if _, err := ReadView(p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestSlowMCPCallsDoNotHoldUpTheAnswer: with the agent's MCP tools served,
// a dozen slow calls in flight leave new_answer free to reach the Step
// (mcp-go's stdio server runs 5 calls at once by default, so the sixth
// call, the answer, waited for a slow one to end).
func TestSlowMCPCallsDoNotHoldUpTheAnswer(t *testing.T) {
	sock, ln := listen(t)
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(free) // a failed test leaves no handler blocked
	slow := make(chan struct{}, 64)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				line, _ := bufio.NewReader(conn).ReadBytes('\n')
				var c Call
				_ = json.Unmarshal(line, &c)
				v := Verdict{Accepted: true, Message: "Recorded."}
				if c.Tool == "probe__wait" {
					slow <- struct{}{}
					<-release
					v = Verdict{Accepted: true, Result: &providers.ToolResult{Content: "waited"}}
				}
				b, _ := json.Marshal(v)
				conn.Write(append(b, '\n'))
			}()
		}
	}()
	object := json.RawMessage(`{"type":"object"}`)
	c := connect(t, View{Socket: sock,
		Tools: []providers.Tool{{Name: "new_answer", Schema: object}},
		Extra: []providers.Tool{{Name: "probe__wait", Schema: object}}})
	ctx := context.Background()
	const inFlight = 12
	done := make(chan error, inFlight)
	for range inFlight {
		go func() {
			req := mcpgo.CallToolRequest{}
			req.Params.Name = "probe__wait"
			_, err := c.CallTool(ctx, req)
			done <- err
		}()
	}
	for n := range inFlight {
		select {
		case <-slow: // one more slow call has reached the Step
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d MCP calls ran at once; the rest, and any new_answer, wait behind them", n, inFlight)
		}
	}
	answered := make(chan *mcpgo.CallToolResult, 1)
	go func() {
		req := mcpgo.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "new_answer", map[string]any{"content": "x"}
		res, _ := c.CallTool(ctx, req)
		answered <- res
	}()
	select {
	case res := <-answered:
		if res == nil || res.IsError {
			t.Fatalf("new_answer: %+v", res)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("new_answer waited behind %d slow MCP calls", inFlight)
	}
	free()
	for range inFlight {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
