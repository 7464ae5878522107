package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// longAnswer is an agent's answer of n characters, different for every
// agent (a blind first answer is never refused as a duplicate, but the test
// must tell each answer from the others when it reads them back).
func longAnswer(agent string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s paragraph %d: the cache key hashes the tenant, the path and the query. ", agent, i)
	}
	return b.String()[:n]
}

// bigTeamServer is a file-store server whose every agent answers a
// answerChars-character answer with two files on its first step, then votes
// for the first name it may vote for: four agents agree at once.
func bigTeamServer(t testing.TB, answerChars int) *Server {
	t.Helper()
	step := providers.Func(func(ctx context.Context, req providers.Request) (providers.Action, providers.Usage, error) {
		u := providers.Usage{Input: 30_000, Output: int64(answerChars / 4)}
		if len(req.VoteEnum) == 0 || req.StepNumber == 1 {
			files := []providers.AnswerFile{{Path: "README.md", Content: "# " + req.AgentID + "\n"}, {Path: "src/key.go", Content: "package key // " + req.AgentID + "\n"}, {Path: "docs/my notes%.md", Content: "notes of " + req.AgentID}}
			// A link out of the workspace: the snapshot keeps it as a
			// link, and no resource may follow it.
			if err := os.Symlink("../../../../session.json", filepath.Join(req.Workspace, "escape.json")); err != nil && !errors.Is(err, os.ErrExist) {
				return providers.Action{}, providers.Usage{}, err
			}
			return providers.Action{Calls: []providers.ToolCall{providers.NewAnswerFilesCall(longAnswer(req.AgentID, answerChars), files)}}, u, nil
		}
		return providers.Action{Calls: []providers.ToolCall{providers.VoteCall(req.VoteEnum[0], "It covers every case the others cover, and names the trade-offs.")}}, u, nil
	})
	open := func(providers.Spec) (providers.Provider, error) { return step, nil }
	svc := coordination.NewService(filestore.New(t.TempDir()), coordination.Options{Open: open, Backends: backends.Config{}.Report, Logger: zerolog.Nop(), Reviews: checkpoint.Reviews{}})
	return New(svc, Options{ValidateOutput: true})
}

// resultSize is a tool result's size in characters: its text blocks, and
// its structured content as JSON.
func resultSize(t testing.TB, res *mcpgo.CallToolResult) (textChars, structuredChars int) {
	t.Helper()
	body, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return len([]rune(text(res))), len([]rune(string(body)))
}

// links are a result's resource links.
func links(res *mcpgo.CallToolResult) []mcpgo.ResourceLink {
	var out []mcpgo.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(mcpgo.ResourceLink); ok {
			out = append(out, l)
		}
	}
	return out
}

// readAny reads a resource's text, or its blob decoded.
func readAny(t *testing.T, c interface {
	ReadResource(context.Context, mcpgo.ReadResourceRequest) (*mcpgo.ReadResourceResult, error)
}, uri string) string {
	t.Helper()
	var req mcpgo.ReadResourceRequest
	req.Params.URI = uri
	res, err := c.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatalf("the link %s does not resolve: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("%s: %d contents", uri, len(res.Contents))
	}
	tc, ok := res.Contents[0].(mcpgo.TextResourceContents)
	if !ok {
		t.Fatalf("%s: not text: %T", uri, res.Contents[0])
	}
	return tc.Text
}

