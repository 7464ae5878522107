package sim

// ItemModel lets a benchmark decide each agent's first answer instead of the
// sim's independent draw: it can model item difficulty, correlated
// correctness across agents (a shared latent factor) and an attractor
// distractor, and it can supply the truth of tasks the bank does not know
// (GSM8K word problems). Implementations must be pure functions of the query
// and safe for concurrent use.
type ItemModel interface {
	FirstAnswer(q ItemQuery) (Item, bool)
}

// ItemQuery is what an item model is asked about one agent's first answer.
type ItemQuery struct {
	Task        string
	AgentID     string
	SessionSeed int64
	// Accuracy is the agent's configured accuracy, for models that calibrate
	// an agent's ability to it.
	Accuracy float64
	// BankTruth is the answer bank's value for the task (as an answer writes
	// it), empty when the bank does not know the task.
	BankTruth string
}

// Item is an item model's verdict on one agent's first answer. Returning
// false from FirstAnswer instead leaves the decision to the sim.
type Item struct {
	// Truth is the right value; empty keeps the bank's. A task that neither
	// the model nor the bank knows gets synthetic drafts.
	Truth string
	// Correct says whether this agent's first answer is right.
	Correct bool
	// Wrong is the value the agent gives when it is not correct; empty lets
	// the sim draw a near miss.
	Wrong string
}

// Option configures a sim provider.
type Option func(*options)

type options struct {
	items ItemModel
}

// WithItemModel makes the sim ask m for every first answer.
func WithItemModel(m ItemModel) Option { return func(o *options) { o.items = m } }
