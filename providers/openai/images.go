package openai

import (
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/massgen-go/massgen-mcp/providers"
)

// chatUser is the step's user message for Chat Completions: the prompt,
// then each image of the task as an image_url part holding a data URL.
func chatUser(req providers.Request) oai.ChatCompletionMessageParamUnion {
	if len(req.Images) == 0 {
		return oai.UserMessage(req.Prompt)
	}
	parts := make([]oai.ChatCompletionContentPartUnionParam, 0, 1+len(req.Images))
	parts = append(parts, oai.TextContentPart(req.Prompt))
	for _, im := range req.Images {
		parts = append(parts, oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: im.DataURL()}))
	}
	return oai.UserMessage(parts)
}

// responsesUser is the step's user input for the Responses API: the prompt
// as input_text, then each image as input_image holding a data URL.
func responsesUser(req providers.Request) responses.ResponseInputItemUnionParam {
	if len(req.Images) == 0 {
		return responses.ResponseInputItemParamOfMessage(req.Prompt, responses.EasyInputMessageRoleUser)
	}
	content := make(responses.ResponseInputMessageContentListParam, 0, 1+len(req.Images))
	content = append(content, responses.ResponseInputContentParamOfInputText(req.Prompt))
	for _, im := range req.Images {
		part := responses.ResponseInputContentParamOfInputImage(responses.ResponseInputImageDetailAuto)
		part.OfInputImage.ImageURL = oai.String(im.DataURL())
		content = append(content, part)
	}
	return responses.ResponseInputItemParamOfMessage(content, responses.EasyInputMessageRoleUser)
}
