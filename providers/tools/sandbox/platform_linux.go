package sandbox

// unsupported is empty on Linux: whether the sandbox works is bwrap's to say.
func unsupported() string { return "" }
