package main

import (
	"context"
	"testing"

	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
)

// TestEveryServiceTheBinaryBuildsOffersReviews: checkpoint reviews are
// passed to each service (Options.Reviews), not installed by linking
// coordination/checkpoint, so every service the binary builds — run's,
// serve's on either store, another tenant's — must be given them: each runs
// a checkpoint to its verdict.
func TestEveryServiceTheBinaryBuildsOffersReviews(t *testing.T) {
	services := binaryServices(t)
	seed := int64(5)
	for name, svc := range services {
		res, err := checkpoint.Run(context.Background(), svc, checkpoint.Spec{
			Objective: "Drop the legacy_orders table from the production database.",
			Models:    []string{"sim", "sim"}, Seed: &seed,
		}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Verdict == nil {
			t.Errorf("%s: the checkpoint ended %s without a verdict", name, res.Status)
		}
	}
}
