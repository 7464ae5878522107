package benchmark

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Markdown writes the quality table and the notes that read it.
func (r *QualityReport) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Items: %d %s, seed %d. Agents (first-answer accuracy on these items):", r.Items, r.Data, r.Seed)
	for m, name := range r.Members {
		fmt.Fprintf(&b, " %s %.1f %%", name, 100*r.Accuracy[m])
		if m < len(r.Prices) {
			fmt.Fprintf(&b, " ($%g/$%g per 1M)", r.Prices[m].In, r.Prices[m].Out)
		}
		if m < len(r.Members)-1 {
			b.WriteString(";")
		}
	}
	b.WriteString(".\n")
	if r.Data == "synthetic" {
		fmt.Fprintf(&b, "Item model: rho %g, sample rho %g, %d options, attractor %g. ", r.Model.Rho, max(r.Model.SampleRho, r.Model.Rho), r.Model.Options, r.Model.Attractor)
	}
	bh := r.Behaviour
	fmt.Fprintf(&b, "Sim behaviour: conformity %g, truth bias %g, self bias %g, position bias %g, revise %g.\n", bh.Conformity, bh.TruthBias, bh.SelfBias, bh.PositionBias, bh.Revise)
	fmt.Fprintf(&b, "Oracle (some agent right in round 0): %.1f %%.", 100*r.Oracle)
	if r.SCSamples > 0 {
		fmt.Fprintf(&b, " Self-consistency uses k = %d samples of the best agent (ours' tokens per item).", r.SCSamples)
	}
	b.WriteString("\n\n")
	b.WriteString("| protocol | accuracy (95 % CI) | Δ vs best single (paired 95 % CI) | Δ vs round-0 vote (paired 95 % CI) | headroom captured | W→R / R→W | steps | rounds | tokens | cost/item | cost per correct |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		vsSingle, vsVote := delta(row.VsSingle, row.VsSingleLo, row.VsSingleHi), delta(row.VsVote, row.VsVoteLo, row.VsVoteHi)
		switch row.Protocol {
		case ProtoSingle:
			vsSingle = "(reference)"
		case ProtoVote:
			vsVote = "(reference)"
		}
		fmt.Fprintf(&b, "| %s | %.1f %% (%.1f–%.1f) | %s | %s | %s | %d / %d | %.1f | %.1f | %.0f | %s | %s |\n",
			row.Title, 100*row.Accuracy, 100*row.AccLo, 100*row.AccHi, vsSingle, vsVote,
			pct(row.Headroom), row.WrongToRight, row.RightToWrong, row.Steps, row.Rounds, row.Tokens, usd(row.Cost), usd(row.CostPerCorrect))
	}
	var notes []string
	// The comparisons that choose settings, item by item on the same seeds.
	for _, pair := range [][2]string{{ProtoOurs, ProtoMassGen}, {ProtoOursEarly, ProtoOurs}, {ProtoMassGenEarly, ProtoMassGen}, {ProtoOurs, ProtoSC}, {ProtoMassGen, ProtoSC}} {
		a, okA := r.Row(pair[0])
		b, okB := r.Row(pair[1])
		if !okA || !okB {
			continue
		}
		d, lo, hi := pairedDiff(a.Correct, b.Correct)
		notes = append(notes, fmt.Sprintf("%s against %s: %s at %.2f× the cost.", a.Title, b.Title, delta(d, lo, hi), a.Cost/b.Cost))
	}
	for _, row := range r.Rows {
		if row.EarlyShare > 0 {
			notes = append(notes, fmt.Sprintf("%s ended %.0f %% of items by early agreement.", row.Title, 100*row.EarlyShare))
		}
		if row.RevoteShare > 0 {
			notes = append(notes, fmt.Sprintf("%s went to a re-vote on %.1f %% of items; there the re-vote changed accuracy by %+.1f pt against deciding on the votes standing before it.",
				row.Title, 100*row.RevoteShare, 100*row.RevoteGain))
		}
	}
	for p, why := range r.Skipped {
		notes = append(notes, fmt.Sprintf("%s not run: %s.", protocolTitles[p], why))
	}
	if len(notes) > 0 {
		b.WriteString("\n")
		for _, n := range notes {
			b.WriteString("- " + n + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func delta(d, lo, hi float64) string {
	if math.IsNaN(d) {
		return "–"
	}
	return fmt.Sprintf("%+.1f pt (%+.1f, %+.1f)", 100*d, 100*lo, 100*hi)
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.0f %%", 100*x)
}

func usd(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("$%.5f", x)
}

// CSV writes one line per protocol with every number of the table.
func (r *QualityReport) CSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"protocol", "title", "data", "items", "seed", "accuracy", "acc_lo", "acc_hi",
		"vs_single", "vs_single_lo", "vs_single_hi", "vs_vote", "vs_vote_lo", "vs_vote_hi", "headroom",
		"wrong_to_right", "right_to_wrong", "steps", "rounds", "tokens", "cost_usd", "cost_per_correct_usd",
		"early_share", "revote_share", "revote_gain", "oracle", "sc_samples"}
	if err := cw.Write(head); err != nil {
		return err
	}
	f := func(x float64) string {
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', 6, 64)
	}
	for _, row := range r.Rows {
		rec := []string{row.Protocol, row.Title, r.Data, strconv.Itoa(row.N), strconv.FormatInt(r.Seed, 10),
			f(row.Accuracy), f(row.AccLo), f(row.AccHi), f(row.VsSingle), f(row.VsSingleLo), f(row.VsSingleHi),
			f(row.VsVote), f(row.VsVoteLo), f(row.VsVoteHi), f(row.Headroom),
			strconv.Itoa(row.WrongToRight), strconv.Itoa(row.RightToWrong), f(row.Steps), f(row.Rounds), f(row.Tokens),
			f(row.Cost), f(row.CostPerCorrect), f(row.EarlyShare), f(row.RevoteShare), f(row.RevoteGain), f(r.Oracle), strconv.Itoa(r.SCSamples)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
