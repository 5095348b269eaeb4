// Package buildinfo names the build of aegis that is running: the commit
// stamped at link time (make build sets it from git describe --always
// --dirty), else the VCS revision the Go toolchain stamps, else none.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Module is aegis's module path.
const Module = "github.com/aegis-sched/aegis"

// commit is set at link time by make build:
//
//	go build -ldflags "-X github.com/aegis-sched/aegis/internal/buildinfo.commit=$(git describe --always --dirty)"
//
// Go builds with -buildvcs=false (or outside a git checkout) stamp no
// revision of their own, so this is the one that holds everywhere.
var commit string

// source is set at link time by make build to the sha256 of the source the
// binary was built from: its non-test Go files, go.mod, go.sum and the
// embedded data (the data/ folders), as they are in the working tree. Two
// builds of the same source have the same one, whatever the commit (a
// commit that changes only documents, tests or specs) or the machine.
var source string

// Info identifies the running program.
type Info struct {
	Module    string // module path
	Version   string // module version ("(devel)" for a build from a checkout)
	GoVersion string // the Go toolchain that built it
	Commit    string // the source commit; "" when the build did not say
	// Source is the sha256 of the source built (make build stamps it);
	// "" when the build did not say.
	Source string
}

// Read returns the running program's Info.
func Read() Info {
	in := read(commit, debug.ReadBuildInfo)
	in.Source = source
	return in
}

// read is Read with the link-time stamp and the build info reader given.
func read(stamp string, readBuildInfo func() (*debug.BuildInfo, bool)) Info {
	in := Info{Module: Module, Version: "(unknown)", GoVersion: runtime.Version(), Commit: stamp}
	bi, ok := readBuildInfo()
	if !ok {
		return in
	}
	if bi.Main.Path != "" {
		in.Module = bi.Main.Path
	}
	if bi.Main.Version != "" {
		in.Version = bi.Main.Version
	}
	if in.Commit != "" {
		return in
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && modified == "true" {
		rev += "-dirty"
	}
	in.Commit = rev
	return in
}
