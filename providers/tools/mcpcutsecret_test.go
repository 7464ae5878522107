package tools

import (
	"strings"
	"testing"
)

// TestAnEchoedSecretCutByTheTrimIsNotShownInPart: shown trims a long
// result to twice the cap before it masks it, which can cut a secret in two
// there, leaving a head masking cannot recognise. When the masking shrinks
// the text below the cap (a result that echoes the secret over and over),
// that head would be kept: no part of the secret may reach the model.
func TestAnEchoedSecretCutByTheTrimIsNotShownInPart(t *testing.T) {
	// Not key-shaped (it has spaces): only the whole of it is masked.
	const secret = "dummy pass phrase, not a real secret"
	s := &mcpServer{name: "env", header: map[string]string{"X-Pass": secret}}
	unit := secret + "\n"
	// The trim at 2*maxMCPResult falls 30 bytes into a copy of the secret.
	n := (2*maxMCPResult - 30) / len(unit)
	pad := 2*maxMCPResult - 30 - n*len(unit)
	text := strings.Repeat("x", pad) + strings.Repeat(unit, n+1)
	out := s.shown(text, s.mask)
	if i := strings.Index(out, secret[:20]); i >= 0 {
		t.Fatalf("the result shows the head of a secret the trim cut, at byte %d of %d: %q", i, len(out), out[i:min(len(out), i+60)])
	}
	if len(out) > maxMCPResult || !strings.Contains(out, "not shown") {
		t.Errorf("the result is %d bytes, ending %q", len(out), out[max(0, len(out)-200):])
	}
}
