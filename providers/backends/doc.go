// Package backends opens a Provider for a parsed model spec: the one place
// that knows every backend package. It knows nothing of coordination.
package backends