// TestFourLongAnswersFitAContextWindowAndNothingIsLost: four agents with
// 20,000-character answers. run_team's and team_status's results fit
// briefText and briefStructured, carry each answer's text at most once,
// and every resource link resolves to the whole content detail "full"
// returns: every answer, the final answer, the timeline, the winner's files.
func TestFourLongAnswersFitAContextWindowAndNothingIsLost(t *testing.T) {
	c := inProcess(t, bigTeamServer(t, 20_000), false)
	brief := callTool(t, c, "run_team", `{"task":"Design a cache key scheme.","models":["sim","sim","sim","sim"],"wait":true,"session_id":"big"}`)
	var full coordination.TeamResult
	fullRes := callTool(t, c, "run_team", `{"session_id":"big","detail":"full"}`)
	decode(t, fullRes, &full)
	if full.Status != coordination.StatusFinished || full.Winner == nil || len(full.Answers) != 4 || full.FilesCount != 4 {
		t.Fatalf("the full result: status %s, %d answers, %d files", full.Status, len(full.Answers), full.FilesCount)
	}
	for _, a := range full.Answers {
		if len(a.Content) != 20_000 {
			t.Fatalf("detail full cut answer %s to %d characters", a.Label, len(a.Content))
		}
	}
	ft, fs := resultSize(t, fullRes)
	whole, _ := json.Marshal(fullRes)
	t.Logf("run_team detail full: text %d, structured %d characters; %d as sent", ft, fs, len([]rune(string(whole))))

	status := callTool(t, c, "team_status", `{"session_id":"big"}`)
	statusFull := callTool(t, c, "team_status", `{"session_id":"big","detail":"full"}`)
	st, ss := resultSize(t, statusFull)
	t.Logf("team_status detail full: text %d, structured %d characters", st, ss)

	for name, res := range map[string]*mcpgo.CallToolResult{"run_team": brief, "team_status": status} {
		tc, sc := resultSize(t, res)
		whole, _ := json.Marshal(res)
		t.Logf("%s brief: text %d, structured %d characters, %d links; %d characters as sent", name, tc, sc, len(links(res)), len([]rune(string(whole))))
		if tc > briefText || sc > briefStructured {
			t.Errorf("%s: text %d characters (at most %d), structured %d (at most %d)", name, tc, briefText, sc, briefStructured)
		}
		body, _ := json.Marshal(res.StructuredContent)
		for _, a := range full.Answers {
			// Each answer's opening words, JSON-escaped as they would be.
			probe, _ := json.Marshal(a.Content[:60])
			if n := strings.Count(string(body), strings.Trim(string(probe), `"`)); n > 1 {
				t.Errorf("%s: answer %s is in the structured content %d times", name, a.Label, n)
			}
		}
		// Every link resolves, and together they hold everything.
		read := map[string]string{}
		for _, l := range links(res) {
			read[l.URI] = readAny(t, c, l.URI)
			if l.Size != nil && int(*l.Size) != len(read[l.URI]) {
				t.Errorf("%s: link %s says %d bytes, reads %d", name, l.URI, *l.Size, len(read[l.URI]))
			}
		}
		if got := read[finalURI("big")]; got != *full.FinalAnswer {
			t.Errorf("%s: the final answer link reads %d characters, want the whole %d", name, len(got), len(*full.FinalAnswer))
		}
		for _, a := range full.Answers {
			if got := read[answerURI("big", a.Label)]; got != a.Content {
				t.Errorf("%s: the link of answer %s reads %d characters, want the whole %d", name, a.Label, len(got), len(a.Content))
			}
		}
		var evs struct {
			Events []coordination.Event `json:"events"`
		}
		if err := json.Unmarshal([]byte(read[eventsURI("big")]), &evs); err != nil || len(evs.Events) < 10 {
			t.Errorf("%s: the timeline link: %v, %d events", name, err, len(evs.Events))
		}
	}

	// The winner's files: every one the full result lists is linked and
	// reads whole; none reads through the link out of the workspace.
	read := map[string]string{}
	for _, l := range links(brief) {
		read[l.URI] = readAny(t, c, l.URI)
	}
	label := full.Winner.Label
	if !strings.Contains(read[filesURI("big", label)], `"src/key.go"`) {
		t.Errorf("the files link lists %s", read[filesURI("big", label)])
	}
	for _, f := range full.Files {
		uri := fileURI("big", label, f.Path)
		if f.Path == "escape.json" {
			if _, ok := read[uri]; ok {
				t.Errorf("a link out of the workspace is linked: %s", uri)
			}
			continue
		}
		if got, ok := read[uri]; !ok || !strings.Contains(got, full.Winner.AgentID) {
			t.Errorf("file %s: linked %v, reads %q", f.Path, ok, got)
		}
	}
	// The text points to everything it cut.
	txt := text(brief)
	for _, want := range []string{finalURI("big"), eventsURI("big"), filesURI("big", label), `detail: "full"`, "| voter |"} {
		if !strings.Contains(txt, want) {
			t.Errorf("run_team's text does not say %q:\n%s", want, txt)
		}
	}
	for _, a := range full.Answers {
		if a.Label != label && !strings.Contains(txt, answerURI("big", a.Label)) {
			t.Errorf("run_team's text has no line for answer %s:\n%s", a.Label, txt)
		}
	}
}

