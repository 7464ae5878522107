package anthropic

import (
	"context"

	sdk "github.com/anthropics/anthropic-sdk-go"
)

// maxListed bounds what a listing may hold.
const maxListed = 5000

// ListModels returns the model ids Anthropic's models list holds (GET
// /v1/models, every page). They are dated ids (claude-haiku-4-5-20251001);
// providers.Listed accepts their aliases.
func (p *Provider) ListModels(ctx context.Context) ([]string, error) {
	var ids []string
	iter := p.models.ListAutoPaging(ctx, sdk.ModelListParams{})
	for iter.Next() && len(ids) < maxListed {
		ids = append(ids, iter.Current().ID)
	}
	if err := iter.Err(); err != nil {
		return nil, p.classify(ctx, err)
	}
	return ids, nil
}
