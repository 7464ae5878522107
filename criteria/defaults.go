package criteria

import "fmt"

// builtin is a kind's default criteria, most important first: the must
// leads, so any count from MinGenerated keeps it.
type builtin struct {
	aspiration string
	items      []Item
}

// defaults are the criteria used when no model can write task-specific ones.
// Each aims where model output on that kind of task is typically weakest,
// and says how to check it rather than how to feel about it.
var defaults = map[string]builtin{
	KindCode: {
		aspiration: "Code a senior reviewer would merge without asking for changes.",
		items: []Item{
			{Text: "The code does what the task asks on the stated inputs and on the edge cases the task implies (empty, boundary, malformed or concurrent input), not only on the happy path.", Category: Must,
				VerifyBy:     "Run it, or its tests, on the task's examples plus at least three edge cases written for the purpose; trace by hand any path that cannot be run.",
				AntiPatterns: []string{"works only on the example input", "claims to be tested without showing how", "off-by-one or empty-input crash"}},
			{Text: "It uses only APIs, packages, flags and language features that exist in the versions the task implies, and fits the surrounding code's conventions.", Category: Should,
				VerifyBy:     "Check every imported package, called function and option against its documentation; compile or type-check the code.",
				AntiPatterns: []string{"invented functions or parameters", "a new dependency for a one-line need", "style that fights the surrounding code"}},
			{Text: "Failures are handled on purpose: errors are checked and reported with context, resources are released, and untrusted input is never executed or interpolated unsafely.", Category: Should,
				VerifyBy:     "Read every error path and every place external input enters; force one failure (bad input, missing file, network error) and watch what happens.",
				AntiPatterns: []string{"ignored error returns", "a catch-all that hides the cause", "string-built SQL or shell commands"}},
			{Text: "The change is minimal and readable: clear names, no dead or commented-out code, comments that say why, and nothing the task did not ask for.", Category: Should,
				VerifyBy:     "Read the diff as a reviewer and trace every changed line to the task.",
				AntiPatterns: []string{"unrelated refactors", "comments restating the code", "speculative configurability"}},
			{Text: "It comes with tests or a runnable check that would fail if the behaviour broke.", Category: Could,
				VerifyBy:     "Run the tests, then break the code on purpose and confirm a test fails.",
				AntiPatterns: []string{"tests that assert nothing", "tests that mirror the implementation line by line"}},
		},
	},
	KindBuild: {
		aspiration: "Something its user could open today and would keep using.",
		items: []Item{
			{Text: "It works when opened or run the way its user would: it starts without undeclared setup, every page, screen or command the task implies loads, and every link, button, form and control does what it says.", Category: Must,
				VerifyBy:     "Start it from a clean copy following only its own instructions; open every page or screen, use every control, and watch the browser console, logs and exit codes for errors.",
				AntiPatterns: []string{"a blank page or a crash at start", "links or buttons that go nowhere", "placeholder content left in (lorem ipsum, TODO)", "a setup step nobody wrote down"}},
			{Text: "It delivers every part the task names (pages, sections, features, content), finished, not described or stubbed.", Category: Should,
				VerifyBy:     "List each part the task names and find it working in the running result.",
				AntiPatterns: []string{"a named section missing", "features described in a README but not built"}},
			{Text: "It looks right and stays usable where its users are: readable text and contrast, a layout that holds at phone and desktop widths, and controls reachable by keyboard.", Category: Should,
				VerifyBy:     "Open it at phone, tablet and desktop widths; tab through every control; check contrast and that images have alt text.",
				AntiPatterns: []string{"a layout that breaks on a phone", "low-contrast text", "images without alt text"}},
			{Text: "Its files are organised and self-contained: a clear layout, dependencies and assets declared or included, no secrets, and a short note on how to run or deploy it.", Category: Should,
				VerifyBy:     "Read the file tree and the run instructions, then run it in a fresh directory.",
				AntiPatterns: []string{"absolute paths to the author's machine", "undeclared dependencies", "keys or secrets in the files"}},
			{Text: "It feels finished: it loads quickly, handles empty or wrong input gracefully, and has one detail its user would notice and like.", Category: Could,
				VerifyBy:     "Time the first load; try empty and invalid input; ask what a first-time user would remember.",
				AntiPatterns: []string{"heavy assets for a simple page", "raw error messages shown to users"}},
		},
	},
	KindWriting: {
		aspiration: "Writing its intended reader finishes, remembers and acts on.",
		items: []Item{
			{Text: "It serves the stated reader and purpose in the requested form: audience, goal, length, tone and format are what the task asks for, and every paragraph moves that reader toward that goal.", Category: Must,
				VerifyBy:     "Restate the reader and the goal from the task, then check each paragraph against them; compare length and format with the request.",
				AntiPatterns: []string{"generic text that could answer any prompt", "ignores a stated length or format", "the wrong register for the audience"}},
			{Text: "Every factual claim, name, quote and number is accurate, or clearly marked as uncertain.", Category: Should,
				VerifyBy:     "List the checkable claims and verify each against the material given or a reliable source.",
				AntiPatterns: []string{"invented statistics or quotes", "confident vagueness"}},
			{Text: "The structure carries the point: an opening that earns attention, one idea per paragraph, and an ending that lands instead of summarising.", Category: Should,
				VerifyBy:     "Write down the one-line point of each paragraph; the list alone should read as a coherent outline with no repeats.",
				AntiPatterns: []string{"throat-clearing openings", "the same point made twice", "a summary ending that adds nothing"}},
			{Text: "The prose is specific and concrete, with varied sentences and no filler or stock phrasing.", Category: Should,
				VerifyBy:     "Read it aloud; strike every sentence that loses nothing when removed and every phrase that could appear in any text.",
				AntiPatterns: []string{"stock AI phrasing (\"delve\", \"in today's fast-paced world\")", "bullet lists where prose was asked for", "hedging every sentence"}},
			{Text: "It has a voice and at least one idea, example or detail the reader would not have predicted.", Category: Could,
				VerifyBy:     "Ask what a reader would remember a day later; if nothing, this is not met.",
				AntiPatterns: []string{"safe, predictable takes", "examples everyone has seen"}},
		},
	},
	KindAnalysis: {
		aspiration: "An analysis a sceptical expert would sign off on and a decision-maker could act on.",
		items: []Item{
			{Text: "The conclusion answers the question actually asked and follows from the evidence shown, with every step of the reasoning visible.", Category: Must,
				VerifyBy:     "Trace the conclusion back through each step to its evidence; check each inference and recompute every figure.",
				AntiPatterns: []string{"a conclusion asserted without support", "answering an easier, adjacent question", "arithmetic or unit errors"}},
			{Text: "Evidence and data are accurate, relevant and attributed, and the assumptions the argument needs are stated.", Category: Should,
				VerifyBy:     "Check numbers and facts against the material given or their sources; list the unstated assumptions the argument depends on.",
				AntiPatterns: []string{"cherry-picked evidence", "made-up data", "hidden assumptions"}},
			{Text: "The strongest alternatives and counter-evidence are weighed, not ignored.", Category: Should,
				VerifyBy:     "Name the strongest competing explanation or option and check the analysis shows why it is weaker.",
				AntiPatterns: []string{"a one-sided case", "straw-man alternatives"}},
			{Text: "Uncertainty and limits are stated honestly and in proportion to the evidence.", Category: Should,
				VerifyBy:     "Check that the confidence of each claim matches the strength of its evidence and that the key limitations are named specifically.",
				AntiPatterns: []string{"false precision", "blanket disclaimers instead of specific limits"}},
			{Text: "It ends with clear implications or next steps a reader could act on.", Category: Could,
				VerifyBy:     "Check that someone who reads only the ending knows what to do and why.",
				AntiPatterns: []string{"restating the findings as the recommendation", "\"more research is needed\" as the only next step"}},
		},
	},
	KindPlan: {
		aspiration: "A plan the people involved could start on tomorrow without another meeting.",
		items: []Item{
			{Text: "The plan reaches the stated goal within the stated constraints (time, budget, people, tools), and every step is concrete enough to act on: who does what, with what, and how they know it is done.", Category: Must,
				VerifyBy:     "Walk the steps in order as the person who must do them; each needs an actor, its inputs and an observable done condition.",
				AntiPatterns: []string{"vague steps such as \"optimise\" or \"align stakeholders\"", "ignores a stated constraint", "no owner for a step"}},
			{Text: "Dependencies and order are right: nothing is used before an earlier step provides it.", Category: Should,
				VerifyBy:     "For each step, list what it needs and find the earlier step that provides it.",
				AntiPatterns: []string{"steps that assume unbuilt pieces", "parallel work that actually depends on each other"}},
			{Text: "Risky or irreversible steps are identified, each with a check before it and a way back or a stop rule.", Category: Should,
				VerifyBy:     "Mark every step that touches production, data, money or people; check each has a precondition and a rollback or halt condition.",
				AntiPatterns: []string{"no rollback for a destructive step", "risks listed but not tied to steps"}},
			{Text: "Progress is measurable: milestones and success criteria say when each stage is done and when the plan has succeeded.", Category: Should,
				VerifyBy:     "Check each milestone has a test someone other than the author could apply.",
				AntiPatterns: []string{"milestones that are activities, not outcomes", "success left undefined"}},
			{Text: "It is proportionate: no more process than the goal needs, and a cheaper or faster path was considered.", Category: Could,
				VerifyBy:     "Ask which steps could be dropped or merged without raising the risk.",
				AntiPatterns: []string{"ceremony for its own sake", "gold-plated first phase"}},
		},
	},
	KindOther: {
		aspiration: "The answer an expert would give a respected colleague.",
		items: []Item{
			{Text: "It answers exactly what was asked, every part of it and in the form requested, rather than a nearby or easier question.", Category: Must,
				VerifyBy:     "Split the request into its parts and tick each off against the answer.",
				AntiPatterns: []string{"answers a different question", "skips a part of the request", "ignores the requested format"}},
			{Text: "Everything it states is correct and checkable, and uncertainty is admitted rather than papered over.", Category: Should,
				VerifyBy:     "Verify each factual claim or computation independently.",
				AntiPatterns: []string{"confident errors", "unverifiable claims presented as fact"}},
			{Text: "It goes to the depth the task needs: specific details, examples or reasoning rather than generalities.", Category: Should,
				VerifyBy:     "Find the most generic sentence and ask whether a specific one was possible.",
				AntiPatterns: []string{"platitudes", "lists of considerations with no conclusion"}},
			{Text: "It is clear and well organised: the key point comes first and nothing is padding.", Category: Should,
				VerifyBy:     "Read only the first paragraph; it should carry the answer.",
				AntiPatterns: []string{"long preamble", "repeating the question back"}},
			{Text: "It adds something an expert would value: a pitfall, a better alternative or a non-obvious insight.", Category: Could,
				VerifyBy:     "Ask whether an expert would learn anything from it.",
				AntiPatterns: []string{"only the obvious"}},
		},
	},
}

// Defaults returns the built-in criteria for a kind of task (an unknown or
// empty kind gets other's), source default: five, or the first count of
// them when count is from MinGenerated to 4 (the must always leads). The
// caller sets Note to say why defaults were used.
func Defaults(kind string, count int) Set {
	b, ok := defaults[kind]
	if !ok {
		kind, b = KindOther, defaults[KindOther]
	}
	n := len(b.items)
	if count >= MinGenerated && count < n {
		n = count
	}
	items := make([]Item, n)
	for i := range items {
		items[i] = b.items[i]
		items[i].ID = fmt.Sprintf("E%d", i+1)
		items[i].AntiPatterns = append([]string(nil), b.items[i].AntiPatterns...)
	}
	return Set{Items: items, Aspiration: b.aspiration, Source: SourceDefault, Kind: kind}
}

// DefaultsFor is Defaults for one task: what the task demands in so many
// words ("with tests") joins the must, and the lesser item on the same
// topic goes (demands.go).
func DefaultsFor(task, kind string, count int) Set {
	s := Defaults(kind, count)
	s.Items = withDemands(s.Items, Demands(task), true)
	for i := range s.Items {
		s.Items[i].ID = fmt.Sprintf("E%d", i+1)
	}
	return s
}
