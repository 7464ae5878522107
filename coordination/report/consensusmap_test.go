package report_test

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/report"
)

// TestConsensusMapMatchesItsGolden pins the consensus map of the rich view:
// three agents, a standing vote agent_a → agent_b (the winner), a stale one
// agent_c → agent_a.
func TestConsensusMapMatchesItsGolden(t *testing.T) {
	got := report.ConsensusMapSVG(richView())
	if again := report.ConsensusMapSVG(richView()); again != got {
		t.Fatal("two renderings of one view differ: the map must be deterministic")
	}
	path := filepath.Join("testdata", "consensusmap.golden.svg")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test ./coordination/report -run ConsensusMap -update rewrites it; review the diff):\n%s", path, got)
	}
	for _, s := range []string{
		`class="cm-vote cm-standing" data-voter="agent_a" data-target="agent_b"`,
		`class="cm-vote cm-stale" data-voter="agent_c" data-target="agent_a"`,
		`cm-winner" data-agent="agent_b"`,
		`★ agent_b`,
	} {
		if !strings.Contains(got, s) {
			t.Errorf("the map lacks %q", s)
		}
	}
}

// TestConsensusMapEscapesWhatAgentsAndModelsSay feeds markup and control
// characters through every text the map shows: it must stay one well-formed
// SVG with no element or attribute the input smuggled in.
func TestConsensusMapEscapesWhatAgentsAndModelsSay(t *testing.T) {
	evil := `<script>alert(1)</script>" onload="x`
	v := &coordination.StatusView{
		Result: &coordination.TeamResult{Consensus: coordination.ConsensusView{Rule: coordination.RuleMajority}},
		Agents: []coordination.AgentStatus{
			{ID: "a&b", Model: evil, Status: "voted\x00<b>", LatestLabel: "agent1.1", StandingVote: true, Vote: &coordination.VoteView{Target: "a&b", TargetLabel: "agent1.1"}},
			{ID: `q"x`, Model: "sim\x1b[31m", Status: "answered", LatestLabel: "agent2.1"},
		},
	}
	got := report.ConsensusMapSVG(v)
	for _, bad := range []string{"<script", "\x00", "\x1b", "<b>"} {
		if strings.Contains(got, bad) {
			t.Errorf("the map carries %q unescaped:\n%s", bad, got)
		}
	}
	d := xml.NewDecoder(strings.NewReader(got))
	elements := map[string]bool{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the map is not well-formed XML: %v\n%s", err, got)
		}
		if se, ok := tok.(xml.StartElement); ok {
			elements[se.Name.Local] = true
			for _, a := range se.Attr {
				if strings.HasPrefix(a.Name.Local, "on") {
					t.Errorf("attribute %s on <%s>", a.Name.Local, se.Name.Local)
				}
			}
		}
	}
	for e := range elements {
		switch e {
		case "svg", "title", "defs", "marker", "path", "g", "rect", "text":
		default:
			t.Errorf("unexpected element <%s>", e)
		}
	}
	if !strings.Contains(got, `data-voter="a&amp;b" data-target="a&amp;b"`) {
		t.Errorf("a vote for one's own answer draws no loop:\n%s", got)
	}
}

// TestConsensusMapOfSixteenAgentsKeepsNodesApart places 16 agents on the
// ring and checks no two boxes overlap.
func TestConsensusMapOfSixteenAgentsKeepsNodesApart(t *testing.T) {
	v := &coordination.StatusView{Result: &coordination.TeamResult{Consensus: coordination.ConsensusView{Rule: coordination.RuleMajority}}}
	for i := range 16 {
		id := string(rune('a'+i)) + "_agent"
		v.Agents = append(v.Agents, coordination.AgentStatus{ID: id, Model: "sim", Status: "answered"})
	}
	got := report.ConsensusMapSVG(v)
	type box struct{ x, y float64 }
	var boxes []box
	d := xml.NewDecoder(strings.NewReader(got))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			var bx box
			for _, a := range se.Attr {
				var f float64
				if _, err := fmt.Sscan(a.Value, &f); err != nil {
					continue
				}
				switch a.Name.Local {
				case "x":
					bx.x = f
				case "y":
					bx.y = f
				}
			}
			boxes = append(boxes, bx)
		}
	}
	if len(boxes) != 16 {
		t.Fatalf("%d boxes, want 16", len(boxes))
	}
	for i := range boxes {
		for j := i + 1; j < len(boxes); j++ {
			dx, dy := boxes[i].x-boxes[j].x, boxes[i].y-boxes[j].y
			if dx < 0 {
				dx = -dx
			}
			if dy < 0 {
				dy = -dy
			}
			if dx < 176 && dy < 62 {
				t.Errorf("boxes %d and %d overlap: %+v %+v", i, j, boxes[i], boxes[j])
			}
		}
	}
}
