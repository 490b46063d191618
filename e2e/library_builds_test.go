package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLibraryBuildsEverywhere: a program built for another system can
// import copier (its calls then refuse: copier/other.go), and copier
// builds on Linux's other architectures, 32-bit ones included.
func TestLibraryBuildsEverywhere(t *testing.T) {
	for _, target := range []string{"darwin/arm64", "darwin/amd64", "windows/amd64", "freebsd/amd64", "linux/arm64", "linux/386"} {
		goos, goarch, _ := strings.Cut(target, "/")
		cmd := exec.Command("go", "build", "./copier/...")
		cmd.Dir = moduleRoot
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("GOOS=%s GOARCH=%s go build ./copier/...: %v\n%s", goos, goarch, err, out)
		}
	}
}

// TestModuleBuildsWithItsGoVersion: the module builds and vets on its own
// (outside the workspace, whose bench module pulls newer x/sys), at the
// language version its go directive declares: go vet's stdversion check
// fails on standard library calls newer than it, the compiler on newer
// language features.
func TestModuleBuildsWithItsGoVersion(t *testing.T) {
	goCmd(t, moduleRoot, "build", "./...")
	goCmd(t, moduleRoot, "vet", "./...")
	mod, err := os.ReadFile(filepath.Join(moduleRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod), "\ngo 1.23.0\n") {
		t.Errorf("go.mod's go directive moved from 1.23.0: say why in the README (a newer one shuts out importers on older toolchains)")
	}
}

// TestLibraryAPISameEverywhere: copier's exported functions, methods,
// types, constants and variables are the same on every system, so that
// code importing it compiles for all of them (other.go stubs what
// Linux-only files define).
func TestLibraryAPISameEverywhere(t *testing.T) {
	decls := func(goos string) string {
		cmd := exec.Command("go", "doc", "-all", "./copier")
		cmd.Dir = moduleRoot
		cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go doc -all ./copier: %v", goos, err)
		}
		var lines []string
		for _, l := range strings.Split(string(out), "\n") {
			for _, p := range []string{"func ", "type ", "const ", "var ", "    func "} {
				if strings.HasPrefix(l, p) {
					lines = append(lines, strings.TrimSpace(l))
				}
			}
		}
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	}
	linux := decls("linux")
	if !strings.Contains(linux, "func (p *Plan) Run(ctx context.Context) (Report, error)") {
		t.Fatalf("go doc shows no Plan.Run: is the check blind?\n%s", linux)
	}
	for _, goos := range []string{"darwin", "windows"} {
		if other := decls(goos); other != linux {
			t.Errorf("copier's API on %s differs from Linux's:\n--- linux\n%s\n--- %s\n%s", goos, linux, goos, other)
		}
	}
}
