"""The Go canary's check that the test binary's output still leads straight to ``go test``.

``go test -json`` reads the test binary's descriptors 1 and 2 through a pipe of its own
and turns what ``testing`` writes to ``os.Stdout`` into events. The agent's package is
linked into the binary, so its ``init()`` can put a filter in between: ``os.Stdout`` set
to a pipe of its own, or that pipe ``dup2``-ed onto descriptor 1, read by a ``sed``
child or a goroutine that writes the rest through, ``--- FAIL`` rewritten into ``---
PASS`` and the canary's lines spared. So before it fails, the canary checks that
``os.Stdout`` and ``os.Stderr`` are descriptors 1 and 2, that both are pipes whose read
end its parent (``go test``) holds, and that the parent is not a copy of the binary
itself. When one is not, it ends the binary at once with ``output_pipe.TAMPERED``,
without failing: its failure with its message is then missing from the stream, so the
target is rejected (``go.canary.judge``), whatever a filter makes of the rest. A
parent's descriptors that cannot be read (no ``/proc``, access denied) leave that part
unchecked. Extra writers of the pipe (a subprocess a test starts with the binary's
output) only add lines and are not charged. (A filter that is undone before the canary
runs is not seen: the same class as a forger that finds the canary.) Pure: Go source.
"""

from __future__ import annotations

from harness.verify.isolation.output_pipe import TAMPERED

IMPORTS = ("os", "strconv", "strings", "syscall", "testing")  # all linked by testing
NOTE = "[harness] output check: "

# {id}: the canary's token, so the names are the canary file's own
CHECK = """
func harnessTamper{id}() {
	if why := harnessOutput{id}(); why != "" {
		syscall.Write(2, []byte("\\n{note}" + why + "\\n"))
		os.Exit({code})
	}
}

func harnessOutput{id}() string {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		return "" // no /proc to look in
	}
	if os.Stdout == nil || os.Stderr == nil {
		return "os.Stdout or os.Stderr was set to nil"
	}
	pp := strconv.Itoa(os.Getppid())
	self, err1 := os.Stat("/proc/self/exe")
	parent, err2 := os.Stat("/proc/" + pp + "/exe")
	if err1 == nil && err2 == nil && os.SameFile(self, parent) {
		return "the test binary runs under a copy of itself"
	}
	held, seen := harnessHeld{id}(pp)
	for _, p := range [][2]uintptr{{1, os.Stdout.Fd()}, {2, os.Stderr.Fd()}} {
		fd, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(p[0])))
		obj, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(p[1])))
		n := strconv.Itoa(int(p[0]))
		switch {
		case !strings.HasPrefix(fd, "pipe:"):
			return "descriptor " + n + " is not a pipe (" + fd + ")"
		case obj != fd:
			return "the language's descriptor " + n + " is " + obj + ", not " + fd
		case seen && !held[fd]:
			return "descriptor " + n + " (" + fd + ") is not read by go test"
		}
	}
	return ""
}

func harnessHeld{id}(pp string) (map[string]bool, bool) {
	dir := "/proc/" + pp + "/fd/"
	f, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return nil, false
	}
	held := map[string]bool{}
	for _, name := range names {
		link, err := os.Readlink(dir + name)
		if err != nil || !strings.HasPrefix(link, "pipe:") {
			continue
		}
		info, err := os.ReadFile("/proc/" + pp + "/fdinfo/" + name)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\\n") {
			if strings.HasPrefix(line, "flags:") {
				flags, err := strconv.ParseUint(strings.TrimSpace(line[6:]), 8, 64)
				if err == nil && flags&3 == 0 { // O_RDONLY: the read end
					held[link] = true
				}
			}
		}
	}
	return held, true
}
"""


def source(token: str) -> str:
    """The check's functions for the canary file of ``token``."""
    return CHECK.replace("{id}", token).replace("{note}", NOTE).replace("{code}", str(TAMPERED))


def call(token: str) -> str:
    return f"harnessTamper{token}()"


def note(output: str) -> str | None:
    """What the check found, when the canary's output carries its note."""
    for line in output.splitlines():
        if line.startswith(NOTE):
            return line[len(NOTE) :].strip()
    return None
