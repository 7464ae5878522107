package openai

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/pricing"
)

// Options adjusts an adapter beyond what its Endpoint says.
type Options struct {
	// TextTools describes the workflow tools in the system text and reads the
	// model's JSON reply instead of using the API's tool calling, for models
	// and servers known to lack it. Without it the adapter still switches to
	// text by itself the first time a server rejects the tools.
	TextTools bool
}

// defaultOpenAIBase is the Responses backend's base URL when none is given.
const defaultOpenAIBase = "https://api.openai.com/v1/"

// sharedHTTP is the client every adapter without its own uses, so that
// agents on the same backend share connections.
var sharedHTTP = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}

// toolMode is how the workflow tools reach the model.
type toolMode int32

const (
	modeRequired toolMode = iota // native tools with tool_choice "required"
	modeAuto                     // native tools, tool_choice "auto": the server refused "required"
	modeText                     // tools described in text, JSON reply parsed
)

// core is what both adapters share: who they talk to, how to say so in an
// error, the model's quirks and the tool mode learnt so far.
type core struct {
	backend string
	model   string
	where   string // the base URL as errors show it: no user info, no query
	keyVar  string // the variable holding the key; "" for keyless local servers
	secret  string // the key, kept only to mask it out of messages
	q       quirks
	mode    atomic.Int32      // a toolMode; only ever moves towards modeText
	models  *oai.ModelService // GET {base}/models; nil where there is no such list (Azure)
}

func newCore(ep providers.Endpoint, o Options, base string) *core {
	c := &core{backend: ep.Backend, model: ep.Model, where: displayURL(base), secret: ep.APIKey,
		q: quirksFor(ep.Backend, ep.Model, base)}
	if info, ok := providers.LookupBackend(ep.Backend); ok && len(info.KeyEnv) > 0 {
		c.keyVar = info.KeyEnv[0]
	}
	if o.TextTools {
		c.mode.Store(int32(modeText))
	}
	return c
}

func (c *core) toolMode() toolMode { return toolMode(c.mode.Load()) }

// priceTurn prices one turn of a tool loop. A loop sums its turns, and a
// price that depends on the request's size (long-context rates) holds per
// request: pricing the sum would bill a loop of small turns as one huge
// request. A single call is left to the pricing layer.
func (c *core) priceTurn(req providers.Request, u providers.Usage) providers.Usage {
	if req.Toolbox != nil && u.CostUSD == nil {
		u.CostUSD = pricing.Cost(c.backend, c.model, u)
	}
	return u
}

// run calls once in the current tool mode and, when the server turns the
// tools down, again in the next mode (at most twice: required → auto → text).
// The mode sticks, so later steps go straight to what the server accepts.
// Every error leaves classified.
func (c *core) run(ctx context.Context, once func(toolMode) (providers.Action, providers.Usage, error)) (providers.Action, providers.Usage, error) {
	for attempt := 0; ; attempt++ {
		m := c.toolMode()
		act, u, err := once(m)
		if err == nil {
			return act, u, nil
		}
		if attempt < 2 && ctx.Err() == nil {
			if next, ok := fallbackMode(m, err); ok {
				c.mode.CompareAndSwap(int32(m), int32(next))
				continue
			}
		}
		return act, u, c.classify(ctx, err)
	}
}

// clientOptions builds the SDK options for an endpoint hermetically: the
// services are constructed directly (never openai.NewClient, which reads
// OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_PROJECT_ID and
// OPENAI_CUSTOM_HEADERS), so nothing ambient reaches the request. SDK retries
// are off: the resilience layer owns retries.
func clientOptions(ep providers.Endpoint, base string) ([]option.RequestOption, error) {
	hc := ep.HTTPClient
	if hc == nil {
		hc = sharedHTTP
	}
	opts := []option.RequestOption{option.WithHTTPClient(hc), option.WithMaxRetries(0)}
	if ep.Backend != "azure_openai" {
		opts = append(opts, option.WithBaseURL(base))
		if ep.APIKey != "" {
			opts = append(opts, option.WithAPIKey(ep.APIKey))
		}
		return opts, nil
	}
	// Azure: {endpoint}/openai/deployments/{model}/chat/completions?api-version=…
	// with the key in an Api-Key header (never Authorization); the model
	// names the deployment. This is what openai-go's azure package sends; it
	// is built from plain options because that package pulls in the Azure
	// SDK. The SDK's origin check still keeps the key on this host, redirects
	// included.
	if base == "" {
		return nil, &providers.Error{Class: providers.ClassProvider,
			Message: "azure_openai needs the resource endpoint: set AZURE_OPENAI_ENDPOINT (e.g. https://<resource>.openai.azure.com)"}
	}
	if ep.APIVersion == "" {
		return nil, &providers.Error{Class: providers.ClassProvider,
			Message: "azure_openai needs an API version: set OPENAI_API_VERSION (e.g. 2024-10-21)"}
	}
	if ep.APIKey == "" {
		return nil, &providers.Error{Class: providers.ClassAuth,
			Message: "azure_openai needs a key: set AZURE_OPENAI_API_KEY"}
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !loopbackHTTP(base)) {
		return nil, &providers.Error{Class: providers.ClassProvider,
			Message: "AZURE_OPENAI_ENDPOINT must be an https:// URL (plain http only for a server on this machine), so the key never travels in clear"}
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimSuffix(u.Path, "/") + "/openai/deployments/" + ep.Model + "/"
	u.RawPath = ""
	return append(opts,
		option.WithBaseURL(u.String()),
		option.WithQuery("api-version", ep.APIVersion),
		option.WithHeader("Api-Key", ep.APIKey)), nil
}

// baseURL resolves an endpoint's base URL: the given one, else the backend's
// default from the spec table, else OpenAI's.
func baseURL(ep providers.Endpoint) string {
	if ep.BaseURL != "" {
		return ep.BaseURL
	}
	if info, ok := providers.LookupBackend(ep.Backend); ok && info.DefaultBaseURL != "" {
		return info.DefaultBaseURL
	}
	if ep.Backend == "azure_openai" {
		return ""
	}
	return defaultOpenAIBase
}

func checkEndpoint(ep providers.Endpoint) error {
	if ep.Model == "" {
		return fmt.Errorf("%w: the %s backend needs a model name, e.g. %s/<model>", providers.ErrBadSpec, ep.Backend, ep.Backend)
	}
	return nil
}

func loopbackHTTP(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// displayURL is a base URL fit for an error message: scheme, host and path.
func displayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "the configured base URL"
	}
	return u.Scheme + "://" + u.Host + strings.TrimSuffix(u.Path, "/")
}
