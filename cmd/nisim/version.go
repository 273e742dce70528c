package main

import (
	"runtime/debug"
	"strings"
)

// version is what --version prints after "nisim ": the module's version
// from the build info ("(devel)" for a build inside its own module), the
// VCS revision and a "modified" mark when the build recorded them (go
// build in a git work tree does, -buildvcs=false does not), and the Go
// version that built it.
func version() string {
	info, ok := debug.ReadBuildInfo()
	return versionOf(info, ok)
}

// versionOf formats the build info; ok false (a binary built without module
// support) gives "unknown".
func versionOf(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "unknown (no build information)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	parts := []string{v}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		r := "revision " + rev
		if modified == "true" {
			r += " (modified)"
		}
		parts = append(parts, r)
	}
	parts = append(parts, info.GoVersion)
	return strings.Join(parts, ", ")
}
