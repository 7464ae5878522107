package criteria

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// rawItem is one criterion in any shape Parse accepts. Unknown keys
// (MassGen's score_anchors, rationale) are ignored.
type rawItem struct {
	ID           json.RawMessage `json:"id"`
	Text         string          `json:"text"`
	Description  string          `json:"description"`
	Name         string          `json:"name"`
	Category     string          `json:"category"`
	Weight       *float64        `json:"weight"`
	VerifyBy     string          `json:"verify_by"`
	AntiPatterns stringList      `json:"anti_patterns"`
}

// stringList reads a list of strings, or one string as a list of one: a
// hand-written file often gives a single anti-pattern bare.
type stringList []string

func (l *stringList) UnmarshalJSON(data []byte) error {
	var one string
	if json.Unmarshal(data, &one) == nil {
		*l = stringList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(data, &many); err != nil {
		return fmt.Errorf("anti_patterns must be a list of strings")
	}
	*l = many
	return nil
}

// Parse reads criteria from raw JSON in every shape callers and MassGen use
// and converts them to Items, without validating them (Provided and Validate
// do that). raw is a list of criteria, or an object {"criteria": […],
// "aspiration": "…"} as `massgen --eval-criteria` reads. Each criterion may be
//
//   - ours: {id?, text, category: must|should|could, verify_by?, anti_patterns?};
//   - MassGen's tiers: category primary, standard or stretch, read as must,
//     should and could;
//   - weighted: {id, name, description, weight}. The description is the text
//     (the name only when there is no description). Among the items that
//     have a weight and no category, the highest weight becomes must (the
//     first of equals, and only if no item is must already), other weights
//     of at least 0.4 should, the rest could. Weights are read on a 0–1
//     scale; if any is above 1 (a 1–10 or percentage scale), all are first
//     divided by the highest.
//
// Text falls back from text to description to name. A missing category is
// should; an unknown one is kept for Validate to name. Ids are kept (a
// number is read as its digits); a missing id becomes E<position>. Strings
// are trimmed and empty anti-patterns dropped.
func Parse(raw []byte) (items []Item, aspiration string, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, "", nil
	}
	var list []json.RawMessage
	if raw[0] == '{' {
		var wrapped struct {
			Criteria   []json.RawMessage `json:"criteria"`
			Aspiration string            `json:"aspiration"`
		}
		if err := json.Unmarshal(raw, &wrapped); err != nil {
			return nil, "", fmt.Errorf("%w: an object of criteria must be {\"criteria\": [...], \"aspiration\": \"...\"}: %v", ErrInvalid, err)
		}
		if wrapped.Criteria == nil {
			return nil, "", fmt.Errorf("%w: the object has no \"criteria\" list; write {\"criteria\": [{\"text\": ..., \"category\": \"must\"}, ...]} or a bare list", ErrInvalid)
		}
		list, aspiration = wrapped.Criteria, oneLine(wrapped.Aspiration)
	} else if err := json.Unmarshal(raw, &list); err != nil {
		return nil, "", fmt.Errorf("%w: criteria must be a JSON list or {\"criteria\": [...]}: %v", ErrInvalid, err)
	}

	raws := make([]rawItem, len(list))
	for i, r := range list {
		if err := json.Unmarshal(r, &raws[i]); err != nil {
			return nil, "", fmt.Errorf("%w: criterion %d cannot be read (%v); each is an object such as {\"text\": \"…\", \"category\": \"must\"}", ErrInvalid, i+1, err)
		}
	}
	items = make([]Item, len(raws))
	for i, r := range raws {
		it := Item{
			ID:       idText(r.ID),
			Text:     firstNonEmpty(r.Text, r.Description, r.Name),
			Category: category(r.Category),
			VerifyBy: strings.TrimSpace(r.VerifyBy),
		}
		for _, a := range r.AntiPatterns {
			if a = strings.TrimSpace(a); a != "" {
				it.AntiPatterns = append(it.AntiPatterns, a)
			}
		}
		if it.ID == "" {
			it.ID = fmt.Sprintf("E%d", i+1)
		}
		items[i] = it
	}
	fromWeights(items, raws)
	for i := range items {
		if items[i].Category == "" {
			items[i].Category = Should
		}
	}
	return items, aspiration, nil
}

// fromWeights gives a category to every weighted item that has none.
func fromWeights(items []Item, raws []rawItem) {
	var weighted []int
	highest := 0.0
	for i, r := range raws {
		if r.Weight != nil && items[i].Category == "" {
			weighted = append(weighted, i)
			highest = max(highest, *r.Weight)
		}
	}
	if len(weighted) == 0 {
		return
	}
	scale := 1.0
	if highest > 1 {
		scale = highest
	}
	mustAt := -1
	if !hasMust(items) {
		for _, i := range weighted {
			if mustAt < 0 || *raws[i].Weight > *raws[mustAt].Weight {
				mustAt = i
			}
		}
	}
	for _, i := range weighted {
		switch {
		case i == mustAt:
			items[i].Category = Must
		case *raws[i].Weight/scale >= 0.4:
			items[i].Category = Should
		default:
			items[i].Category = Could
		}
	}
}

func hasMust(items []Item) bool {
	for _, it := range items {
		if it.Category == Must {
			return true
		}
	}
	return false
}

// category maps both vocabularies to ours; "" stays "" and anything unknown
// is kept, lower-cased, for Validate to name.
func category(c string) string {
	switch c = strings.ToLower(strings.TrimSpace(c)); c {
	case Must, "primary":
		return Must
	case Should, "standard":
		return Should
	case Could, "stretch":
		return Could
	}
	return c
}

// Tier is MassGen's name for a category: must↔primary, should↔standard,
// could↔stretch.
func Tier(category string) string {
	switch category {
	case Must:
		return "primary"
	case Could:
		return "stretch"
	}
	return "standard"
}

func idText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// oneLine folds whitespace, line breaks included, to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
