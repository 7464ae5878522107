package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchQualityWritesTableCSVAndPlot(t *testing.T) {
	dir := t.TempDir()
	csvPath, pngPath := filepath.Join(dir, "q.csv"), filepath.Join(dir, "q.png")
	out, code := cli(t, "quality", "--items", "5", "--seed", "2", "--lineup", "0.9,0.8,0.7", "--rho", "0.5",
		"--protocols", "single,vote,ours,ours+early", "--prices", "1/2,3/4", "--csv", csvPath, "--plot", pngPath)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"| best single agent |", "| round-0 plurality vote |", "| ours (defaults) |", "| ours + short + early stop |", "p=0.9", "($3/$4 per 1M)", "Oracle"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	body, err := os.ReadFile(csvPath)
	if err != nil || strings.Count(string(body), "\n") != 5 {
		t.Errorf("CSV %q: %v", body, err)
	}
	if img, err := os.ReadFile(pngPath); err != nil || !strings.HasPrefix(string(img), "\x89PNG") {
		t.Errorf("plot: %v", err)
	}
}

func TestBenchQualityReplaysGSM8K(t *testing.T) {
	out, code := cli(t, "quality", "--data", "gsm8k", "--items", "4", "--lineup", "175b_verification,6b_finetuning", "--protocols", "single,vote,sc,ours")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "4 gsm8k") || !strings.Contains(out, "175b_verification") || !strings.Contains(out, "self-consistency of the best agent not run") {
		t.Errorf("output:\n%s", out)
	}
}

func TestBenchQualityRefusesBadFlagsWithTheFix(t *testing.T) {
	for _, args := range [][]string{
		{"--lineup", "0.9,high"},
		{"--lineup", "0.9,1.5"},
		{"--protocols", "debate"},
		{"--prices", "3-15"},
		{"--rho", "1"},
		{"--data", "/no/such/file.jsonl"},
	} {
		out, code := cli(t, append([]string{"quality", "--items", "2"}, args...)...)
		if code != 1 || !strings.Contains(out, "error:") {
			t.Errorf("%v: exit %d:\n%s", args, code, out)
		}
	}
}

func TestBenchOverheadReportsEveryMeasurement(t *testing.T) {
	out, code := cli(t, "overhead", "--steps", "10", "--latency", "20ms", "--runs", "1", "--sessions", "20",
		"--session-latency", "50ms", "--session-runs", "2", "--throughput", "200ms", "--concurrent", "2", "--dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"20 concurrent sessions", "peak RSS", "| cold |", "| warm 2 |", "| median of the warm runs |", "GOGC=", "steps landing late (p99)", "| memory |", "| file |", "ours / parallel ideal", "one model at a time / ours", "steps/s", "| team_status |", "| step (server step"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchSnapshotReportsEveryRow(t *testing.T) {
	out, code := cli(t, "snapshot", "--files", "40", "--mb", "1", "--changed", "0,4,40", "--runs", "2", "--dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"40 files, 1 MB", "| 0 | ", "| 4 | ", "| 40 | ", "against the first, full snapshot", "per changed file"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if out, code := cli(t, "snapshot", "--files", "4", "--changed", "9"); code != 1 || !strings.Contains(out, "--changed") {
		t.Errorf("bad --changed: exit %d\n%s", code, out)
	}
}
