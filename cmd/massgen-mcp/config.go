package main

import (
	"bytes"
	"fmt"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/massgen-go/massgen-mcp/coordination"
)

// teamFile is team.yaml: our own small format.
//
//	agents:
//	  - model: sim/strong
//	  - id: critic
//	    model: sim
//	    system_message: You look for mistakes.
//	rules:
//	  consensus: majority
//	  max_rounds: 5
type teamFile struct {
	Agents []coordination.Agent `yaml:"agents"`
	Rules  coordination.Rules   `yaml:"rules"`
}

// loadTeamFile reads and checks a team.yaml; unknown keys are errors so a
// typo never silently changes a run.
func loadTeamFile(path string) (*teamFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read the team file: %w", coordination.ErrBadInput, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var tf teamFile
	if err := dec.Decode(&tf); err != nil {
		return nil, fmt.Errorf("%w: %s is not a valid team file (agents: [{id?, model, system_message?, temperature?}], rules: {…}): %w", coordination.ErrBadInput, path, err)
	}
	if len(tf.Agents) == 0 {
		return nil, fmt.Errorf("%w: %s lists no agents; add agents: [{model: sim}, …]", coordination.ErrBadInput, path)
	}
	for i, a := range tf.Agents {
		if a.Model == "" {
			return nil, fmt.Errorf("%w: %s: agent %d has no model", coordination.ErrBadInput, path, i+1)
		}
	}
	return &tf, nil
}
