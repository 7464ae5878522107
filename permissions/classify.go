package permissions

import (
	"encoding/json"
	"net/url"
	"path"
	"strings"
)

// ForCommand classifies a shell command line: exec(the line) first, then
// exec(each simple command, wrappers dropped), exec(opaque: …) for a stage
// whose commands cannot be read from the line, and what its programs are
// seen to do — net(host) for fetchers, remote shells
// and package installs, git(…) for git, publish(…) for publishers, write(…)
// for redirections and the files a command names to write (tee, cp, rm, …).
// Best-effort (see parseShell).
func ForCommand(cmd string) []Action {
	out := []Action{{Kind: Exec, Target: cmd}}
	seen := map[Action]bool{out[0]: true}
	add := func(a Action) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	walk(cmd, 0, func(pl pipeline) {
		for _, st := range pl {
			for _, o := range st.out {
				if !harmlessDevices[o] { // 2>/dev/null writes nothing
					for _, p := range shellPaths(st.at(o)) {
						add(Action{Kind: Write, Target: p})
					}
				}
			}
			if len(st.words) == 0 {
				continue
			}
			// Each simple command too, wrappers dropped, so exec(git push*)
			// matches "make && sudo git push".
			add(Action{Kind: Exec, Target: strings.Join(st.words, " ")})
			add(Action{Kind: Exec, Target: canonical(st.words)})
			if st.priv != "" && base(st.words[0]) != st.priv {
				// Raised by a wrapper however spelled (/usr/bin/sudo,
				// 'sudo', env sudo): named as the risk reads it.
				add(Action{Kind: Exec, Target: st.priv + " " + canonical(st.words)})
			}
			if st.opaque {
				// What runs cannot be read from the line: external, so
				// it is asked, and exec(opaque: *) names it.
				add(Action{Kind: Exec, Target: Opaque + canonical(st.words)})
			}
			for _, a := range programActions(base(st.words[0]), st.words[1:], st.at) {
				add(a)
			}
		}
	})
	return out
}

// canonical is a simple command as rules name it: the program by its name,
// not its path (/bin/rm is rm), and git's own options dropped (git -C dir
// push is git push).
func canonical(words []string) string {
	prog, args := base(words[0]), words[1:]
	if prog == "git" {
		args = gitArgs(args)
	}
	return strings.Join(append([]string{prog}, args...), " ")
}

// gitValued are git's own options that take the next word as their value.
var gitValued = map[string]bool{"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true,
	"--super-prefix": true, "--config-env": true, "--attr-source": true, "--list-cmds": true}

// gitArgs are git's words from its subcommand on: the options git reads
// itself come first (git -C dir -c k=v --no-pager push), and a push behind
// them is still a push.
func gitArgs(args []string) []string {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if gitValued[args[0]] && len(args) > 1 {
			args = args[2:]
		} else {
			args = args[1:]
		}
	}
	return args
}

// netPrograms reach a host named by their first argument that is not a flag.
var netPrograms = map[string]bool{"curl": true, "wget": true, "http": true, "https": true, "nc": true, "ncat": true,
	"netcat": true, "telnet": true, "ssh": true, "scp": true, "sftp": true, "ftp": true, "rsync": true, "ping": true,
	"dig": true, "nslookup": true, "host": true, "aria2c": true, "fetch": true, "socat": true}

// installers fetch packages from a registry: program → subcommands → host.
var installers = map[string]struct {
	subs []string
	host string
}{
	"pip":     {[]string{"install", "download"}, "pypi.org"},
	"pip3":    {[]string{"install", "download"}, "pypi.org"},
	"uv":      {[]string{"add", "sync", "pip"}, "pypi.org"},
	"npm":     {[]string{"install", "i", "ci", "add", "update"}, "registry.npmjs.org"},
	"pnpm":    {[]string{"install", "i", "add", "update"}, "registry.npmjs.org"},
	"yarn":    {[]string{"install", "add", "upgrade"}, "registry.npmjs.org"},
	"npx":     {nil, "registry.npmjs.org"},
	"go":      {[]string{"get", "install", "mod"}, "proxy.golang.org"},
	"cargo":   {[]string{"install", "add", "fetch", "update"}, "crates.io"},
	"gem":     {[]string{"install"}, "rubygems.org"},
	"apt":     {[]string{"install", "update"}, "deb.debian.org"},
	"apt-get": {[]string{"install", "update"}, "deb.debian.org"},
	"brew":    {[]string{"install"}, "formulae.brew.sh"},
}

