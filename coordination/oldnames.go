package coordination

import "encoding/json"

// Files written before the vocabulary settled on "alias" for an agent's
// anonymous name (agentN) and "label" for an answer's (agentN.k) name the
// aliases otherwise: session.json's "label_permutation" and the rule
// "labels". They are read here, so every stored session still opens; new
// files carry only the new names.

// UnmarshalJSON reads a session, with its aliases under either name.
func (s *Session) UnmarshalJSON(data []byte) error {
	type session Session // no methods: no recursion
	v := struct {
		*session
		LabelPermutation map[string]int `json:"label_permutation"`
	}{session: (*session)(s)}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	if s.Aliases == nil {
		s.Aliases = v.LabelPermutation
	}
	return nil
}

// UnmarshalJSON reads rules, with the alias order under either name.
func (r *Rules) UnmarshalJSON(data []byte) error {
	type rules Rules
	v := struct {
		*rules
		Labels string `json:"labels"`
	}{rules: (*rules)(r)}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	if r.Aliases == "" {
		r.Aliases = v.Labels
	}
	return nil
}
