// Package unprivileged lets a test meet the file modes a server not run as
// root meets, when the tests run as root (as CI does): root is let through
// a directory's missing write or search bit, so a test of a read-only
// directory an agent left would pass there whatever the code does. It is
// for tests only, and knows nothing of the project.
package unprivileged
