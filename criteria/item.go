package criteria

// Item is one evaluation criterion.
type Item struct {
	ID           string   `json:"id"`
	Text         string   `json:"text"`
	Category     string   `json:"category"` // must | should | could
	VerifyBy     string   `json:"verify_by,omitempty"`
	AntiPatterns []string `json:"anti_patterns,omitempty"`
}
