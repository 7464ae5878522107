package openai

import (
	"context"
	"errors"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/massgen-go/massgen-mcp/providers"
)

// listing sets up the models list of an endpoint: GET {base}/models, which
// OpenAI and every compatible server (vLLM, Ollama, LM Studio, OpenRouter,
// xAI, …) serve. Azure lists deployments elsewhere, so it has none.
func (c *core) listing(ep providers.Endpoint, opts []option.RequestOption) {
	if ep.Backend == "azure_openai" {
		return
	}
	svc := oai.NewModelService(opts...)
	c.models = &svc
}

// maxListed bounds what a listing may hold; a server listing more is
// answered from the first pages only.
const maxListed = 5000

// ListModels returns the ids the server lists, every page of them.
func (c *core) ListModels(ctx context.Context) ([]string, error) {
	if c.models == nil {
		return nil, errors.ErrUnsupported
	}
	var ids []string
	iter := c.models.ListAutoPaging(ctx)
	for iter.Next() && len(ids) < maxListed {
		ids = append(ids, iter.Current().ID)
	}
	if err := iter.Err(); err != nil {
		return nil, c.classify(ctx, err)
	}
	return ids, nil
}
