package mcp

import (
	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/workspace"
)

// The conversions from coordination's structs to the wire types (wire.go),
// field by field.

func wireTeamResult(v coordination.TeamResult) TeamResult {
	return TeamResult{
		SessionID:      v.SessionID,
		Status:         v.Status,
		StopReason:     (*string)(v.StopReason),
		HowChosen:      v.HowChosen,
		Tie:            v.Tie,
		Winner:         wireWinnerPtr(v.Winner),
		FinalAnswer:    v.FinalAnswer,
		Consensus:      wireConsensusView(v.Consensus),
		Votes:          wireVoteViews(v.Votes),
		Answers:        wireAnswerViews(v.Answers),
		NextAgents:     v.NextAgents,
		Steps:          v.Steps,
		Usage:          wireUsageView(v.Usage),
		CostUSD:        v.CostUSD,
		CostEstimated:  v.CostEstimated,
		BudgetEnforced: v.BudgetEnforced,
		Duration:       v.Duration,
		LastAlive:      v.LastAlive,
		SessionDir:     v.SessionDir,
		FinalNote:      v.FinalNote,
		HowChosenNote:  v.HowChosenNote,
		NotAgreed:      v.NotAgreed,
		CancelReason:   v.CancelReason,
		Agents:         wireAgentUsages(v.Agents),
		Dropped:        wireDroppedAgents(v.Dropped),
		Degraded:       v.Degraded,
		Files:          wireFileViews(v.Files),
		FilesCount:     v.FilesCount,
		FilesDir:       v.FilesDir,
		FilesLeftOut:   v.FilesLeftOut,
		Applied:        wireAppliedPtr(v.Applied),
		Changes:        wirePreviewPtr(v.Changes),
		ChangesPending: v.ChangesPending,
		WorkspaceTools: v.WorkspaceTools,
	}
}

func wireStatusView(v coordination.StatusView) StatusView {
	return StatusView{
		Result:    wireTeamResultPtr(v.Result),
		Task:      v.Task,
		Rules:     ptr(wireRules(v.Rules)),
		Seed:      v.Seed,
		Criteria:  v.Criteria,
		Agents:    wireAgentStatuses(v.Agents),
		Revote:    v.Revote,
		CreatedAt: &v.CreatedAt,
		Foreign:   v.Foreign,
		Timeline:  wireEvents(v.Timeline),
		Turn:      v.Turn,
		Previous:  v.Previous,
		TeamName:  v.TeamName,

		TimelineCount: v.TimelineCount,
	}
}

func wireStepResult(v coordination.StepResult) StepResult {
	return StepResult{
		SessionID:   v.SessionID,
		AgentID:     v.AgentID,
		Action:      v.Action,
		Label:       v.Label,
		Target:      v.Target,
		TargetLabel: v.TargetLabel,
		ErrorClass:  v.ErrorClass,
		Message:     v.Message,
		SeenSteps:   v.SeenSteps,
		Stale:       v.Stale,
		Consensus:   wireConsensusView(v.Consensus),
		NextAgents:  v.NextAgents,
		Finished:    v.Finished,
		Result:      wireTeamResultPtr(v.Result),
		View:        wireHostViewPtr(v.View),
	}
}

func wireWinner(v coordination.Winner) Winner {
	return Winner{
		AgentID: v.AgentID,
		Label:   v.Label,
		Model:   v.Model,
	}
}

func wireConsensusView(v coordination.ConsensusView) ConsensusView {
	return ConsensusView{
		Rule:    string(v.Rule),
		Reached: v.Reached,
		RuleMet: v.RuleMet,
		Leader:  v.Leader,
		Tally:   v.Tally,

		Weights:       wireVoteWeights(v.Weights),
		WeightedTally: v.WeightedTally,
	}
}

func wireVoteWeights(v []coordination.VoteWeight) []VoteWeight {
	var out []VoteWeight
	for _, w := range v {
		out = append(out, VoteWeight{AgentID: w.Agent, Weight: w.Weight, Reason: w.Reason})
	}
	return out
}

func wireVoteView(v coordination.VoteView) VoteView {
	return VoteView{
		Voter:       v.Voter,
		Target:      v.Target,
		TargetLabel: v.TargetLabel,
		Reason:      v.Reason,
		Stale:       v.Stale,
	}
}

