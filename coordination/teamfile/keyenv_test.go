package teamfile

import (
	"slices"
	"strings"
	"testing"
)

// TestATeamFileNamesAnAgentsKeyWithAPIKeyEnvInEitherFormat pins how a team
// file says which key goes to its agent's endpoint: api_key_env names a
// variable (our format on the agent, MassGen's in backend:), every agent of a
// file is marked the operator's, and the setting is listed as operator-only.
func TestATeamFileNamesAnAgentsKeyWithAPIKeyEnvInEitherFormat(t *testing.T) {
	for name, yml := range map[string]string{
		"ours":    "agents:\n  - {model: 'vllm/qwen@http://10.0.0.5:8000/v1', api_key_env: DUMMY_VLLM_KEY}\n  - {model: sim}\n",
		"MassGen": "agents:\n  - backend: {type: vllm, model: qwen, base_url: 'http://10.0.0.5:8000/v1', api_key_env: DUMMY_VLLM_KEY}\n  - backend: {type: sim}\n",
	} {
		team := mustParse(t, yml)
		a, b := team.Agents[0], team.Agents[1]
		if a.KeyEnv != "DUMMY_VLLM_KEY" || !a.Operator || b.KeyEnv != "" || !b.Operator {
			t.Errorf("%s: agents %+v, %+v; want api_key_env on the first and both the operator's", name, a, b)
		}
		if !slices.ContainsFunc(team.Operator, func(k string) bool { return strings.HasSuffix(k, "api_key_env") }) {
			t.Errorf("%s: operator-only settings %v lack api_key_env", name, team.Operator)
		}
	}
}

func TestAPIKeyEnvNamesAVariableAndOnlyWhereAKeyOfOursGoes(t *testing.T) {
	for yml, want := range map[string]string{
		"agents:\n  - {model: openai/m, api_key_env: 'sk-dummy key'}\n":     "must name an environment variable",
		"agents:\n  - {model: sim, api_key_env: DUMMY_KEY}\n":               "does not apply to sim agents",
		"agents:\n  - {model: claude_code, api_key_env: DUMMY_KEY}\n":       "does not apply to claude_code agents",
		"agents:\n  - backend: {type: codex, api_key_env: DUMMY_KEY}\n":     "does not apply to codex agents",
		"agents:\n  - backend: {type: openai, api_key: sk-dummy-literal}\n": "api_key_env",
	} {
		_, err := parse(t, yml, Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", yml, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "sk-dummy") {
			t.Errorf("%q: the refusal repeats the value: %v", yml, err)
		}
	}
}
