package benchmark

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/providers/sim/itemmodel"
)

// TestSeededLedgerDigest prints one digest of every seeded --parallel 1
// ledger the quality benchmark runs (every protocol but the weighted ones, MASSGEN_LEDGER_DIGEST
// items, seed 3): a change to any decision of the engine or the sims changes
// it. MASSGEN_LEDGER_DIGEST_FILE, if set, receives one line per session
// (protocol, item, its own digest, how it ended), so two runs can be diffed
// to see which cases changed. Skipped unless MASSGEN_LEDGER_DIGEST is set.
func TestSeededLedgerDigest(t *testing.T) {
	items, _ := strconv.Atoi(os.Getenv("MASSGEN_LEDGER_DIGEST"))
	if items <= 0 {
		t.Skip("set MASSGEN_LEDGER_DIGEST=<items> (75 gives 450 sessions) to print the ledger digest")
	}
	var mu sync.Mutex
	var lines []string
	// The protocols before issue 30's weighted ones, so that the digest
	// still pins the engine's decisions under the rules they use; the
	// weighted protocols are pinned by their own tests.
	protos := []string{ProtoSingle, ProtoVote, ProtoSC, ProtoMassGen, ProtoOurs, ProtoMassGenEarly, ProtoOursEarly}
	cfg := QualityConfig{Items: items, Seed: 3, Model: itemmodel.DefaultConfig(), Behaviour: DefaultBehaviour(), Workers: 2, Protocols: protos}
	cfg.Ledgers = func(s *coordination.Session, l *coordination.Ledger, res *coordination.TeamResult) {
		// Not the winner: under forced_first it is the earliest answer by
		// millisecond timestamps, which sequential steps can share.
		line := fmt.Sprintf("%s %x %s/%s", caseName(s), ledgerSum(s, l), coordination.Deref(res.StopReason), coordination.Deref(res.HowChosen))
		mu.Lock()
		lines = append(lines, line)
		mu.Unlock()
	}
	if _, err := Quality(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	all := strings.Join(lines, "\n") + "\n"
	t.Logf("%d seeded ledgers, digest %x", len(lines), sha256.Sum256([]byte(all)))
	if f := os.Getenv("MASSGEN_LEDGER_DIGEST_FILE"); f != "" {
		if err := os.WriteFile(f, []byte(all), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// caseName names a session by what makes it a case: its rules and team
// (the protocol) and its seed (the item).
func caseName(s *coordination.Session) string {
	r := s.Rules
	proto := fmt.Sprintf("%s/%s/rounds=%d/%s", r.Consensus, r.Aliases, r.MaxRounds, r.AnswerFormat)
	if r.EarlyStop {
		proto += "/early"
	}
	return fmt.Sprintf("%s/agents=%d/%s seed=%d", proto, len(s.Agents), s.Agents[0].ID, s.Seed)
}

// ledgerSum hashes what the protocol decided: every entry without its times
// and durations, and the session entries' kinds, agents and reasons.
func ledgerSum(s *coordination.Session, l *coordination.Ledger) []byte {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, a := range s.Agents {
		for _, e := range l.Agents[a.ID] {
			e.Time = time.Time{}
			e.DurationSeconds = 0
			_ = enc.Encode(e)
		}
	}
	for _, e := range l.Session {
		_ = enc.Encode([]any{e.Kind, e.Agents, e.Reason})
	}
	return h.Sum(nil)[:8]
}
