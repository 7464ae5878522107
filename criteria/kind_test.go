package criteria_test

import (
	"strings"
	"testing"

	"github.com/massgen-go/massgen-mcp/criteria"
)

// kindCases are task phrasings as people write them, by the kind a reviewer
// would judge them as. Code is a program or a change to one; build is a
// thing to open or run and use; fixes in a repository are code; questions
// and sums are other.
var kindCases = []struct{ task, want string }{
	// code
	{"Write fizzbuzz.py with tests", criteria.KindCode},
	{"Write a Go function that parses ISO 8601 durations", criteria.KindCode},
	{"Implement an LRU cache in Rust", criteria.KindCode},
	{"Write a bash script that backs up my home directory", criteria.KindCode},
	{"Add a --verbose flag to the CLI", criteria.KindCode},
	{"Refactor the payment module to use dependency injection", criteria.KindCode},
	{"Create main.go that serves /healthz", criteria.KindCode},
	{"Write a SQL query for the top 10 customers by revenue", criteria.KindCode},
	{"Port this Python 2 code to Python 3", criteria.KindCode},
	{"Write unit tests for the parser", criteria.KindCode},
	{"Implement quicksort", criteria.KindCode},
	{"Translate this Python script to Go", criteria.KindCode},
	{"Write a Python function that formats a blog post's front matter, with tests", criteria.KindCode},
	{"Implement a CLI that drafts a newsletter from RSS feeds", criteria.KindCode},
	// fixes in a repository
	{"Fix the failing test in auth_test.go", criteria.KindCode},
	{"The login page crashes when the password is empty; fix it", criteria.KindCode},
	{"Fix the bug in this Python script", criteria.KindCode},
	{"Find out why go test ./... fails in this repo and fix it", criteria.KindCode},
	{"Resolve the merge conflicts in my branch", criteria.KindCode},
	{"Upgrade the project to React 19 and fix what breaks", criteria.KindCode},
	{"There is a memory leak in the server; track it down", criteria.KindCode},
	{"Make the tests pass", criteria.KindCode},
	{"fix this in my repo: the compile errors after the rename", criteria.KindCode},
	// build
	{"Build a one-page landing site", criteria.KindBuild},
	{"Build a landing page for my bakery", criteria.KindBuild},
	{"With codex and claude code, build a landing page", criteria.KindBuild},
	{"Create a website for a dentist's office", criteria.KindBuild},
	{"Make a snake game that runs in the browser", criteria.KindBuild},
	{"Build a todo app with React", criteria.KindBuild},
	{"Create a dashboard that shows our sales data", criteria.KindBuild},
	{"Set up a Discord bot that posts the weather every morning", criteria.KindBuild},
	{"Develop a Chrome extension that blocks ads", criteria.KindBuild},
	{"Make a personal portfolio site with three pages", criteria.KindBuild},
	{"Create index.html with a pricing table", criteria.KindBuild},
	{"Build a blog with Next.js", criteria.KindBuild},
	{"A landing page for my bakery, with opening hours and a map", criteria.KindBuild},
	// writing
	{"Write a blog post announcing our new office", criteria.KindWriting},
	{"Draft an email to the team about the release", criteria.KindWriting},
	{"Write a cover letter for a data analyst job", criteria.KindWriting},
	{"Write the copy for our landing page", criteria.KindWriting},
	{"Write a short story about a lighthouse keeper", criteria.KindWriting},
	{"Rewrite this paragraph to be more concise", criteria.KindWriting},
	{"Write a README for the project", criteria.KindWriting},
	{"Write a poem about autumn", criteria.KindWriting},
	{"Write a blog post about why our function names changed", criteria.KindWriting},
	{"Write a script for a two-minute video about our app", criteria.KindWriting},
	{"Fix the spelling errors in this letter", criteria.KindWriting},
	// analysis
	{"Compare Postgres and MySQL for our analytics data", criteria.KindAnalysis},
	{"Analyse the churn in this dataset and explain the main drivers", criteria.KindAnalysis},
	{"Why did our sign-ups drop in March?", criteria.KindAnalysis},
	{"Evaluate the pros and cons of moving to Kubernetes", criteria.KindAnalysis},
	{"Which of these three vendors should we choose?", criteria.KindAnalysis},
	{"Review this architecture for scalability risks", criteria.KindAnalysis},
	{"Compare React and Vue.js for a small team", criteria.KindAnalysis},
	// plan
	{"Plan the migration of the billing database", criteria.KindPlan},
	{"Create a roadmap for the next two quarters", criteria.KindPlan},
	{"Make a 3-day itinerary for Rome", criteria.KindPlan},
	{"Write a rollout plan for the new pricing", criteria.KindPlan},
	{"Plan the launch of our new landing page", criteria.KindPlan},
	// questions and sums
	{"What is 17 * 23?", criteria.KindOther},
	{"What is the capital of Australia?", criteria.KindOther},
	{"How many prime numbers are there below 100?", criteria.KindOther},
	{"Solve 3x + 5 = 20", criteria.KindOther},
	{"Who wrote Middlemarch?", criteria.KindOther},
	{"What's the integral of x^2 from 0 to 3?", criteria.KindOther},
	// other
	{"Suggest names for a coffee shop", criteria.KindOther},
	{"Give me ten ideas for a team offsite", criteria.KindOther},
}

func TestClassifyTellsCodeAndBuildTasksFromWritingAndTheRest(t *testing.T) {
	if len(kindCases) < 40 {
		t.Fatalf("%d phrasings; the table is meant to hold at least 40", len(kindCases))
	}
	for _, c := range kindCases {
		kind, why := criteria.Classify(c.task)
		if kind != c.want {
			t.Errorf("Classify(%q) = %s (%s), want %s", c.task, kind, why, c.want)
		}
		if !strings.HasPrefix(why, "guessed") {
			t.Errorf("Classify(%q) gives no reason: %q", c.task, why)
		}
	}
}

func TestTheKindsReasonQuotesTheWordsThatDecidedIt(t *testing.T) {
	for task, want := range map[string]string{
		"Write fizzbuzz.py with tests":            `guessed from "fizzbuzz.py" (a source file)`,
		"Build a one-page landing site":           `guessed from "build a one-page landing site" (a thing to make and use)`,
		"Plan the migration of the database":      `guessed from the words "plan", "migration"`,
		"What is 17 * 23?":                        "guessed: no words of",
		"The app crashes on start; please fix it": `(a fix in code)`,
	} {
		if _, why := criteria.Classify(task); !strings.Contains(why, want) {
			t.Errorf("Classify(%q) reason %q, want it to contain %q", task, why, want)
		}
	}
	if kind, why, err := criteria.ResolveKind("Writing", "Write fizzbuzz.py"); err != nil || kind != criteria.KindWriting || why != "named by the caller" {
		t.Errorf("ResolveKind with a named kind = %s, %q, %v", kind, why, err)
	}
	if kind, why, _ := criteria.ResolveKind("", "Write fizzbuzz.py"); kind != criteria.KindCode || !strings.Contains(why, "fizzbuzz.py") {
		t.Errorf("ResolveKind guessing = %s, %q", kind, why)
	}
}
