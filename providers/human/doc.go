// Package human is the backend of an agent that is a person (model spec
// human or human/<label>): each step is one question, with the view
// summarised in its message and the reply as a small form — an answer, or a
// vote whose choices are the shown answers' aliases.
//
// human only turns a request into a question and the reply into an action;
// coordination validates the action as it does a model's. It knows nothing
// of how the question reaches the person: the caller puts a providers.Asker
// in the step's context (the MCP server: the client's elicitation), and a
// step without one fails with providers.ErrNoAsker.
package human