func wireAnswerView(v coordination.AnswerView) AnswerView {
	return AnswerView{
		AgentID: v.AgentID,
		Label:   v.Label,
		Model:   v.Model,
		Content: v.Content,
	}
}

func wireUsageView(v coordination.UsageView) UsageView {
	return UsageView{
		Input:       v.Input,
		CachedInput: v.CachedInput,
		Output:      v.Output,
		Reasoning:   v.Reasoning,
	}
}

func wireAgentUsage(v coordination.AgentUsage) AgentUsage {
	return AgentUsage{
		AgentID:       v.AgentID,
		Model:         v.Model,
		Steps:         v.Steps,
		Usage:         wireUsageView(v.Usage),
		CostUSD:       v.CostUSD,
		CostEstimated: v.CostEstimated,
	}
}

func wireDroppedAgent(v coordination.DroppedAgent) DroppedAgent {
	return DroppedAgent{
		AgentID:      v.AgentID,
		Model:        v.Model,
		Class:        v.Class,
		Message:      v.Message,
		RetryAfterMS: v.RetryAfterMS,
	}
}

func wireFileView(v coordination.FileView) FileView {
	return FileView{
		Path:   v.Path,
		Bytes:  v.Bytes,
		SHA256: v.SHA256,
	}
}

func wireApplied(v workspace.Applied) Applied {
	return Applied{
		Context:   v.Context,
		Written:   wireChanges(v.Written),
		Conflicts: wireChanges(v.Conflicts),
		Skipped:   wireChanges(v.Skipped),
		Held:      wireChanges(v.Held),
	}
}

func wireRules(v coordination.Rules) Rules {
	return Rules{
		Consensus:           string(v.Consensus),
		MaxRounds:           v.MaxRounds,
		MaxAnswersPerAgent:  v.MaxAnswersPerAgent,
		TimeoutSeconds:      v.TimeoutSeconds,
		StepTimeoutSeconds:  v.StepTimeoutSeconds,
		CostBudgetUSD:       v.CostBudgetUSD,
		TokenBudget:         v.TokenBudget,
		MaxAgentFailures:    v.MaxAgentFailures,
		Final:               string(v.Final),
		AnswerFormat:        string(v.AnswerFormat),
		EarlyStop:           v.EarlyStop,
		Aliases:             v.Aliases,
		RotateOwnLast:       v.RotateOwnLast,
		BlindFirst:          v.BlindFirst,
		PeerAnswerTokenCap:  v.PeerAnswerTokenCap,
		MaxToolCallsPerStep: v.MaxToolCallsPerStep,
		Weights:             wireVoteWeights(v.Weights),
		DominantStop:        v.DominantStop,
		Strict:              v.Strict,
	}
}

func wireAgentStatus(v coordination.AgentStatus) AgentStatus {
	return AgentStatus{
		ID:           v.ID,
		Alias:        v.Alias,
		Model:        v.Model,
		Host:         v.Host,
		Status:       v.Status,
		Steps:        v.Steps,
		Answers:      v.Answers,
		LatestLabel:  v.LatestLabel,
		Preview:      v.Preview,
		Vote:         wireVoteViewPtr(v.Vote),
		StandingVote: v.StandingVote,
		Next:         v.Next,
		Why:          v.Why,
		LastError:    v.LastError,
		Usage:        wireAgentUsage(v.Usage),
		LastAlive:    v.LastAlive,
	}
}

func wireEvent(v coordination.Event) Event {
	return Event{
		Time:    v.Time,
		Type:    v.Type,
		Agent:   v.Agent,
		Step:    v.Step,
		Message: v.Message,
		Data:    v.Data,
	}
}

func wireHostView(v coordination.HostView) HostView {
	return HostView{
		Prompt:   v.Prompt,
		System:   v.System,
		Actions:  v.Actions,
		VoteEnum: v.VoteEnum,
		Revote:   v.Revote,
	}
}

func wireChange(v workspace.Change) Change {
	return Change{
		Path:   v.Path,
		Op:     v.Op,
		Reason: v.Reason,
	}
}

func wireAgentStatuses(v []coordination.AgentStatus) []AgentStatus {
	if v == nil {
		return nil
	}
	out := make([]AgentStatus, len(v))
	for i := range v {
		out[i] = wireAgentStatus(v[i])
	}
	return out
}

