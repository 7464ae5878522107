package criteria

// Item is one evaluation criterion.
type Item struct {
	ID           string   `json:"id"`
	Text         string   `json:"text"`
	Category     string   `json:"category"` // must | should | could
	VerifyBy     string   `json:"verify_by,omitempty"`
	AntiPatterns []string `json:"anti_patterns,omitempty"`
}

// Categories of an item. Exactly one item of a set is Must: the primary
// focus, the thing that most separates an excellent answer from an adequate
// one.
const (
	Must   = "must"
	Should = "should"
	Could  = "could"
)
