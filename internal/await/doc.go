// Package await is how tests wait for something a loaded machine makes
// slow to become ready (a real CLI's first API call, a process up and
// saying so): a generous bound, since CI runs its lanes side by side on
// two cores, and a failure at once when the thing waited on has ended
// first, so a generous bound costs a failing test nothing. A deadline that
// is itself under test (a step killed within its timeout, a cancel that
// stops calls within a second) is not a wait for readiness and does not
// belong here. Imported by tests only.
package await
