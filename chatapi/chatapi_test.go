package chatapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/rs/zerolog"

	"github.com/massgen-go/massgen-mcp/chatapi"
	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/memstore"
	"github.com/massgen-go/massgen-mcp/mcp"
	"github.com/massgen-go/massgen-mcp/providers"
	"github.com/massgen-go/massgen-mcp/providers/backends"
)

// Dummy bearer tokens: two tenants.
const (
	tokenA = "tok-dummy-PLANTED-tenant-a-0000"
	tokenB = "tok-dummy-PLANTED-tenant-b-0000"
)

// served is a served MCP server with the chat surface, wired as serve
// wires it, over sim agents: tenants a and b, a default team of sims that always answer right (accuracy=1, so every test knows the answer), and
// team files (quick: three sims; slow: two sims that take 5 s a step).
type served struct {
	url      string
	services map[string]*coordination.Service
	mu       sync.Mutex
}

// newServiceOn is a service of sims over st, with def as its default
// team (nil: the sims that always answer right).
func newServiceOn(st coordination.Store, def func() ([]string, error)) *coordination.Service {
	return newServiceChecking(st, def, nil)
}

// newServiceChecking is newServiceOn whose new teams' models are checked
// by check (coordination.Options.CheckModels), as serve checks them
// against each provider's models list.
func newServiceChecking(st coordination.Store, def func() ([]string, error), check func(context.Context, []providers.Spec) []error) *coordination.Service {
	if def == nil {
		def = func() ([]string, error) {
			return []string{"sim/strong:accuracy=1", "sim/strong:accuracy=1", "sim:accuracy=1"}, nil
		}
	}
	return coordination.NewService(st, coordination.Options{Open: backends.Open, Logger: zerolog.Nop(), DefaultTeam: def, CheckModels: check})
}

func serve(t *testing.T) *served { return serveWith(t, mcp.Options{}, mcp.HTTPOptions{}) }

// serveWith is serve with some of the server's options and limits set.
func serveWith(t *testing.T, mo mcp.Options, ho mcp.HTTPOptions) *served {
	return serveOn(t, mo, ho, nil)
}

// replicaStores is each tenant's store, shared by the servers given it
// (replicas of one deployment); nil gives each service a store of its own.
// defaultTeam, if set, is the services' default team.
type replicaStores struct {
	mu          sync.Mutex
	stores      map[string]coordination.Store
	defaultTeam func() ([]string, error)
	checkModels func(context.Context, []providers.Spec) []error
}

func (r *replicaStores) check() func(context.Context, []providers.Spec) []error {
	if r == nil {
		return nil
	}
	return r.checkModels
}

func (r *replicaStores) team() func() ([]string, error) {
	if r == nil {
		return nil
	}
	return r.defaultTeam
}

func (r *replicaStores) of(tenant string) coordination.Store {
	if r == nil {
		return memstore.New()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.stores[tenant]
	if !ok {
		st = memstore.New()
		r.stores[tenant] = st
	}
	return st
}

// serveOn is serveWith whose services keep their sessions in stores'.
func serveOn(t *testing.T, mo mcp.Options, ho mcp.HTTPOptions, stores *replicaStores) *served {
	t.Helper()
	return serveTeams(t, mo, ho, stores, map[string]string{
		"quick.yaml":  "agents: [{model: 'sim/strong:accuracy=1'}, {model: 'sim/strong:accuracy=1'}, {model: 'sim:accuracy=1'}]\n",
		"slow.yaml":   "agents: [{model: 'sim:latency=5s'}, {model: 'sim:latency=5s'}]\n",
		"broken.yaml": "agents: 3\n",
	})
}

// serveTeams is serveOn with teams (file name → body) as its --teams-dir,
// for a test whose team files would change the list the others assert.
func serveTeams(t *testing.T, mo mcp.Options, ho mcp.HTTPOptions, stores *replicaStores, teams map[string]string) *served {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"tokens.txt": "a " + tokenA + "\nb " + tokenB + "\n"}
	for name, body := range teams {
		files[name] = body
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tokens, err := mcp.LoadTokens(filepath.Join(dir, "tokens.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := &served{services: map[string]*coordination.Service{}}
	def := newServiceChecking(stores.of(mcp.DefaultTenant), stores.team(), stores.check())
	s.services[mcp.DefaultTenant] = def
	mo.TeamsDir, mo.Logger = dir, zerolog.Nop()
	mo.Tenants = func(tenant string) (*coordination.Service, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		svc := newServiceChecking(stores.of(tenant), stores.team(), stores.check())
		s.services[tenant] = svc
		return svc, nil
	}
	srv := mcp.New(def, mo)
	ho.Tokens = tokens
	ho.Surfaces = []mcp.Surface{{
		Pattern: "/v1/", Handler: chatapi.New(srv, chatapi.Options{Logger: zerolog.Nop()}), Refuse: chatapi.Refuse,
	}}
	h := srv.HTTPHandler(ho)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		for _, svc := range s.all() {
			svc.CancelAll()
		}
		ts.Close()
	})
	s.url = ts.URL
	return s
}

func (s *served) all() []*coordination.Service {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*coordination.Service
	for _, svc := range s.services {
		out = append(out, svc)
	}
	return out
}

func (s *served) service(t *testing.T, tenant string) *coordination.Service {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	svc, ok := s.services[tenant]
	if !ok {
		t.Fatalf("tenant %s has no service yet", tenant)
	}
	return svc
}

// client is the official OpenAI client pointed at the server, without
// retries (a retry would run the team again and hide what the first answer
// was).
func (s *served) client(token string) openai.Client {
	return openai.NewClient(option.WithBaseURL(s.url+"/v1"), option.WithAPIKey(token), option.WithMaxRetries(0))
}

func ask(model, question string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(question)},
	}
}