func programActions(prog string, args []string, at func(string) string) []Action {
	first := ""
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			first = a
			break
		}
	}
	var out []Action
	switch {
	case prog == "git":
		args = gitArgs(args)
		first = ""
		if len(args) > 0 {
			first = args[0]
		}
		sub := strings.Join(args, " ")
		out = append(out, Action{Kind: Git, Target: sub})
		if first == "clone" || first == "fetch" || first == "pull" || first == "ls-remote" || first == "submodule" {
			for _, a := range args[1:] {
				if h := hostOf(a); h != "" {
					out = append(out, Action{Kind: Net, Target: h})
				}
			}
		}
	case netPrograms[prog]:
		host := ""
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				if host = hostOf(a); host != "" {
					break
				}
			}
		}
		if host == "" {
			host = "unknown"
		}
		out = append(out, Action{Kind: Net, Target: host})
	case prog == "gh" && first == "release":
		out = append(out, Action{Kind: Publish, Target: "github release"})
	case prog == "docker" || prog == "podman":
		if first == "push" {
			out = append(out, Action{Kind: Publish, Target: prog + " push"})
		} else if first == "pull" || first == "build" || first == "run" {
			out = append(out, Action{Kind: Net, Target: "registry-1.docker.io"})
		}
	case (prog == "npm" || prog == "pnpm" || prog == "yarn") && first == "publish":
		out = append(out, Action{Kind: Publish, Target: "npm"})
	case prog == "cargo" && first == "publish":
		out = append(out, Action{Kind: Publish, Target: "cargo"})
	case prog == "twine" && first == "upload", (prog == "poetry" || prog == "uv" || prog == "flit" || prog == "hatch") && first == "publish":
		out = append(out, Action{Kind: Publish, Target: "pypi"})
	case prog == "gem" && first == "push":
		out = append(out, Action{Kind: Publish, Target: "rubygems"})
	}
	if in, ok := installers[prog]; ok && (in.subs == nil || contains(in.subs, first)) {
		out = append(out, Action{Kind: Net, Target: in.host})
	}
	for _, t := range fileWrites(prog, args) {
		if !harmlessDevices[t] {
			for _, p := range shellPaths(at(t)) {
				out = append(out, Action{Kind: Write, Target: p})
			}
		}
	}
	return out
}

// writeValued are, for each program that writes the files it names, its
// options that take the next word as their value (cp -t dir, touch -d
// date), so the value is not taken for a file.
var writeValued = map[string]map[string]bool{
	"tee":      {},
	"cp":       {"-t": true, "--target-directory": true, "-S": true, "--suffix": true},
	"mv":       {"-t": true, "--target-directory": true, "-S": true, "--suffix": true},
	"ln":       {"-t": true, "--target-directory": true, "-S": true, "--suffix": true},
	"install":  {"-t": true, "--target-directory": true, "-S": true, "--suffix": true, "-m": true, "--mode": true, "-o": true, "--owner": true, "-g": true, "--group": true},
	"rm":       {},
	"rmdir":    {},
	"unlink":   {},
	"shred":    {"-n": true, "--iterations": true, "-s": true, "--size": true, "--random-source": true},
	"mkdir":    {"-m": true, "--mode": true},
	"touch":    {"-d": true, "--date": true, "-r": true, "--reference": true, "-t": true},
	"truncate": {"-s": true, "--size": true, "-r": true, "--reference": true},
	"sed":      {"-e": true, "--expression": true, "-f": true, "--file": true, "-l": true, "--line-length": true},
	"dd":       {},
}

