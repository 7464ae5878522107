// Package providers turns one coordination request into one action by calling
// a model: the Provider interface, model-spec parsing for every backend, the
// deterministic sim backend, and (later) the real API and CLI backends with
// their usage, pricing and retries.
//
// providers knows nothing of sessions, ledgers or consensus: it receives a
// fully built Request and reports what the model did.
package providers