// reasoning reads the reasoning_content extension of a message or delta.
func reasoning(raw string) string {
	var v struct {
		ReasoningContent string `json:"reasoning_content"`
	}
	_ = json.Unmarshal([]byte(raw), &v)
	return v.ReasoningContent
}

// meta reads the massgen_metadata extension of a completion or chunk.
type meta struct {
	SessionID string   `json:"session_id"`
	Team      string   `json:"team"`
	Status    string   `json:"status"`
	Winner    string   `json:"winner"`
	CostUSD   *float64 `json:"cost_usd"`
	Steps     int      `json:"steps"`
}

func metaOf(t *testing.T, raw string) meta {
	t.Helper()
	var v struct {
		M *meta `json:"massgen_metadata"`
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil || v.M == nil {
		t.Fatalf("no massgen_metadata in %s (%v)", raw, err)
	}
	return *v.M
}

func TestTheOpenAIClientGetsTheTeamsAnswerAndItsTrace(t *testing.T) {
	s := serve(t)
	c := s.client(tokenA)
	for _, model := range []string{"massgen", "massgen/quick"} {
		res, err := c.Chat.Completions.New(context.Background(), ask(model, "What is 17 * 23?"))
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		msg := res.Choices[0].Message
		if !strings.Contains(msg.Content, "391") {
			t.Errorf("%s: content %q lacks the team's answer 391", model, msg.Content)
		}
		trace := reasoning(msg.RawJSON())
		for _, want := range []string{"Winner:", "Votes:", "Tokens:"} {
			if !strings.Contains(trace, want) {
				t.Errorf("%s: reasoning_content lacks %q:\n%s", model, want, trace)
			}
		}
		if res.Object != "chat.completion" || res.Model != model || res.Choices[0].FinishReason != "stop" {
			t.Errorf("%s: object %q model %q finish %q", model, res.Object, res.Model, res.Choices[0].FinishReason)
		}
		if res.Usage.PromptTokens == 0 || res.Usage.TotalTokens != res.Usage.PromptTokens+res.Usage.CompletionTokens {
			t.Errorf("%s: usage %+v", model, res.Usage)
		}
		m := metaOf(t, res.RawJSON())
		if m.CostUSD == nil || m.Status != coordination.StatusFinished || m.Winner == "" || m.Steps == 0 {
			t.Errorf("%s: metadata %+v", model, m)
		}
		wantTeam := strings.TrimPrefix(strings.TrimPrefix(model, "massgen"), "/")
		if wantTeam == "" {
			wantTeam = "default"
		}
		if m.Team != wantTeam || res.ID != "chatcmpl-"+m.SessionID {
			t.Errorf("%s: team %q id %q session %q", model, m.Team, res.ID, m.SessionID)
		}
		// The session is the tenant's, in its own store.
		if _, err := s.service(t, "a").Result(context.Background(), m.SessionID); err != nil {
			t.Errorf("%s: tenant a cannot read its session: %v", model, err)
		}
	}
}

func TestEarlierTurnsAreTheTasksContext(t *testing.T) {
	s := serve(t)
	c := s.client(tokenA)
	p := openai.ChatCompletionNewParams{Model: "massgen", Messages: []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("Answer with a number."),
		openai.UserMessage("What is 6 * 7?"),
		openai.AssistantMessage("42"),
		openai.UserMessage("What is 17 * 23?"),
	}}
	res, err := c.Chat.Completions.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := stored(s.service(t, "a"), metaOf(t, res.RawJSON()).SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Task != "What is 17 * 23?" {
		t.Errorf("task %q, want the latest user message", got.Task)
	}
	ctx := strings.Join(got.Context, "\n")
	for _, want := range []string{"[instructions]\nAnswer with a number.", "[user]\nWhat is 6 * 7?", "[assistant]\n42"} {
		if !strings.Contains(ctx, want) {
			t.Errorf("context lacks %q:\n%s", want, ctx)
		}
	}
}

func TestStreamingSendsProgressThenTheAnswerThenDone(t *testing.T) {
	s := serve(t)
	c := s.client(tokenA)
	stream := c.Chat.Completions.NewStreaming(context.Background(), ask("massgen", "What is 17 * 23?"))
	var acc openai.ChatCompletionAccumulator
	var reasons []string
	var content strings.Builder
	var first, last string
	chunks, contentAt, lastReasonAt := 0, -1, -1
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		if first == "" {
			first = ch.RawJSON()
		}
		last = ch.RawJSON()
		if len(ch.Choices) > 0 {
			if r := reasoning(ch.Choices[0].Delta.RawJSON()); r != "" {
				reasons = append(reasons, r)
				lastReasonAt = chunks
			}
			if ch.Choices[0].Delta.Content != "" {
				content.WriteString(ch.Choices[0].Delta.Content)
				contentAt = chunks
			}
		}
		if ch.Object != "chat.completion.chunk" {
			t.Errorf("chunk object %q", ch.Object)
		}
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(content.String(), "391") {
		t.Errorf("streamed content %q lacks 391", content.String())
	}
	trace := strings.Join(reasons, "")
	if len(reasons) < 3 || !strings.Contains(trace, "Winner:") {
		t.Errorf("reasoning chunks %d, trace:\n%s", len(reasons), trace)
	}
	if contentAt < lastReasonAt {
		t.Errorf("the answer (chunk %d) came before the trace ended (chunk %d)", contentAt, lastReasonAt)
	}
	if sid := metaOf(t, first).SessionID; sid == "" {
		t.Error("the first chunk does not name the session")
	}
	m := metaOf(t, last)
	if m.CostUSD == nil || m.Status != coordination.StatusFinished {
		t.Errorf("last chunk's metadata %+v", m)
	}
	if acc.Usage.TotalTokens == 0 || len(acc.Choices) == 0 || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("accumulated usage %+v, choices %+v", acc.Usage, acc.Choices)
	}
}

