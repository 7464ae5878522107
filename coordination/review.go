package coordination

import (
	"encoding/json"

	"github.com/massgen-go/massgen-mcp/providers"
)

// A checkpoint review (coordination/checkpoint) is an ordinary session whose
// setup carries a review: the protocol — labels, votes, consensus, the run
// loop — is the same as for any team. The core only carries the review, as
// the review hook wrote it, and asks the hook at the four places a review
// differs: the system prompt's rules, the blind first prompt, the new_answer
// tool and the check of a reviewer's new_answer, and the brief the providers
// see beside the prompt.

// Reviews is the review hook: what a checkpoint review means. The review it
// is handed is Session.Review, the JSON the hook's own package wrote.
type Reviews interface {
	// Brief is the review as providers see it beside the prompt.
	Brief(review json.RawMessage) *providers.ReviewBrief
	// Rules close the system prompt of a review session.
	Rules() string
	// FirstStep closes a reviewer's blind first prompt.
	FirstStep(review json.RawMessage) string
	// AnswerTool is new_answer in a review session.
	AnswerTool() providers.Tool
	// Check reads a reviewer's new_answer arguments: the review, or the
	// problem to send back to the model as is.
	Check(review, args json.RawMessage) (ReviewAnswer, string)
}

// ReviewAnswer is a reviewer's new_answer as the hook read it. Text is the
// review as the team reads it and as its answer is stored (the duplicate
// rule compares it); Plan, Verdict and Concerns go to the entry.
type ReviewAnswer struct {
	Text     string
	Plan     json.RawMessage
	Verdict  string
	Concerns []string
}

// reviewHook is the hook the service that read s was given
// (Options.Reviews), or one that refuses every review.
func (s *Session) reviewHook() Reviews {
	if s.reviews != nil {
		return s.reviews
	}
	return noReviews{}
}

// IsReview tells whether the session is a checkpoint review.
func (s *Session) IsReview() bool { return len(s.Review) > 0 }

// noReviews stands in when a service is given no hook: a program built
// without coordination/checkpoint can read a review session but not review
// in it.
type noReviews struct{}

const noReviewsProblem = "this program cannot check reviews: it was built without coordination/checkpoint"

func (noReviews) Brief(json.RawMessage) *providers.ReviewBrief { return nil }
func (noReviews) Rules() string                                { return "" }
func (noReviews) FirstStep(json.RawMessage) string             { return "\n" + noReviewsProblem + ".\n" }
func (noReviews) AnswerTool() providers.Tool                   { return answerToolShared }
func (noReviews) Check(_, _ json.RawMessage) (ReviewAnswer, string) {
	return ReviewAnswer{}, noReviewsProblem + "."
}

// reviewBrief is the session's review as providers see it, nil for a team.
func reviewBrief(s *Session) *providers.ReviewBrief {
	if !s.IsReview() {
		return nil
	}
	return s.reviewHook().Brief(s.Review)
}

// checkReview validates a reviewer's new_answer with the hook, then applies
// the duplicate rule to the review as peers read it.
func checkReview(s *Session, v *view, args json.RawMessage) (decision, string) {
	a, prob := s.reviewHook().Check(s.Review, args)
	if prob != "" {
		return decision{}, prob
	}
	d, prob := checkAnswer(v, a.Text, false)
	if prob != "" {
		return d, prob
	}
	d.Plan, d.Verdict, d.Concerns = a.Plan, a.Verdict, a.Concerns
	return d, ""
}
