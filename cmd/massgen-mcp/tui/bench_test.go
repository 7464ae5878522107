package tui_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/cmd/massgen-mcp/tui"
	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/filestore"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// BenchmarkLiveViewOverhead runs the same team with and without the live
// view (drawing into io.Discard), alternating in one run, and reports the
// wall-time ratio (view/plain: 1.00 means the view costs the run nothing)
// and the frames the view drew per second of run (at most ~10).
func BenchmarkLiveViewOverhead(b *testing.B) {
	ctx := context.Background()
	svc := coordination.NewService(filestore.New(b.TempDir()), coordination.Options{Open: backends.Open, Logger: zerolog.Nop()})
	models := []string{"sim:latency=40ms", "sim:latency=40ms", "sim/weak:latency=40ms", "sim/weak:latency=40ms", "sim/strong:latency=40ms"}
	create := func(seed int64) string {
		s, err := svc.Create(ctx, coordination.TeamSpec{Task: "What is 17 * 23?", Models: models, Seed: &seed})
		if err != nil {
			b.Fatal(err)
		}
		return s.ID
	}
	var plain, viewed time.Duration
	frames := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		seed := int64(i + 1) // the same team both ways
		id := create(seed)
		t0 := time.Now()
		if _, err := svc.Run(ctx, id, nil); err != nil {
			b.Fatal(err)
		}
		plain += time.Since(t0)

		id = create(seed)
		t0 = time.Now()
		o, err := tui.Run(ctx, svc, id, nil, io.Discard)
		if err != nil || o.Err != nil || o.Result == nil {
			b.Fatalf("%v %v", err, o.Err)
		}
		viewed += time.Since(t0)
		frames += o.Frames
	}
	b.ReportMetric(float64(viewed)/float64(plain), "view/plain")
	b.ReportMetric(float64(frames)/viewed.Seconds(), "frames/s")
}