func TestStreamEndsWithDoneOnTheWire(t *testing.T) {
	s := serve(t)
	body := `{"model":"massgen","stream":true,"messages":[{"role":"user","content":"What is 6 * 7?"}]}`
	req, _ := http.NewRequest(http.MethodPost, s.url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tokenA)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw := new(strings.Builder)
	if _, err := io.Copy(raw, resp.Body); err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	if !strings.HasSuffix(raw.String(), "data: [DONE]\n\n") {
		t.Errorf("stream does not end with data: [DONE]:\n%s", raw.String()[max(0, raw.Len()-400):])
	}
}

func TestAnUnknownModelIsRefusedListingTheTeams(t *testing.T) {
	s := serve(t)
	c := s.client(tokenA)
	for _, model := range []string{"gpt-4o", "massgen/nosuch", "massgen/broken", "massgen/../slow"} {
		_, err := c.Chat.Completions.New(context.Background(), ask(model, "What is 6 * 7?"))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("%s: error %v, want an API error", model, err)
		}
		if apiErr.StatusCode != http.StatusNotFound || apiErr.Code != "model_not_found" || apiErr.Type != "invalid_request_error" || apiErr.Param != "model" {
			t.Errorf("%s: status %d code %q type %q param %q", model, apiErr.StatusCode, apiErr.Code, apiErr.Type, apiErr.Param)
		}
		for _, want := range []string{"massgen, massgen/quick, massgen/slow", "--teams-dir"} {
			if !strings.Contains(apiErr.Message, want) {
				t.Errorf("%s: message %q lacks %q", model, apiErr.Message, want)
			}
		}
	}
	page, err := c.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, ",") != "massgen,massgen/quick,massgen/slow" {
		t.Errorf("models %v", ids)
	}
}

