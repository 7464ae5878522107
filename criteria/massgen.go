package criteria

// MassGenCriterion is one criterion as `massgen --eval-criteria` reads it.
type MassGenCriterion struct {
	ID           string   `json:"id,omitempty"`
	Text         string   `json:"text"`
	Category     string   `json:"category"` // primary | standard | stretch
	VerifyBy     string   `json:"verify_by,omitempty"`
	AntiPatterns []string `json:"anti_patterns,omitempty"`
}

// MassGenFile is the file `massgen --eval-criteria` reads (and the file
// store's eval_criteria.json).
type MassGenFile struct {
	Aspiration string             `json:"aspiration,omitempty"`
	Criteria   []MassGenCriterion `json:"criteria"`
}

// MassGen renders criteria in MassGen's shape, with its tiers, so a caller
// can hand them straight to `massgen --eval-criteria` (which renumbers ids
// E1.. itself; ours are kept for readers). Parse reads the result back.
func MassGen(items []Item, aspiration string) MassGenFile {
	out := MassGenFile{Aspiration: aspiration, Criteria: make([]MassGenCriterion, len(items))}
	for i, it := range items {
		out.Criteria[i] = MassGenCriterion{ID: it.ID, Text: it.Text, Category: Tier(it.Category), VerifyBy: it.VerifyBy, AntiPatterns: it.AntiPatterns}
	}
	return out
}
