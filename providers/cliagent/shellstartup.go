package cliagent


// shellStartupFiles are the files in HOME a shell runs as it starts: bash's
// and a POSIX shell's (a login shell's first, then an interactive one's),
// and zsh's.
var shellStartupFiles = []string{".bash_profile", ".bash_login", ".profile", ".bashrc", ".bash_logout", ".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout"}