func TestNoTokenNoTeam(t *testing.T) {
	s := serve(t)
	for _, token := range []string{"", "tok-dummy-PLANTED-wrong-0000"} {
		c := openai.NewClient(option.WithBaseURL(s.url+"/v1"), option.WithAPIKey(token), option.WithMaxRetries(0))
		_, err := c.Chat.Completions.New(context.Background(), ask("massgen", "What is 6 * 7?"))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized || apiErr.Code != "invalid_api_key" {
			t.Fatalf("token %q: %v, want 401 invalid_api_key", token, err)
		}
		if _, err := c.Models.List(context.Background()); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized {
			t.Errorf("token %q: models listed without a valid token: %v", token, err)
		}
	}
	for _, svc := range s.all() {
		list, err := svc.Sessions(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 0 {
			t.Errorf("a refused request created %d sessions", len(list))
		}
	}
	// The health check needs no token, as MassGen's.
	resp, err := http.Get(s.url + "/health")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /health: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestAnotherTenantCannotSeeTheSession(t *testing.T) {
	s := serve(t)
	a, b := s.client(tokenA), s.client(tokenB)
	named := option.WithJSONSet("massgen_session_id", "chat_shared")
	res, err := a.Chat.Completions.New(context.Background(), ask("massgen", "What is 17 * 23?"), named)
	if err != nil {
		t.Fatal(err)
	}
	if id := metaOf(t, res.RawJSON()).SessionID; id != "chat_shared" {
		t.Fatalf("session %q, want the named chat_shared", id)
	}
	// Were a's session visible to b, the same id with another task would be
	// refused as a session that exists with another task.
	res, err = b.Chat.Completions.New(context.Background(), ask("massgen", "What is 6 * 7?"), named)
	if err != nil {
		t.Fatalf("tenant b, same session id: %v", err)
	}
	if !strings.Contains(res.Choices[0].Message.Content, "42") {
		t.Errorf("tenant b got %q, not its own team's answer", res.Choices[0].Message.Content)
	}
	sa, err := stored(s.service(t, "a"), "chat_shared")
	if err != nil || sa.Task != "What is 17 * 23?" {
		t.Errorf("tenant a's session: %v, %v", sa, err)
	}
	// And a's own retry with another task is refused: the id is taken.
	_, err = a.Chat.Completions.New(context.Background(), ask("massgen", "What is 6 * 7?"), named)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusConflict || apiErr.Code != "session_exists" {
		t.Errorf("a's same id, other task: %v, want 409 session_exists", err)
	}
	// The same conversation again returns the finished session's answer.
	res, err = a.Chat.Completions.New(context.Background(), ask("massgen", "What is 17 * 23?"), named)
	if err != nil || !strings.Contains(res.Choices[0].Message.Content, "391") {
		t.Errorf("resuming a finished session: %v, %v", res, err)
	}
}

func TestADisconnectCancelsTheRun(t *testing.T) {
	for _, stream := range []bool{false, true} {
		s := serve(t)
		c := s.client(tokenA)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			if stream {
				st := c.Chat.Completions.NewStreaming(ctx, ask("massgen/slow", "What is 6 * 7?"))
				for st.Next() {
				}
			} else {
				_, _ = c.Chat.Completions.New(ctx, ask("massgen/slow", "What is 6 * 7?"))
			}
		}()
		id := waitRunning(t, s, "a")
		cancel()
		<-done
		waitFor(t, func() bool {
			res, err := s.service(t, "a").Result(context.Background(), id)
			return err == nil && res.Status == coordination.StatusCancelled && strings.Contains(res.CancelReason, "stopped waiting")
		}, "stream %v: session %s never ended cancelled, its caller gone", stream, id)
	}
}

func TestANamedSessionOutlivesItsClient(t *testing.T) {
	s := serve(t)
	c := s.client(tokenA)
	named := option.WithJSONSet("massgen_session_id", "chat_detached")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.Chat.Completions.New(ctx, ask("massgen/slow", "What is 6 * 7?"), named)
	}()
	if id := waitRunning(t, s, "a"); id != "chat_detached" {
		t.Fatalf("running %s", id)
	}
	cancel()
	<-done
	time.Sleep(300 * time.Millisecond)
	if _, running := s.service(t, "a").Running("chat_detached"); !running {
		res, _ := s.service(t, "a").Result(context.Background(), "chat_detached")
		t.Fatalf("the named session stopped with its client: %+v", res)
	}
	// Coming back with the id joins the run and gets the answer.
	res, err := c.Chat.Completions.New(context.Background(), ask("massgen/slow", "What is 6 * 7?"), named)
	if err != nil {
		t.Fatal(err)
	}
	if m := metaOf(t, res.RawJSON()); m.SessionID != "chat_detached" || m.Status != coordination.StatusFinished {
		t.Errorf("metadata %+v", m)
	}
}

