package criteria

import (
	"fmt"
	"regexp"
	"strings"
)

// Classify guesses the kind of a task from its words and says which words
// decided it. The rules go from the most telling to the least, and the
// first that matches wins:
//
//  1. a fix in existing code ("fix the failing test", "the page crashes; fix it"): code;
//  2. a source file named ("fizzbuzz.py": code; "index.html": build);
//  3. a script to be spoken ("a script for a video"): writing;
//  4. a piece of a program to make ("write a function", "add a flag to the CLI"): code;
//  5. a text to write ("write the copy for…", "draft an email"): writing;
//  6. a thing to make and use ("build a landing page", "make a snake game"): build;
//  7. the most words of one kind, ties to the earlier of code, plan, analysis, writing;
//  8. a thing to use named without a verb ("a landing page for my bakery"): build;
//  9. else other (questions, sums, ideas).
//
// A heuristic: the kind and its reason are always reported, and a caller
// who disagrees names the kind.
func Classify(task string) (kind, reason string) {
	t := strings.Join(strings.Fields(strings.ToLower(task)), " ")
	if m := fixInCode.FindString(t); m != "" {
		return KindCode, fmt.Sprintf("guessed from %q (a fix in code)", m)
	}
	if name, ext := sourceFileIn(t); name != "" {
		if webFile.MatchString(ext) {
			return KindBuild, fmt.Sprintf("guessed from %q (a web page's file)", name)
		}
		return KindCode, fmt.Sprintf("guessed from %q (a source file)", name)
	}
	for _, r := range deliverables {
		if m := r.pattern.FindString(t); m != "" {
			return r.kind, fmt.Sprintf("guessed from %q (%s)", m, r.what)
		}
	}
	best, bestWords := KindOther, []string(nil)
	for _, kw := range kindWords {
		if found := kw.words.FindAllString(t, -1); len(found) > len(bestWords) {
			best, bestWords = kw.kind, found
		}
	}
	if best != KindOther {
		return best, fmt.Sprintf("guessed from the words %s", quoteAll(bestWords))
	}
	if m := buildThing.FindString(t); m != "" {
		return KindBuild, fmt.Sprintf("guessed from %q (a thing to use)", m)
	}
	return KindOther, "guessed: no words of code, build, writing, analysis or plan in the task"
}

// GuessKind is Classify's kind alone.
func GuessKind(task string) string {
	kind, _ := Classify(task)
	return kind
}

// ResolveKind is the kind a request names (checked), or the guess from its
// task, each with its reason.
func ResolveKind(kind, task string) (string, string, error) {
	k, err := CheckKind(kind)
	if err != nil {
		return "", "", err
	}
	if k != "" {
		return k, "named by the caller", nil
	}
	k, why := Classify(task)
	return k, why, nil
}

func quoteAll(words []string) string {
	seen := map[string]bool{}
	var out []string
	for _, w := range words {
		if !seen[w] {
			seen[w] = true
			out = append(out, fmt.Sprintf("%q", w))
		}
	}
	return strings.Join(out, ", ")
}

// near joins a verb pattern and an object pattern that follows within a few
// words ("write the bash script", "build me a small landing page").
func near(verbs, objects string, words int) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`\b(%s)\b(\s+\S+){0,%d}?\s+(%s)\b`, verbs, words, objects))
}

// fixInCode is a request to mend code that exists: a verb of mending and a
// fault of a program, either way round ("fix the failing test", "it crashes
// on empty input; fix it"), or tests to make pass.
var fixInCode = regexp.MustCompile(`\b(fix|fixes|fixing|debug|repair|patch|resolve|troubleshoot|track down|diagnose)\b.{0,60}?\b(bugs?|crash(es|ed|ing)?|exceptions?|fail(s|ed|ing|ures?)?|broken|breaks|broke|tests?|build|ci|leaks?|regressions?|panics?|segfaults?|merge conflicts?|(compile|compiler|type|runtime|syntax|build|lint|linter|test) (errors?|warnings?)|lint|stack ?traces?)\b` +
	`|\b(bugs?|crash(es|ed|ing)?|exceptions?|fail(s|ed|ing)|broken|breaks|leaks?|regressions?|panics?|segfaults?|stack ?traces?)\b.{0,60}?\b(fix|debug|repair|patch|resolve|track (it|this) down)\b` +
	`|\bmake (the |all |its |our )?(\w+ )?tests? pass\b`)

// sourceFile is a file name with a program's extension; webFile the ones a
// browser opens. Extensions that are also common domains (.pl, .ml) are
// left out.
var (
	sourceFile = regexp.MustCompile(`(?:^|[\s"'(` + "`" + `])((?:[\w.-]+/)*[\w-]+\.(py|go|js|mjs|ts|tsx|jsx|rs|java|kt|swift|rb|php|c|cc|cpp|h|hpp|cs|sh|bash|zsh|ps1|sql|lua|scala|exs|hs|zig|dart|vue|svelte|html?|css|scss|ipynb|ya?ml|toml))\b`)
	webFile    = regexp.MustCompile(`^(html?|css|scss)$`)
	// jsLibrary is a library named like a file (Node.js, Vue.js).
	jsLibrary = regexp.MustCompile(`^(node|vue|next|nuxt|react|three|d3|express|ember|backbone|angular|chart|p5|deno|moment|alpine|solid|svelte|preact|socket\.io|babylon|pixi|phaser)\.js$`)
)

