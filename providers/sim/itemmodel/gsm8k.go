package itemmodel

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// GSM8KSets are the four model solution sets OpenAI released with GSM8K
// (example_model_solutions.jsonl), strongest first: 56.3, 39.0, 34.7 and
// 21.7 % on the 1,319 test problems. Their errors are correlated the way
// real models' are, which is why replaying them is worth having beside the
// synthetic model.
var GSM8KSets = []string{"175b_verification", "6b_verification", "175b_finetuning", "6b_finetuning"}

// noFinalValue is what a solution without an "A: " line answers. Two such
// solutions agree with each other, as two unparseable outputs would under a
// short-answer comparison.
const noFinalValue = "none"

// ReadGSM8K reads example_model_solutions.jsonl and replays, for each member
// of the lineup (set names from GSM8KSets), that set's solution as the
// member's first answer: its final value (after "A: " on the last line) and
// whether it equals the ground truth's. Only sample 0 exists; limit > 0 keeps
// the first limit problems.
func ReadGSM8K(r io.Reader, lineup []string, limit int) (*Set, error) {
	if len(lineup) == 0 {
		lineup = GSM8KSets
	}
	for _, name := range lineup {
		if !contains(GSM8KSets, name) {
			return nil, fmt.Errorf("%w: %q is not a GSM8K solution set; use %s", ErrBadConfig, name, strings.Join(GSM8KSets, ", "))
		}
	}
	s := &Set{Name: "gsm8k", Members: append([]string(nil), lineup...), Accuracy: make([]float64, len(lineup)), byTask: map[string]int{}}
	var answers [][]Answer
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	line := 0
	for sc.Scan() && (limit <= 0 || len(s.Items) < limit) {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var row map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return nil, fmt.Errorf("%w: line %d of the GSM8K solutions is not JSON: %w", ErrBadConfig, line, err)
		}
		var question, truth string
		if err := json.Unmarshal(row["question"], &question); err != nil || strings.TrimSpace(question) == "" {
			return nil, fmt.Errorf("%w: line %d of the GSM8K solutions has no question; is this example_model_solutions.jsonl?", ErrBadConfig, line)
		}
		if err := json.Unmarshal(row["ground_truth"], &truth); err != nil {
			return nil, fmt.Errorf("%w: line %d of the GSM8K solutions has no ground_truth", ErrBadConfig, line)
		}
		t, ok := finalAfterA(truth)
		if !ok {
			return nil, fmt.Errorf("%w: line %d: the ground truth has no final \"A: \" line", ErrBadConfig, line)
		}
		if _, dup := s.byTask[question]; dup {
			continue // the same problem twice would map one task to two items
		}
		row0 := make([]Answer, len(lineup))
		for m, name := range lineup {
			var sol struct {
				Solution string `json:"solution"`
			}
			if err := json.Unmarshal(row[name], &sol); err != nil {
				return nil, fmt.Errorf("%w: line %d has no %s solution", ErrBadConfig, line, name)
			}
			v, ok := finalAfterA(sol.Solution)
			if !ok {
				v = noFinalValue
			}
			row0[m] = Answer{Value: v, Correct: ok && Value(v) == Value(t)}
			if row0[m].Correct {
				s.Accuracy[m]++
			}
		}
		s.byTask[question] = len(s.Items)
		s.Items = append(s.Items, Item{Task: question, Truth: t})
		answers = append(answers, row0)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the GSM8K solutions: %w", err)
	}
	if len(s.Items) == 0 {
		return nil, fmt.Errorf("%w: no GSM8K problems read", ErrBadConfig)
	}
	for m := range s.Accuracy {
		s.Accuracy[m] /= float64(len(s.Items))
	}
	s.answer = func(i int, seat Seat) Answer { return answers[i][seat.Member] }
	return s, nil
}

// finalAfterA is the value after "A: " on the last non-blank line.
func finalAfterA(text string) (string, bool) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	v, ok := strings.CutPrefix(last, "A:")
	v = strings.TrimSpace(v)
	return v, ok && v != ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