// TestTheSameRequestOnAnotherReplicaJoinsTheRun: a named session whose
// run goes on on replica A (its client left) is asked for again through B,
// as a load balancer sends a retry: B follows A's run and answers with its
// result, where it refused with a 500 that OpenAI clients retry.
func TestTheSameRequestOnAnotherReplicaJoinsTheRun(t *testing.T) {
	stores := &replicaStores{stores: map[string]coordination.Store{}}
	a := serveOn(t, mcp.Options{}, mcp.HTTPOptions{}, stores)
	b := serveOn(t, mcp.Options{}, mcp.HTTPOptions{}, stores)
	named := option.WithJSONSet("massgen_session_id", "chat_elsewhere")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	ca, cb := a.client(tokenA), b.client(tokenA)
	go func() {
		defer close(done)
		_, _ = ca.Chat.Completions.New(ctx, ask("massgen/slow", "What is 6 * 7?"), named)
	}()
	if id := waitRunning(t, a, "a"); id != "chat_elsewhere" {
		t.Fatalf("running %s", id)
	}
	cancel()
	<-done
	res, err := cb.Chat.Completions.New(context.Background(), ask("massgen/slow", "What is 6 * 7?"), named)
	if err != nil {
		t.Fatalf("the same request through another replica: %v", err)
	}
	if m := metaOf(t, res.RawJSON()); m.SessionID != "chat_elsewhere" || m.Status != coordination.StatusFinished {
		t.Errorf("metadata %+v", m)
	}
	if _, running := b.service(t, "a").Running("chat_elsewhere"); running {
		t.Error("B ran the session A was running")
	}
}

// TestASessionIsNotAnsweredUnderAnotherTeam: a session named with
// massgen_session_id keeps the model it was created with. The same id
// under another model — a team file or the default team, the session
// finished or still running — is 409 session_exists saying which model made
// it and how to go on, where it answered (or joined) the stored session
// labelled with the model asked; under its own model it is answered.
func TestASessionIsNotAnsweredUnderAnotherTeam(t *testing.T) {
	s := serve(t)
	c := s.client(tokenA)
	named := option.WithJSONSet("massgen_session_id", "chat_quick")
	if _, err := c.Chat.Completions.New(context.Background(), ask("massgen/quick", "What is 17 * 23?"), named); err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"massgen/slow", "massgen"} {
		_, err := c.Chat.Completions.New(context.Background(), ask(model, "What is 17 * 23?"), named)
		e := wantAPIError(t, model+" naming a session of massgen/quick", err, http.StatusConflict, "session_exists")
		if e.Param != "model" {
			t.Errorf("%s: param %q, want model", model, e.Param)
		}
		for _, want := range []string{"chat_quick", "created with the model massgen/quick, not " + model, "ask massgen/quick", "leave out massgen_session_id"} {
			if !strings.Contains(e.Message, want) {
				t.Errorf("%s: the refusal %q lacks %q", model, e.Message, want)
			}
		}
		st := c.Chat.Completions.NewStreaming(context.Background(), ask(model, "What is 17 * 23?"), named)
		for st.Next() {
			t.Errorf("%s, streamed: a chunk %s before the refusal", model, st.Current().RawJSON())
		}
		wantAPIError(t, model+", streamed", st.Err(), http.StatusConflict, "session_exists")
	}
	res, err := c.Chat.Completions.New(context.Background(), ask("massgen/quick", "What is 17 * 23?"), named)
	if err != nil {
		t.Fatalf("the session's own model: %v", err)
	}
	if m := metaOf(t, res.RawJSON()); res.Model != "massgen/quick" || m.SessionID != "chat_quick" || m.Team != "quick" || !strings.Contains(res.Choices[0].Message.Content, "391") {
		t.Errorf("the session's own model: model %q, metadata %+v, content %q", res.Model, m, res.Choices[0].Message.Content)
	}

	// A running session is not joined under another model either.
	running := option.WithJSONSet("massgen_session_id", "chat_slow")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.Chat.Completions.New(ctx, ask("massgen/slow", "What is 6 * 7?"), running)
	}()
	waitFor(t, func() bool { _, ok := s.service(t, "a").Running("chat_slow"); return ok }, "chat_slow never ran")
	cancel()
	<-done
	_, err = c.Chat.Completions.New(context.Background(), ask("massgen/quick", "What is 6 * 7?"), running)
	e := wantAPIError(t, "massgen/quick naming a running session of massgen/slow", err, http.StatusConflict, "session_exists")
	if !strings.Contains(e.Message, "created with the model massgen/slow, not massgen/quick") {
		t.Errorf("the refusal says %q", e.Message)
	}
}

