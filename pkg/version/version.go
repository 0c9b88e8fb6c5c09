// Package version reports the build's version, set at link time through -ldflags.
package version

import (
	"fmt"
	"runtime"
)

// These are set by the linker: -X github.com/scyllakube/scylla-operator/pkg/version.gitVersion=v1.2.3 and so on.
var (
	gitVersion = "v0.0.0-unknown"
	gitCommit  = "unknown"
	buildDate  = "unknown"
)

// Info describes the running binary.
type Info struct {
	GitVersion string `json:"gitVersion"`
	GitCommit  string `json:"gitCommit"`
	BuildDate  string `json:"buildDate"`
	GoVersion  string `json:"goVersion"`
	Platform   string `json:"platform"`
}

// Get returns the version information of the running binary.
func Get() Info {
	return Info{
		GitVersion: gitVersion,
		GitCommit:  gitCommit,
		BuildDate:  buildDate,
		GoVersion:  runtime.Version(),
		Platform:   fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH),
	}
}

// String returns a one-line, human-readable form of the version information.
func (i Info) String() string {
	return fmt.Sprintf("version %q, commit %q, built %q, %s, %s", i.GitVersion, i.GitCommit, i.BuildDate, i.GoVersion, i.Platform)
}