// fileWrites are the paths a program writes by naming them: tee's files;
// cp's, mv's, ln's and install's destination (and where a directory
// destination puts each source, dir/source; mv's sources too, which it
// removes); rm's, rmdir's, unlink's, shred's, mkdir's, touch's and
// truncate's operands (a recursive rm's also as dir/*, everything under
// it); dd's of=; sed -i's files. Reads are not named: a command's reads
// stay inside what its sandbox sees.
func fileWrites(prog string, args []string) []string {
	valued, ok := writeValued[prog]
	if !ok {
		return nil
	}
	var ops []string
	opt := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case prog == "dd":
			if of, ok := strings.CutPrefix(a, "of="); ok {
				ops = append(ops, of)
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			name, val, eq := strings.Cut(a, "=")
			if valued[name] && !eq && i+1 < len(args) {
				i++
				val = args[i]
			}
			opt[name] = val
		default:
			ops = append(ops, a)
		}
	}
	has := func(short byte, long string) bool {
		for o := range opt {
			if o == long || (len(o) > 1 && o[1] != '-' && !valued[o] && strings.IndexByte(o[1:], short) >= 0) {
				return true
			}
		}
		return false
	}
	switch prog {
	case "cp", "mv", "ln", "install":
		var out []string
		if prog == "mv" {
			for _, src := range ops {
				out = append(out, src, path.Join(src, "*"))
			}
		}
		if prog == "install" && has('d', "--directory") {
			return append(out, ops...)
		}
		dir, srcs := opt["-t"]+opt["--target-directory"], ops
		if dir == "" {
			if len(ops) == 1 && prog == "ln" { // ln target: a link in .
				return append(out, base(ops[0]))
			}
			if len(ops) < 2 {
				return out
			}
			dir, srcs = ops[len(ops)-1], ops[:len(ops)-1]
		}
		out = append(out, dir)
		for _, src := range srcs {
			out = append(out, path.Join(dir, base(strings.TrimRight(src, "/"))))
		}
		return out
	case "rm":
		if !has('r', "--recursive") && !has('R', "--recursive") {
			return ops
		}
		var out []string
		for _, op := range ops {
			out = append(out, op, path.Join(op, "*"))
		}
		return out
	case "sed":
		if !has('i', "--in-place") && !hasPrefix(opt, "-i") && !hasPrefix(opt, "--in-place") {
			return nil
		}
		if _, e := opt["-e"]; !e && opt["--expression"] == "" && opt["-f"] == "" && opt["--file"] == "" && len(ops) > 0 {
			ops = ops[1:] // the script
		}
	}
	return ops
}

// hasPrefix tells whether an option that begins with prefix was given
// (sed -i.bak, --in-place=.bak).
func hasPrefix(opt map[string]string, prefix string) bool {
	for o := range opt {
		if strings.HasPrefix(o, prefix) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hostOf is the host a URL, scp-style user@host:path or bare host.name
// names, or "".
func hostOf(s string) string {
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		return u.Hostname()
	}
	if at := strings.IndexByte(s, '@'); at >= 0 {
		s = s[at+1:]
	}
	if c := strings.IndexByte(s, ':'); c >= 0 {
		s = s[:c]
	}
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	if strings.Contains(s, ".") && !strings.HasPrefix(s, ".") && !strings.HasSuffix(s, ".") && !strings.ContainsAny(s, " =$*") {
		return s
	}
	return ""
}

// The toolbox's tool names, as providers/tools offers them.
const (
	ToolRunCommand = "run_command"
	ToolWriteFile  = "write_file"
	ToolEditFile   = "edit_file"
	ToolReadFile   = "read_file"
	ToolListFiles  = "list_files"
	ToolSearch     = "search"
	mcpPrefix      = "mcp__"
)

// ForTool classifies one call of an API agent's toolbox: run_command is its
// command's actions, write_file and edit_file write their path, the reading
// tools read theirs, mcp__<server>__<tool> is mcp(server/tool). A tool it
// does not know is mcp(tool), so a rule can still name it.
func ForTool(name string, args json.RawMessage) []Action {
	var a struct {
		Command string `json:"command"`
		Path    string `json:"path"`
	}
	_ = json.Unmarshal(args, &a) // a malformed call is the tool's to refuse
	p := PathIn(a.Path, "")
	if p == "" {
		p = "."
	}
	switch name {
	case ToolRunCommand:
		return ForCommand(a.Command)
	case ToolWriteFile, ToolEditFile:
		return []Action{{Kind: Write, Target: p}}
	case ToolReadFile, ToolListFiles, ToolSearch:
		return []Action{{Kind: Read, Target: p}}
	}
	if rest, ok := strings.CutPrefix(name, mcpPrefix); ok {
		if server, tool, ok := strings.Cut(rest, "__"); ok {
			return []Action{{Kind: MCP, Target: server + "/" + tool}}
		}
		return []Action{{Kind: MCP, Target: rest}}
	}
	return []Action{{Kind: MCP, Target: name}}
}
