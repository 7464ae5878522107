// Package itemmodel is the item/agent model that benchmarks plug into sim
// agents through sim.WithItemModel (docs/DESIGN.md, "Backends and the simulated agents"; research
// consensus-quality.md §3.2–3.3): per-agent ability, per-item difficulty, a
// shared factor that correlates errors (probit with a Gaussian copula), and
// wrong answers drawn towards one attractor distractor per item — or, for
// GSM8K, each agent's first answer replayed from a released model solution
// set.
//
// It decides first answers only; what agents do after seeing each other is
// the sim's behaviour. It knows nothing of coordination.
package itemmodel
