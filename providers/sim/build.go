package sim

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/massgen-go/massgen-mcp/providers"
)

// A build task asks for files, not a value: "Build a one-page landing site
// for a bakery", "Write a Python function that …". Given a workspace, a sim
// writes deterministic files for it, reads its peers' snapshots, and votes
// for the most complete deliverable, so the offline demo delivers something
// a user can open and the whole file path is tested without a model.

type buildKind int

const (
	buildNone buildKind = iota
	buildSite
	buildPython
)

var (
	siteTask   = regexp.MustCompile(`(?i)\b(landing|web ?site|web ?page|home ?page|one-page|site|page|html)\b`)
	pythonTask = regexp.MustCompile(`(?i)\b(python|function|module|script|\.py)\b`)
	buildVerb  = regexp.MustCompile(`(?i)\b(build|create|make|write|implement|code|design|scaffold|add)\b`)
	forWhom    = regexp.MustCompile(`(?i)\bfor (?:a |an |the |my |our )?([a-z][a-z' -]{1,40}?)(?:[.,;:!?]|$| that | with | which | in | to )`)
)

// buildTaskKind tells what a task asks the sim to build, if anything.
func buildTaskKind(task string) buildKind {
	if !buildVerb.MatchString(task) {
		return buildNone
	}
	switch {
	case siteTask.MatchString(task):
		return buildSite
	case pythonTask.MatchString(task):
		return buildPython
	}
	return buildNone
}

// siteSections are what a complete landing page has; a sim's first draft
// may miss some (with probability 1 - accuracy), and votes by how many a
// peer's index.html has.
var siteSections = []string{"hero", "menu", "about", "hours", "contact"}

// subject is who the site is for ("bakery"), from the task.
func subject(task string) string {
	if m := forWhom.FindStringSubmatch(task); m != nil {
		return strings.TrimSpace(m[1])
	}
	return "our business"
}

func title(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}

// build is a step on a build task: write the deliverable (complete, or on a
// weak first draft missing parts), else vote for the most complete one, or
// improve on the best when none is complete.
func (s *simulator) build(v *view, kind buildKind) plan {
	complete := itemKey(v.req, s.cfg.seed).rand("correct").Float64() < s.cfg.accuracy
	if !v.canVote || len(v.voteable) == 0 {
		return s.deliver(v, kind, complete, 0)
	}
	best, bestScore := "", -1
	for _, a := range v.voteable { // lowest alias number first: ties keep it
		if sc := score(kind, a); sc > bestScore {
			best, bestScore = a.Alias, sc
		}
	}
	if bestScore < maxScore(kind) && v.canAnswer {
		return s.deliver(v, kind, true, v.req.StepNumber)
	}
	return plan{vote: best, reason: fmt.Sprintf("%s's files are the most complete deliverable (%d of %d parts).", best, bestScore, maxScore(kind))}
}

func maxScore(kind buildKind) int {
	if kind == buildSite {
		return len(siteSections)
	}
	return 2
}

// score is how complete a peer's deliverable is, read from its files.
func score(kind buildKind, a providers.ShownAnswer) int {
	n := 0
	switch kind {
	case buildSite:
		for _, f := range a.Files {
			if f.Path == "index.html" {
				for _, sec := range siteSections {
					if strings.Contains(f.Content, `id="`+sec+`"`) {
						n++
					}
				}
			}
		}
	case buildPython:
		for _, f := range a.Files {
			switch {
			case f.Path == "solution.py" && strings.Contains(f.Content, "def solve"):
				n++
			case f.Path == "test_solution.py" && strings.Contains(f.Content, "def test_"):
				n++
			}
		}
	}
	return n
}

// deliver writes the files and the answer that says where they are.
func (s *simulator) deliver(v *view, kind buildKind, complete bool, revision int) plan {
	var files []providers.AnswerFile
	var text string
	switch kind {
	case buildSite:
		who := subject(v.req.Task)
		sections := siteSections
		if !complete {
			drop := v.key.rand("drop").IntN(len(siteSections)-1) + 1 // never the hero
			sections = append(append([]string{}, siteSections[:drop]...), siteSections[drop+1:]...)
		}
		files = []providers.AnswerFile{{Path: "index.html", Content: sitePage(who, sections)}, {Path: "style.css", Content: siteStyle}}
		text = fmt.Sprintf("[simulated] A one-page site for the %s: index.html (%s) with style.css. Open index.html in a browser; it needs no build step.",
			who, strings.Join(sections, ", "))
	case buildPython:
		files = []providers.AnswerFile{{Path: "solution.py", Content: fmt.Sprintf(pythonSolution, strings.ReplaceAll(v.req.Task, `"""`, `'''`))}}
		parts := "solution.py"
		if complete {
			files = append(files, providers.AnswerFile{Path: "test_solution.py", Content: pythonTest})
			parts += " and its test, test_solution.py (run: python -m pytest)"
		}
		text = "[simulated] The function is in " + parts + "."
	}
	if revision > 0 {
		text += fmt.Sprintf(" Revision %d by %s: completes the parts the team's drafts missed.", revision, v.name())
	}
	return plan{answer: firstFree([]string{text}, v.taken, v.req.StepNumber, v.req.Attempt), files: files}
}

func sitePage(who string, sections []string) string {
	name := title(who)
	body := map[string]string{
		"hero":    fmt.Sprintf("  <header id=\"hero\">\n    <h1>%s</h1>\n    <p>Fresh from our oven every morning.</p>\n    <a class=\"button\" href=\"#contact\">Visit us</a>\n  </header>\n", name),
		"menu":    "  <section id=\"menu\">\n    <h2>Menu</h2>\n    <ul>\n      <li>Sourdough loaf</li>\n      <li>Butter croissant</li>\n      <li>Seasonal fruit tart</li>\n    </ul>\n  </section>\n",
		"about":   fmt.Sprintf("  <section id=\"about\">\n    <h2>About</h2>\n    <p>%s is a neighbourhood place: small batches, local flour, no shortcuts.</p>\n  </section>\n", name),
		"hours":   "  <section id=\"hours\">\n    <h2>Hours</h2>\n    <p>Tuesday to Sunday, 7:00 to 15:00.</p>\n  </section>\n",
		"contact": "  <footer id=\"contact\">\n    <h2>Contact</h2>\n    <p>12 Market Street · hello@example.com</p>\n  </footer>\n",
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n  <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n  <title>%s</title>\n  <link rel=\"stylesheet\" href=\"style.css\">\n</head>\n<body>\n", name)
	for _, sec := range sections {
		b.WriteString(body[sec])
	}
	b.WriteString("</body>\n</html>\n")
	return b.String()
}

const siteStyle = `body { margin: 0; font-family: Georgia, serif; color: #3b2a1a; background: #fffaf3; }
header, section, footer { max-width: 40rem; margin: 0 auto; padding: 2rem 1rem; }
header { text-align: center; }
.button { display: inline-block; padding: .6rem 1.2rem; background: #b5651d; color: #fff; border-radius: .3rem; text-decoration: none; }
`

const pythonSolution = `"""[simulated] %s"""


def solve(value):
    """Return the task's result for value (a simulated placeholder)."""
    return value
`

const pythonTest = `from solution import solve


def test_solve_returns_its_input():
    assert solve(3) == 3
`