// TestFilesOfAnAnswerNeverLeaveItsSnapshot: a path that climbs out of the
// winner's snapshot, spelt plainly, escaped or absolute, and a symlink the
// agent left in it, are refused; another session's label is not found.
func TestFilesOfAnAnswerNeverLeaveItsSnapshot(t *testing.T) {
	c := inProcess(t, bigTeamServer(t, 100), false)
	var res coordination.TeamResult
	decode(t, callTool(t, c, "run_team", `{"task":"t","models":["sim","sim"],"wait":true,"session_id":"s","detail":"full"}`), &res)
	base := filesURI("s", res.Winner.Label)
	if got := readAny(t, c, fileURI("s", res.Winner.Label, "docs/my notes%.md")); got != "notes of "+res.Winner.AgentID {
		t.Fatalf("a path with a space and a %%: %q", got)
	}
	for _, uri := range []string{
		base + "/../../../session.json",
		base + "/%2e%2e/%2e%2e/session.json",
		base + "/%2F..%2F..%2Fsession.json",
		base + "//etc/passwd",
		base + "/escape.json",
	} {
		var req mcpgo.ReadResourceRequest
		req.Params.URI = uri
		got, err := c.ReadResource(context.Background(), req)
		if err == nil {
			t.Errorf("%s was served: %+v", uri, got.Contents)
		}
	}
}

// TestTeamStatusSinceSendsOnlyWhatChanged: a status carries a cursor; the
// next team_status{since: cursor} sends the agents whose rows changed, the
// result only when it changed, and the events after the cursor's, and
// nothing at all when nothing changed. A cursor of another session, or not
// one at all, is refused with what to do.
func TestTeamStatusSinceSendsOnlyWhatChanged(t *testing.T) {
	c := inProcess(t, bigTeamServer(t, 5_000), false)
	var started startTeamResult
	decode(t, callTool(t, c, "start_team", `{"task":"t","models":["sim","sim","sim"],"session_id":"poll"}`), &started)
	decode(t, callTool(t, c, "start_team", `{"task":"t","models":["sim","sim"],"session_id":"other"}`), &startTeamResult{})

	var first StatusView
	decode(t, callTool(t, c, "team_status", `{"session_id":"poll"}`), &first)
	if first.Cursor == "" || first.Partial || first.Rules == nil || len(first.Agents) != 3 {
		t.Fatalf("the first status: cursor %q, partial %v, rules %v, %d agents", first.Cursor, first.Partial, first.Rules, len(first.Agents))
	}

	same := callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": "poll", "since": first.Cursor}))
	var none StatusView
	decode(t, same, &none)
	if !none.Partial || none.Result != nil || len(none.Agents) != 0 || len(none.Timeline) != 0 || none.Rules != nil || none.Task != "" || none.Cursor != first.Cursor {
		t.Errorf("nothing changed, yet since sent %+v", none)
	}
	if !strings.Contains(text(same), "Nothing changed.") {
		t.Errorf("nothing changed, yet the text says:\n%s", text(same))
	}

	decode(t, callTool(t, c, "step", `{"session_id":"poll","agent_id":"agent_b"}`), &StepResult{})
	changed := callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": "poll", "since": first.Cursor}))
	var delta StatusView
	decode(t, changed, &delta)
	if !delta.Partial || delta.Result == nil || delta.Result.Steps != 1 || delta.Cursor == first.Cursor {
		t.Fatalf("after a step: partial %v, result %+v, cursor moved %v", delta.Partial, delta.Result, delta.Cursor != first.Cursor)
	}
	// agent_b's row changed; any other sent must differ from its first row.
	before := map[string]string{}
	for _, a := range first.Agents {
		before[a.ID] = mustJSON(a)
	}
	sent := map[string]bool{}
	for _, a := range delta.Agents {
		sent[a.ID] = true
		if mustJSON(a) == before[a.ID] {
			t.Errorf("agent %s's row did not change, yet it was sent", a.ID)
		}
	}
	if !sent["agent_b"] {
		t.Errorf("agent_b stepped, yet its row was not sent: %+v", delta.Agents)
	}
	if delta.TimelineCount != first.TimelineCount+len(delta.Timeline) || len(delta.Timeline) == 0 {
		t.Errorf("the new events: %d sent, %d in all, %d before", len(delta.Timeline), delta.TimelineCount, first.TimelineCount)
	}
	for _, e := range delta.Timeline {
		if e.Type == "session_created" {
			t.Errorf("an event the cursor had seen was sent again: %+v", e)
		}
	}
	if !strings.Contains(text(changed), "agent_b") || !strings.Contains(text(changed), "New events") {
		t.Errorf("the changes' text:\n%s", text(changed))
	}
	again := callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": "poll", "since": delta.Cursor}))
	var after StatusView
	decode(t, again, &after)
	if after.Result != nil || len(after.Agents) != 0 || len(after.Timeline) != 0 {
		t.Errorf("polling with the new cursor sent again %+v", after)
	}

	wantError(t, callTool(t, c, "team_status", mustJSON(map[string]any{"session_id": "other", "since": first.Cursor})), "bad_input", "another session's", "without since")
	wantError(t, callTool(t, c, "team_status", `{"session_id":"poll","since":"yesterday"}`), "bad_input", "not a cursor", "without since")
}

