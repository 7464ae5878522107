package coordination

// agreedAsNow is a stored result r with consensus.reached as it is meant
// now: true only on a decided or finished result whose winner agreement
// chose (markAgreed). A result recorded before that kept reached as the
// tally of its moment made it (RuleMet), so a strict run that failed with
// no winner, or a winner a timeout forced, could read reached: true; read
// back, it says the rule was met (rule_met) and not reached. r itself is
// never changed (a store may share it): a result that needs this is
// copied. nil is nil.
func agreedAsNow(r *TeamResult) *TeamResult {
	if r == nil || !r.Consensus.Reached {
		return r
	}
	settled := r.Status == StatusFinished || r.Status == StatusDecided
	if settled && chosenByAgreement(r, Deref(r.HowChosen)) {
		return r
	}
	r = r.Clone()
	r.Consensus.Reached, r.Consensus.RuleMet = false, true
	return r
}
