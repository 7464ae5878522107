// Package sim is the deterministic simulated backend of docs/DESIGN.md, "Backends and the simulated agents": agents
// that answer arithmetic they compute and facts they know (right with
// probability accuracy, otherwise a plausible near miss), hold a belief,
// adopt peers' values with a truth-biased conformity (pulled towards the
// answer shown first and held by their own, by position_bias and self_bias),
// vote for the answer that matches their belief, revise now and then, follow
// corrective feedback, and count usage from text length. Every decision is a
// pure function of the request and the spec, so the same view always gives
// the same action. It also plays scripts (sim/script) for tests, and accepts
// an ItemModel through which benchmarks set each agent's first-answer
// correctness. Asked for evaluation criteria (PurposeCriteria), it writes
// valid ones marked [simulated] through the tool it is offered.
//
// sim knows nothing of coordination: it reads only the providers.Request it
// is given (the shown answers, the tools offered, the refused attempts) and
// returns a providers.Action.
package sim
