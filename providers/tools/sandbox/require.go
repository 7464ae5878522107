package sandbox

import "os"

// RequireSandbox tells tests that need bwrap to fail instead of skipping
// when it is missing: on CI (CI set) and under .ci/run
// (MASSGEN_REQUIRE_SANDBOX set), an untested boundary must not pass.
func RequireSandbox() bool {
	return os.Getenv("CI") != "" || os.Getenv("MASSGEN_REQUIRE_SANDBOX") != ""
}