// TestASessionWithoutItsTeamsNameIsAnsweredUnderAny: a session stored
// without the model it was made with (written before sessions kept it, or
// made over MCP from listed models) is answered under whichever model the
// request names, as before, and the completion echoes that model.
func TestASessionWithoutItsTeamsNameIsAnsweredUnderAny(t *testing.T) {
	stores := &replicaStores{stores: map[string]coordination.Store{}}
	creator := newServiceOn(stores.of("a"), nil)
	if _, err := creator.Create(context.Background(), coordination.TeamSpec{SessionID: "chat_unnamed", Task: "What is 17 * 23?", Models: []string{"sim:accuracy=1", "sim:accuracy=1"}}); err != nil {
		t.Fatal(err)
	}
	s := serveOn(t, mcp.Options{}, mcp.HTTPOptions{}, stores)
	c := s.client(tokenA)
	named := option.WithJSONSet("massgen_session_id", "chat_unnamed")
	for _, model := range []string{"massgen/quick", "massgen/slow", "massgen"} {
		res, err := c.Chat.Completions.New(context.Background(), ask(model, "What is 17 * 23?"), named)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		if m := metaOf(t, res.RawJSON()); res.Model != model || m.SessionID != "chat_unnamed" || !strings.Contains(res.Choices[0].Message.Content, "391") {
			t.Errorf("%s: model %q, metadata %+v, content %q", model, res.Model, m, res.Choices[0].Message.Content)
		}
	}
}

// TestAServerWithoutADefaultTeamOffersNone: with no provider key the
// server has no default team, so /v1/models lists only the team files and
// asking for "massgen" is a 404 saying so and what to ask for instead,
// where it was a 500 (which OpenAI clients retry) with advice for MCP.
func TestAServerWithoutADefaultTeamOffersNone(t *testing.T) {
	s := serveOn(t, mcp.Options{}, mcp.HTTPOptions{}, &replicaStores{stores: map[string]coordination.Store{},
		defaultTeam: func() ([]string, error) { return nil, errors.New("dummy: no default team: no provider key here") }})
	c := s.client(tokenA)
	page, err := c.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range page.Data {
		if m.ID == chatapi.DefaultModel {
			t.Errorf("/v1/models lists %s on a server with no default team", m.ID)
		}
	}
	_, err = c.Chat.Completions.New(context.Background(), ask(chatapi.DefaultModel, "What is 6 * 7?"))
	e := wantAPIError(t, "the default team on a server without one", err, http.StatusNotFound, "model_not_found")
	if !strings.Contains(e.Message, "no default team") || !strings.Contains(e.Message, "massgen/quick") || strings.Contains(e.Message, "env entry") {
		t.Errorf("the refusal says %q", e.Message)
	}
	// A stored session named by the request needs no default team to be
	// answered again: one made without a team's name (over MCP, from
	// listed models) under the default team's name. One made with a team
	// file is that file's (TestASessionIsNotAnsweredUnderAnotherTeam).
	if _, err := s.service(t, "a").Create(context.Background(), coordination.TeamSpec{SessionID: "chat_nodefault", Task: "What is 6 * 7?", Models: []string{"sim:accuracy=1", "sim:accuracy=1"}}); err != nil {
		t.Fatal(err)
	}
	named := option.WithJSONSet("massgen_session_id", "chat_nodefault")
	if _, err := c.Chat.Completions.New(context.Background(), ask(chatapi.DefaultModel, "What is 6 * 7?"), named); err != nil {
		t.Errorf("a stored session named with the default team's name on a server without one: %v", err)
	}
	named = option.WithJSONSet("massgen_session_id", "chat_quick")
	if _, err := c.Chat.Completions.New(context.Background(), ask("massgen/quick", "What is 6 * 7?"), named); err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat.Completions.New(context.Background(), ask(chatapi.DefaultModel, "What is 6 * 7?"), named)
	if e := wantAPIError(t, "the default team's name for a session of massgen/quick", err, http.StatusConflict, "session_exists"); !strings.Contains(e.Message, "massgen/quick") {
		t.Errorf("the refusal says %q", e.Message)
	}
}