// sourceFileIn is the first source file a task names and its extension.
func sourceFileIn(t string) (name, ext string) {
	for _, m := range sourceFile.FindAllStringSubmatch(t, -1) {
		if !jsLibrary.MatchString(m[1]) {
			return m[1], m[2]
		}
	}
	return "", ""
}

// deliverables are rules 3 to 6, in order: what the task asks to be made.
var deliverables = []struct {
	kind    string
	pattern *regexp.Regexp
	what    string
}{
	{KindWriting, mediaScript, "a script to be spoken"},
	{KindCode, codeDeliverable, "a piece of a program to make"},
	{KindWriting, textDeliverable, "a text to write"},
	{KindBuild, buildDeliverable, "a thing to make and use"},
}

// mediaScript is a script for people to speak, not a program.
var mediaScript = regexp.MustCompile(`\bscripts? for (a|an|the|our|my) (\S+ ){0,2}?(video|film|movie|podcast|play|talk|presentation|ad|commercial|trailer|webinar|youtube)\b`)

// codeDeliverable is a task whose deliverable is code: a verb of making and,
// within a few words, a piece of a program.
var codeDeliverable = near(`write|implement|create|build|code|fix|add|make|refactor|port|rewrite|generate|translate|convert`,
	`code|function|functions|method|class|script|program|module|package|library|cli|endpoint|handler|regex|query|parser|decorator|unit tests?|test suite|tests|flag|migration script|algorithm|struct|interface`, 5)

// textDeliverable is a task whose deliverable is a text: a verb of writing
// and, within a few words, a kind of text.
var textDeliverable = near(`write|draft|rewrite|edit|proofread|polish|translate|summari[sz]e|compose|shorten|tighten`,
	`copy|blog|post|essay|article|email|e-mail|letter|cover letter|story|poem|speech|newsletter|press release|announcement|bio|tagline|headline|slogan|paragraph|sentence|text|summary|readme|docs|documentation|report|review|abstract|caption|description|script for a video|lyrics|toast|eulogy|statement|proposal`, 6)

// buildDeliverable is a task whose deliverable is a thing to open or run and
// use: a verb of making and, within a few words, such a thing.
var buildDeliverable = regexp.MustCompile(near(`build|create|make|develop|design|set up|setup|scaffold|prototype|ship|code|write|generate|put together|spin up|program|deploy`, buildThings, 6).String() +
	// A page one writes is a text ("write a page about our history").
	"|" + near(`build|create|make|develop|design|code|put together`, `page`, 4).String())

// buildThing is such a thing named without a verb; it decides only when no
// other word does ("plan the launch of our landing page" is a plan).
var buildThing = regexp.MustCompile(`\b(landing page|landing site|website|web site|web app|webapp|home ?page|portfolio site|one-page site|single-page app)\b`)

const buildThings = `site|blog|website|web site|landing page|home ?page|web ?page|web ?app|app|application|game|dashboard|tool|bot|chatbot|extension|plugin|add-on|server|service|api|prototype|mvp|ui|frontend|front-end|backend|back-end|portfolio|store|shop|widget|calculator|clone|simulator|visuali[sz]ation|interface`

// kindWords are the words rule 6 counts, matched as whole words.
var kindWords = []struct {
	kind  string
	words *regexp.Regexp
}{
	{KindCode, regexp.MustCompile(`\b(code|coding|function|functions|bug|bugs|implement|implementation|refactor|compile|compiler|script|api|endpoint|unit tests?|with tests|regex|sql|python|golang|javascript|typescript|rust|java|library|pull request|stack trace|debug|program|algorithm|cli|repository|repo|codebase|lru|cache|quicksort|binary search)\b`)},
	{KindPlan, regexp.MustCompile(`\b(plan|planning|roadmap|migration|migrate|schedule|rollout|roll out|strategy|itinerary|timeline|milestones?|launch|checklist|steps to|runbook|agenda|curriculum|syllabus)\b`)},
	{KindAnalysis, regexp.MustCompile(`\b(analy[sz]e|analysis|compare|comparison|evaluate|assess|assessment|why|explain|investigate|data|dataset|trend|trends|root cause|pros and cons|trade-?offs?|estimate|forecast|which|review|audit|risks?|should we)\b`)},
	{KindWriting, regexp.MustCompile(`\b(write|rewrite|essay|blog|post|article|email|letter|story|poem|copy|draft|edit|tweet|speech|headline|cover letter|newsletter|press release|announcement|bio|translate)\b`)},
}
