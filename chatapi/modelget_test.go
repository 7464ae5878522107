package chatapi_test

import (
	"context"
	"net/http"
	"testing"
)

// TestAModelIsRetrievedByItsName: GET /v1/models/{model} (the SDKs'
// models.retrieve, which some clients call to check a model before using
// it) answers the model object of a listed name — a team file's name holds
// a slash, sent as is or escaped — and 404 model_not_found for another;
// it was 404 unknown_url for every name.
func TestAModelIsRetrievedByItsName(t *testing.T) {
	s := serve(t)
	c := s.client(tokenA)
	for _, id := range []string{"massgen", "massgen/quick"} {
		m, err := c.Models.Get(context.Background(), id)
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		if m.ID != id || m.Object != "model" || m.OwnedBy == "" {
			t.Errorf("%s: %+v", id, m)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, s.url+"/v1/models/massgen%2Fslow", nil)
	req.Header.Set("Authorization", "Bearer "+tokenA)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("an escaped team file's name: %d", resp.StatusCode)
	}
	for _, id := range []string{"gpt-4o", "massgen/broken"} {
		_, err := c.Models.Get(context.Background(), id)
		wantAPIError(t, id, err, http.StatusNotFound, "model_not_found")
	}
}
