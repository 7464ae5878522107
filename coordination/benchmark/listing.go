package benchmark

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// ListingReport is one benchmark run in several listing orders of the team:
// what the order alone moves (issue 30's robustness goal).
type ListingReport struct {
	Listings [][]int
	Reports  []*QualityReport
	Rows     []ListingRow
}

// ListingRow is one protocol over the listings.
type ListingRow struct {
	Protocol, Title string
	// Mean, Min and Max accuracy over the listings; Spread is Max − Min.
	Mean, Min, Max, Spread float64
	// Tokens is the mean tokens per item over the listings.
	Tokens float64
	// VsSingle is the mean paired Δ against the best single agent; Worst
	// the lowest of the listings' Δ, and WorstLo its paired CI's low end.
	VsSingle, Worst, WorstLo float64
	// SingleHalf is the best single agent's CI half-width (the goal's bar).
	SingleHalf float64
}

// Orders returns the listing orders of k members to run: all of them when
// n ≥ k!, else the lineup's own order and n−1 others drawn from the seed
// without repeats.
func Orders(k, n int, seed int64) [][]int {
	var all [][]int
	var perm func(prefix []int, rest []int)
	perm = func(prefix, rest []int) {
		if len(rest) == 0 {
			all = append(all, slices.Clone(prefix))
			return
		}
		for i := range rest {
			next := slices.Concat(rest[:i:i], rest[i+1:])
			perm(append(prefix, rest[i]), next)
		}
	}
	ids := make([]int, k)
	for i := range ids {
		ids[i] = i
	}
	perm(nil, ids)
	if n >= len(all) {
		return all
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x6c697374)) // "list"
	rest := all[1:]
	r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	return append([][]int{all[0]}, rest[:n-1]...)
}

// QualityListings runs the benchmark once per listing order and summarizes
// each protocol across them.
func QualityListings(ctx context.Context, cfg QualityConfig, orders [][]int) (*ListingReport, error) {
	out := &ListingReport{Listings: orders}
	for _, o := range orders {
		c := cfg
		c.Listing = o
		rep, err := Quality(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("listing %v: %w", o, err)
		}
		out.Reports = append(out.Reports, rep)
	}
	first := out.Reports[0]
	for _, row := range first.Rows {
		lr := ListingRow{Protocol: row.Protocol, Title: row.Title, Min: math.Inf(1), Max: math.Inf(-1), Worst: math.Inf(1)}
		for _, rep := range out.Reports {
			r, _ := rep.Row(row.Protocol)
			lr.Mean += r.Accuracy
			lr.Min, lr.Max = min(lr.Min, r.Accuracy), max(lr.Max, r.Accuracy)
			lr.Tokens += r.Tokens
			lr.VsSingle += r.VsSingle
			if r.VsSingle < lr.Worst {
				lr.Worst, lr.WorstLo = r.VsSingle, r.VsSingleLo
			}
			if s, ok := rep.Row(ProtoSingle); ok {
				lr.SingleHalf = max(lr.SingleHalf, (s.AccHi-s.AccLo)/2)
			}
		}
		k := float64(len(out.Reports))
		lr.Mean, lr.Tokens, lr.VsSingle = lr.Mean/k, lr.Tokens/k, lr.VsSingle/k
		lr.Spread = lr.Max - lr.Min
		out.Rows = append(out.Rows, lr)
	}
	return out, nil
}

// Markdown writes the listing table and each listing's accuracies.
func (l *ListingReport) Markdown(w io.Writer) error {
	var b strings.Builder
	first := l.Reports[0]
	var orders []string
	for _, o := range l.Listings {
		var names []string
		for _, m := range o {
			names = append(names, first.Members[m])
		}
		orders = append(orders, strings.Join(names, " · "))
	}
	fmt.Fprintf(&b, "Listing orders (%d): %s.\n\n", len(l.Listings), strings.Join(orders, "; "))
	b.WriteString("| protocol | accuracy, mean over listings | min – max (spread) | Δ vs best single, mean | worst listing's Δ (CI low) | tokens/item |\n|---|---|---|---|---|---|\n")
	for _, r := range l.Rows {
		fmt.Fprintf(&b, "| %s | %.1f %% | %.1f – %.1f (%.1f pt) | %+.1f pt | %+.1f pt (%+.1f) | %.0f |\n",
			r.Title, 100*r.Mean, 100*r.Min, 100*r.Max, 100*r.Spread, 100*r.VsSingle, 100*r.Worst, 100*r.WorstLo, r.Tokens)
	}
	if len(l.Rows) > 0 {
		fmt.Fprintf(&b, "\nBest single agent's 95 %% CI half-width: ±%.1f pt.\n", 100*l.Rows[0].SingleHalf)
	}
	b.WriteString("\n| protocol |")
	for i := range l.Listings {
		fmt.Fprintf(&b, " L%d |", i+1)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(l.Listings)) + "\n")
	for _, r := range l.Rows {
		fmt.Fprintf(&b, "| %s |", r.Title)
		for _, rep := range l.Reports {
			row, _ := rep.Row(r.Protocol)
			fmt.Fprintf(&b, " %.1f |", 100*row.Accuracy)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
