package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestVersionBuildInfo: the binary reports the version and VCS revision
// its build info holds (what `go version -m` reads from it).
func TestVersionBuildInfo(t *testing.T) {
	bin := binary(t)
	out, err := exec.Command(bin, "--version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	v := versionJSON(t, string(out))
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"mod": "", "vcs.revision": "", "vcs.modified": "false"}
	for _, line := range strings.Split(string(info), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod":
			want["mod"] = f[2]
		case len(f) >= 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs."):
			k, val, _ := strings.Cut(f[1], "=")
			want[k] = val
		}
	}
	if v.Version != want["mod"] || v.Revision != want["vcs.revision"] || (v.Modified != (want["vcs.modified"] == "true")) {
		t.Fatalf("--version says %q %q modified=%v; the build info says %v", v.Version, v.Revision, v.Modified, want)
	}
}

func versionJSON(t *testing.T, out string) versionInfo {
	t.Helper()
	var v versionInfo
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return v
}
