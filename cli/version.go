package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/ringcp/ringcp/copier"
)

// versionInfo is what --version prints: which ringcp this is, and whether
// its fast path runs here.
type versionInfo struct {
	Version    string   `json:"-"`        // the module version (the envelope's version in JSON): v1.2.3, or (devel) for a build from a checkout
	Revision   string   `json:"revision"` // the VCS commit it was built from, "" when unknown
	Time       string   `json:"time"`     // that commit's time (RFC 3339), "" when unknown
	Modified   bool     `json:"modified"` // built from a work tree with uncommitted changes
	GoVersion  string   `json:"go_version"`
	Platform   string   `json:"platform"` // GOOS/GOARCH
	IOUring    bool     `json:"io_uring"` // io_uring can be used here now
	IOUringWhy string   `json:"io_uring_detail"`
	Engines    []string `json:"engines"` // the registered backends, most preferred first
}

// moduleVersion is the version the binary was built as.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func buildVersion() versionInfo {
	v := versionInfo{Version: moduleVersion(), GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Engines: copier.Backends()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	v.IOUringWhy = "usable"
	if err := copier.UringAvailable(); err != nil {
		v.IOUringWhy = err.Error()
	} else {
		v.IOUring = true
	}
	return v
}

// printVersion prints the version, as one JSON object with --json.
func printVersion(stdout io.Writer, asJSON bool) error {
	v := buildVersion()
	if asJSON {
		return writeObject(stdout, newEnvelope("version", nil), nil, v)
	}
	rev := v.Revision
	if rev == "" {
		rev = "unknown revision"
	}
	if v.Modified {
		rev += " (modified)"
	}
	fmt.Fprintf(stdout, "ringcp %s, %s", v.Version, rev)
	if v.Time != "" {
		fmt.Fprintf(stdout, " of %s", v.Time)
	}
	fmt.Fprintf(stdout, ", built with %s for %s\n", v.GoVersion, v.Platform)
	fmt.Fprintf(stdout, "io_uring: %s\n", v.IOUringWhy)
	return nil
}