// stored reads a session as stored (its task and context): a resume with
// its id and no task returns it without running anything.
func stored(svc *coordination.Service, id string) (*coordination.Session, error) {
	return svc.CreateOrResume(context.Background(), coordination.RunRequest{SessionID: id})
}

// waitRunning waits for the tenant's one running session and returns its id.
func waitRunning(t *testing.T, s *served, tenant string) string {
	t.Helper()
	var id string
	waitFor(t, func() bool {
		s.mu.Lock()
		svc := s.services[tenant]
		s.mu.Unlock()
		if svc == nil {
			return false
		}
		list, err := svc.Sessions(context.Background())
		if err != nil || len(list) == 0 {
			return false
		}
		id = list[0].SessionID
		_, ok := svc.Running(id)
		return ok
	}, "no session of tenant %s started running", tenant)
	return id
}

func waitFor(t *testing.T, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf(format, args...)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestABrokenTeamFileIsRefusedSayingWhy: a team file that is there but
// cannot be used (its YAML wrong, a model without a key) is refused naming
// its problem, as list_backends does, the server's paths hidden. Before,
// it was "does not exist here", which sent its user to look for a file
// the operator had put there.
func TestABrokenTeamFileIsRefusedSayingWhy(t *testing.T) {
	s := serve(t)
	c := s.client(tokenA)
	_, err := c.Chat.Completions.New(context.Background(), ask("massgen/broken", "What is 6 * 7?"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v, want an API error", err)
	}
	if apiErr.StatusCode != http.StatusNotFound || apiErr.Code != "model_not_found" {
		t.Errorf("status %d code %q", apiErr.StatusCode, apiErr.Code)
	}
	for _, want := range []string{"the team file broken.yaml", "cannot be used", "agents", "massgen/quick"} {
		if !strings.Contains(apiErr.Message, want) {
			t.Errorf("message %q lacks %q", apiErr.Message, want)
		}
	}
	if strings.Contains(apiErr.Message, "does not exist") || strings.Contains(apiErr.Message, os.TempDir()) {
		t.Errorf("message %q says the file is missing or shows the server's path", apiErr.Message)
	}
}

// TestABadSessionIDIsRefusedNamingItsField: a massgen_session_id that is
// not a session id is a 400 whose param names the field, as every other
// refusal of a field does. Before, param was null and the message ended in
// the core's ": invalid input".
func TestABadSessionIDIsRefusedNamingItsField(t *testing.T) {
	s := serve(t)
	c := s.client(tokenA)
	_, err := c.Chat.Completions.New(context.Background(), ask("massgen/quick", "What is 6 * 7?"), option.WithJSONSet("massgen_session_id", "../x"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v, want an API error", err)
	}
	if apiErr.StatusCode != http.StatusBadRequest || apiErr.Param != "massgen_session_id" {
		t.Errorf("status %d param %q, want 400 massgen_session_id", apiErr.StatusCode, apiErr.Param)
	}
	if !strings.Contains(apiErr.Message, `"../x"`) || strings.HasSuffix(apiErr.Message, "invalid input") {
		t.Errorf("message %q", apiErr.Message)
	}
}
