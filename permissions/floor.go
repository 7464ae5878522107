package permissions

import (
	"path"
	"regexp"
	"strings"
)

// The floor: actions no rule, role, policy or approval lets through. Each
// has a name the audit and the agent's refusal quote.

// Floor tells whether an action is on the floor, and which of its cases.
func Floor(a Action) (string, bool) {
	switch a.Kind {
	case Exec:
		return floorCommand(a.Target)
	case Write:
		return floorPath(a.Target)
	}
	return "", false
}

var forkBomb = regexp.MustCompile(`([A-Za-z_:][A-Za-z0-9_:]*)\s*\(\s*\)\s*\{\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*\|\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*&\s*;?\s*\}`)

// rootish are the directories whose recursive removal or chmod ruins a
// machine or a home, after trailing slashes and /* are cut.
var rootish = map[string]bool{"": true, "~": true, "$HOME": true, "${HOME}": true, "/home": true, "/root": true,
	"/usr": true, "/etc": true, "/var": true, "/bin": true, "/sbin": true, "/boot": true, "/lib": true, "/lib64": true,
	"/opt": true, "/sys": true, "/proc": true, "/dev": true, "/srv": true, "/mnt": true}

var fetchers = map[string]bool{"curl": true, "wget": true, "fetch": true, "aria2c": true}

var interpreters = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true,
	"python": true, "python3": true, "perl": true, "ruby": true, "node": true, "php": true, "source": true, ".": true}

func floorCommand(cmd string) (string, bool) {
	if m := forkBomb.FindStringSubmatch(cmd); m != nil && m[1] == m[2] && m[2] == m[3] {
		return "a fork bomb", true
	}
	var name string
	walk(cmd, 0, func(pl pipeline) {
		if name != "" {
			return
		}
		name = floorPipeline(pl)
	})
	if name == "" {
		// A shell fed a command substitution that fetches: bash -c "$(curl …)",
		// bash <(curl …), eval "$(wget -O- …)".
		// Whether a shell is there is asked once, not per stage: each
		// inner line read once keeps a giant line's decision linear.
		p := parseShell(cmd, "")
		shell := false
		for _, pl := range p.pipelines {
			for _, st := range pl {
				if len(st.words) > 0 && (interpreters[base(st.words[0])] || st.words[0] == "eval") {
					shell = true
				}
			}
		}
		for _, in := range p.inner {
			if shell && fetches(in.text) {
				name = "running code fetched from the network (curl | sh)"
				break
			}
		}
	}
	return name, name != ""
}

func fetches(cmd string) bool {
	for _, pl := range segments(cmd) {
		for _, st := range pl {
			if len(st.words) > 0 && fetchers[base(st.words[0])] {
				return true
			}
		}
	}
	return false
}

func floorPipeline(pl pipeline) string {
	fetched := false
	for _, st := range pl {
		for _, o := range st.out {
			if n, hit := floorPath(o); hit {
				return n
			}
		}
		if len(st.words) == 0 {
			continue
		}
		prog, args := base(st.words[0]), st.words[1:]
		if fetched && interpreters[prog] {
			return "running code fetched from the network (curl | sh)"
		}
		if fetchers[prog] {
			fetched = true
		}
		if n := floorProgram(prog, args); n != "" {
			return n
		}
	}
	return ""
}

func floorProgram(prog string, args []string) string {
	switch {
	case prog == "rm" && recursive(args) && anyRootish(args):
		return "recursive removal of / or a home (rm -rf /)"
	case (prog == "chmod" || prog == "chown" || prog == "chgrp") && recursive(args) && anyRootish(args):
		return "recursive " + prog + " of / (chmod -R 777 /)"
	case strings.HasPrefix(prog, "mkfs") || prog == "mke2fs" || prog == "wipefs" || prog == "sfdisk" || prog == "parted" || prog == "fdisk":
		return "formatting or partitioning a disk (mkfs)"
	case prog == "dd":
		for _, a := range args {
			if strings.HasPrefix(a, "of=") {
				if n, hit := floorPath(strings.TrimPrefix(a, "of=")); hit {
					return "dd to a disk or system file (" + n + ")"
				}
			}
		}
	case prog == "shutdown" || prog == "reboot" || prog == "halt" || prog == "poweroff":
		return "shutting the machine down"
	case prog == "init" && len(args) > 0 && (args[0] == "0" || args[0] == "6"):
		return "shutting the machine down"
	case prog == "systemctl" && len(args) > 0 && (args[0] == "poweroff" || args[0] == "reboot" || args[0] == "halt"):
		return "shutting the machine down"
	case prog == "kill" || prog == "pkill":
		for _, a := range args {
			if a == "-1" && prog == "kill" {
				return "killing every process (kill -9 -1)"
			}
		}
	case prog == "tee" || prog == "cp" || prog == "mv" || prog == "install" || prog == "ln":
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				if n, hit := floorPath(a); hit && (prog == "tee" || a == args[len(args)-1]) {
					return n
				}
			}
		}
	}
	return ""
}

func recursive(args []string) bool {
	for _, a := range args {
		if a == "--recursive" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "rR")) {
			return true
		}
	}
	return false
}

func anyRootish(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		t := a
		for strings.HasSuffix(t, "/*") || strings.HasSuffix(t, "/") {
			t = strings.TrimSuffix(strings.TrimSuffix(t, "*"), "/")
		}
		if t == "/*" {
			t = ""
		}
		if rootish[t] && (t != "" || strings.HasPrefix(a, "/")) {
			return true
		}
	}
	return false
}

// systemDirs are where a write would change the machine rather than a
// project.
var systemDirs = []string{"/etc", "/boot", "/sys", "/proc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/dev"}

// harmlessDevices may be written to: discarding output, a terminal.
var harmlessDevices = map[string]bool{"/dev/null": true, "/dev/zero": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true}

func floorPath(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") {
		return "", false
	}
	c := path.Clean(p)
	if harmlessDevices[c] || strings.HasPrefix(c, "/dev/fd/") || strings.HasPrefix(c, "/dev/shm/") {
		return "", false
	}
	for _, d := range systemDirs {
		if c == d || strings.HasPrefix(c, d+"/") {
			if d == "/dev" {
				return "writing to a device (" + c + ")", true
			}
			return "writing to a system directory (" + d + ")", true
		}
	}
	return "", false
}
