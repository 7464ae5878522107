package cliagent

// SyncLoginBack copies back, as a run's end does, the run's copy name
// under root of the user's login file user, which held was when copied
// in, under the rules of info (a CLI's), for the tests of package
// cliagent_test, which can import the CLIs. It returns the warnings the
// copy-back reported.
func SyncLoginBack(info Info, user, root, name string, was []byte) []string {
	return (*loginCopy)(nil).add(info, user, root, name, was).syncBack()
}
