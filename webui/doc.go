// Package webui is the web view of a served team (`serve --http` at /ui/):
// the session list and a live session page — agent cards, the consensus
// map, the timeline, each answer rendered and diffed against the agent's
// previous one, the final answer, the winner's files and the cost as it
// grows — pushed as server-sent events from the store's session watch, so a
// run of another process or replica shows live.
//
// It only translates: what a page shows is coordination's view drawn by
// coordination/report (the consensus map, the swimlane, the outcome line),
// and its cancel and resume call the same methods as cancel_team and
// run_team, through Host (which mcp.Server satisfies; webui never imports
// mcp). It logs its requests in itself — a one-time link, then a session
// cookie, or a tenant's bearer token — checks a CSRF token on every
// state-changing request, and shows a tenant only its own sessions; the
// Host and Origin checks against DNS rebinding are the server's guards',
// in front of every route (mcp.Surface with OwnLogin). Its assets are embedded; it loads nothing
// from elsewhere.
package webui
