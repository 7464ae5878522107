// Package keys finds the credentials and base URLs a backend needs —
// the environment first, then ./.env, then $HOME/.env — without ever changing
// the process environment, and keeps them out of every message: Mask scrubs a
// text (the secrets it is given, then providers.MaskKeys' key shapes),
// MaskError an error, and Redact a whole provider.
//
// keys knows the backend table of package providers (which variables a
// backend reads) and nothing of any API's wire format, of retries or of
// coordination. It never logs, stores or echoes a key; it only hands it to
// the caller that opens the backend.
package keys