// TestResourceLinksOnlyForClientsThatKnowThem: a client on a protocol from
// before resource_link (2025-03-26) gets none, the text still naming every
// URI; a 2025-06-18 client gets them.
func TestResourceLinksOnlyForClientsThatKnowThem(t *testing.T) {
	s := bigTeamServer(t, 3_000)
	for _, tc := range []struct {
		version string
		links   bool
	}{{"2025-03-26", false}, {"2025-06-18", true}} {
		c, err := client.NewInProcessClientWithOptions(s.MCPServer(), client.WithProtocolVersion(tc.version))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		var init mcpgo.InitializeRequest
		init.Params.ClientInfo = mcpgo.Implementation{Name: "old", Version: "0"}
		init.Params.ProtocolVersion = tc.version
		if _, err := c.Initialize(ctx, init); err != nil {
			t.Fatal(err)
		}
		res := callTool(t, c, "run_team", mustJSON(map[string]any{"task": "t", "models": []string{"sim", "sim"}, "wait": true, "session_id": "v" + strings.ReplaceAll(tc.version, "-", "")}))
		if got := len(links(res)); (got > 0) != tc.links {
			t.Errorf("protocol %s: %d resource links", tc.version, got)
		}
		if !strings.Contains(text(res), "massgen://sessions/") {
			t.Errorf("protocol %s: the text names no resource:\n%s", tc.version, text(res))
		}
		c.Close()
	}
}

// TestSixteenAgentsStillFitTheText: the cuts go on shrinking where the team,
// not the answers, is large. Sixteen agents' rows in a status are beyond
// 8,000 characters of structured content on their own (about 500 each with
// usage and vote), which no cut of the answers changes; that is logged.
func TestSixteenAgentsStillFitTheText(t *testing.T) {
	if testing.Short() {
		t.Skip("sixteen agents with long answers")
	}
	c := inProcess(t, bigTeamServer(t, 20_000), false)
	models := mustJSON(slices.Repeat([]string{"sim"}, 16))
	res := callTool(t, c, "run_team", `{"task":"t","models":`+models+`,"wait":true,"session_id":"b16"}`)
	tc, sc := resultSize(t, res)
	t.Logf("run_team, 16 agents: text %d, structured %d characters", tc, sc)
	if tc > briefText || sc > briefStructured {
		t.Errorf("run_team with 16 agents: text %d, structured %d", tc, sc)
	}
	st := callTool(t, c, "team_status", `{"session_id":"b16"}`)
	tc, sc = resultSize(t, st)
	t.Logf("team_status, 16 agents: text %d, structured %d characters", tc, sc)
	if tc > briefText {
		t.Errorf("team_status with 16 agents: text %d", tc)
	}
}
