package mcp

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/massgen-go/massgen-mcp/coordination"
	"github.com/massgen-go/massgen-mcp/coordination/checkpoint"
)

// fill sets every exported field reachable from v to a value that is not
// zero, so a conversion that drops a field shows.
func fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Pointer:
		if depth > 4 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString("s")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(3)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Interface:
		v.Set(reflect.ValueOf("any"))
	}
}

// TestWireTypesCarryEveryField: each published result encodes exactly as the
// coordination struct it is converted from. A field added to coordination
// fails here until the wire type says whether it belongs on the wire (add it
// to wire.go and wireconv.go, then review the snapshot diff).
func TestWireTypesCarryEveryField(t *testing.T) {
	for name, conv := range map[string]func(v reflect.Value) any{
		"TeamResult": func(v reflect.Value) any { return wireTeamResult(v.Interface().(coordination.TeamResult)) },
		"StatusView": func(v reflect.Value) any { return wireStatusView(v.Interface().(coordination.StatusView)) },
		"StepResult": func(v reflect.Value) any { return wireStepResult(v.Interface().(coordination.StepResult)) },
		"Rules":      func(v reflect.Value) any { return wireRules(v.Interface().(coordination.Rules)) },
		"Estimate":   func(v reflect.Value) any { return wireEstimate(v.Interface().(coordination.Estimate)) },
		"ApplyResult": func(v reflect.Value) any {
			return wireApplyResult(v.Interface().(coordination.ApplyResult))
		},
		"CheckpointResult": func(v reflect.Value) any {
			return wireCheckpointResult(v.Interface().(checkpoint.Result))
		},
		// The plan and action goals go both ways: a draft plan and goals in,
		// the reviewed plan out.
		"Plan": func(v reflect.Value) any { return wirePlan(wirePlan(v.Interface().(checkpoint.Plan)).plan()) },
		"ActionGoals": func(v reflect.Value) any {
			goals := v.Interface().([]checkpoint.ActionGoal)
			back := make([]ActionGoal, len(goals))
			for i, g := range actionGoals(wireActionGoals(goals)) {
				back[i] = ActionGoal(g)
			}
			return back
		},
	} {
		var src any
		switch name {
		case "TeamResult":
			src = &coordination.TeamResult{}
		case "StatusView":
			src = &coordination.StatusView{}
		case "StepResult":
			src = &coordination.StepResult{}
		case "Rules":
			src = &coordination.Rules{}
		case "Estimate":
			src = &coordination.Estimate{}
		case "ApplyResult":
			src = &coordination.ApplyResult{}
		case "CheckpointResult":
			src = &checkpoint.Result{}
		case "Plan":
			src = &checkpoint.Plan{}
		case "ActionGoals":
			src = &[]checkpoint.ActionGoal{}
		}
		v := reflect.ValueOf(src).Elem()
		fill(v, 0)
		want, err := json.Marshal(v.Interface())
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(conv(v))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s on the wire differs from coordination's:\nwire:         %s\ncoordination: %s", name, got, want)
		}
	}
}

// wireActionGoals is the wire form of action goals (the test's way back).
func wireActionGoals(goals []checkpoint.ActionGoal) []ActionGoal {
	out := make([]ActionGoal, len(goals))
	for i, g := range goals {
		out[i] = ActionGoal{ID: g.ID, Goal: g.Goal, PreferredTools: g.PreferredTools, Constraints: g.Constraints}
	}
	return out
}
