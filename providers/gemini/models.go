package gemini

import (
	"context"
	"strings"
)

// maxListed bounds what a listing may hold.
const maxListed = 5000

// ListModels returns the model names Gemini's models.list holds (every
// page), without their "models/" prefix, as specs name them.
func (p *provider) ListModels(ctx context.Context) ([]string, error) {
	var names []string
	for m, err := range p.client.Models.All(ctx) {
		if err != nil {
			return nil, p.classify(ctx, err)
		}
		names = append(names, strings.TrimPrefix(m.Name, "models/"))
		if len(names) >= maxListed {
			break
		}
	}
	return names, nil
}
