package specialfile

// Kept is how many left-out paths a Names keeps to name: a snapshot's
// files.json records as many (left_out), and a sentence names fewer still.
const Kept = 20

// Names is what a copy or a walk of a tree left out: the first Kept paths
// it met and how many in all, so what it holds never grows with the tree (a
// directory of a million FIFOs).
type Names struct {
	Paths []string
	N     int
}

// Add counts rel, and keeps it while fewer than Kept are kept.
func (l *Names) Add(rel string) {
	l.N++
	if len(l.Paths) < Kept {
		l.Paths = append(l.Paths, rel)
	}
}

// More is how many were left out beyond the paths kept.
func (l Names) More() int { return l.N - len(l.Paths) }

// Say is LeftOut's sentence for them: "" for none.
func (l Names) Say(dir, done string) string { return LeftOut(dir, l.Paths, l.N, done) }