func wireAgentUsages(v []coordination.AgentUsage) []AgentUsage {
	if v == nil {
		return nil
	}
	out := make([]AgentUsage, len(v))
	for i := range v {
		out[i] = wireAgentUsage(v[i])
	}
	return out
}

func wireAnswerViews(v []coordination.AnswerView) []AnswerView {
	if v == nil {
		return nil
	}
	out := make([]AnswerView, len(v))
	for i := range v {
		out[i] = wireAnswerView(v[i])
	}
	return out
}

func wireAppliedPtr(v *workspace.Applied) *Applied {
	if v == nil {
		return nil
	}
	w := wireApplied(*v)
	return &w
}

func wireChanges(v []workspace.Change) []Change {
	if v == nil {
		return nil
	}
	out := make([]Change, len(v))
	for i := range v {
		out[i] = wireChange(v[i])
	}
	return out
}

func wireDroppedAgents(v []coordination.DroppedAgent) []DroppedAgent {
	if v == nil {
		return nil
	}
	out := make([]DroppedAgent, len(v))
	for i := range v {
		out[i] = wireDroppedAgent(v[i])
	}
	return out
}

func wireEvents(v []coordination.Event) []Event {
	if v == nil {
		return nil
	}
	out := make([]Event, len(v))
	for i := range v {
		out[i] = wireEvent(v[i])
	}
	return out
}

func wireFileViews(v []coordination.FileView) []FileView {
	if v == nil {
		return nil
	}
	out := make([]FileView, len(v))
	for i := range v {
		out[i] = wireFileView(v[i])
	}
	return out
}

func wireHostViewPtr(v *coordination.HostView) *HostView {
	if v == nil {
		return nil
	}
	w := wireHostView(*v)
	return &w
}

func wireTeamResultPtr(v *coordination.TeamResult) *TeamResult {
	if v == nil {
		return nil
	}
	w := wireTeamResult(*v)
	return &w
}

func wireVoteViewPtr(v *coordination.VoteView) *VoteView {
	if v == nil {
		return nil
	}
	w := wireVoteView(*v)
	return &w
}

func wireVoteViews(v []coordination.VoteView) []VoteView {
	if v == nil {
		return nil
	}
	out := make([]VoteView, len(v))
	for i := range v {
		out[i] = wireVoteView(v[i])
	}
	return out
}

func wireWinnerPtr(v *coordination.Winner) *Winner {
	if v == nil {
		return nil
	}
	w := wireWinner(*v)
	return &w
}

func wireEstimate(v coordination.Estimate) Estimate {
	agents := make([]AgentEstimate, len(v.Agents))
	for i, a := range v.Agents {
		agents[i] = AgentEstimate(a)
	}
	return Estimate{Agents: agents, RoundCostUSD: v.RoundCostUSD, RoundTokens: v.RoundTokens,
		SessionCostUSD: v.SessionCostUSD, SessionTokens: v.SessionTokens, Unpriced: v.Unpriced,
		CostBudgetUSD: v.CostBudgetUSD, TokenBudget: v.TokenBudget, Problem: v.Problem}
}

func ptr[T any](v T) *T { return &v }

func wirePreviewPtr(v *workspace.Preview) *Preview {
	if v == nil {
		return nil
	}
	w := Preview{Context: v.Context, Files: wireFileChanges(v.Files), Count: v.Count, Added: v.Added, Removed: v.Removed, ConfigCount: v.ConfigCount}
	if len(v.Config) > 0 {
		w.Config = wireFileChanges(v.Config)
	}
	return &w
}

func wireFileChanges(v []workspace.FileChange) []FileChange {
	out := make([]FileChange, len(v))
	for i, f := range v {
		out[i] = FileChange{Path: f.Path, Op: f.Op, Added: f.Added, Removed: f.Removed, Binary: f.Binary, Bytes: f.Bytes, Link: f.Link, Runs: f.Runs}
	}
	return out
}

func wireApplyResult(v coordination.ApplyResult) ApplyResult {
	return ApplyResult{SessionID: v.SessionID, Applied: wireAppliedPtr(v.Applied), AlreadyApplied: v.AlreadyApplied}
}
