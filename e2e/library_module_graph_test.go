package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The library stands alone (issue 12): a program that imports copier
// compiles none of the bench's chart stack (gonum.org/v1/plot and its
// fonts, LaTeX and PDF modules) and no go-fuse, which only the tests' fault
// filesystem uses, and no prometheus/client_golang, which only the
// command's cdi-importer serves its progress with. The bench is a module of its own (bench/go.mod), so its
// modules are not even in such a program's module graph or go.sum, where
// license and SBOM scanners would list them. go-fuse is: ringcp's own tests
// need it, so ringcp's go.mod requires it, and module graph pruning keeps
// every requirement of a dependency's go.mod.

// libraryPackage is what a hypervisor program imports.
const libraryPackage = "github.com/ringcp/ringcp/copier"

// TestLibraryCompilesAlone lists every package a build of copier compiles.
func TestLibraryCompilesAlone(t *testing.T) {
	out := goCmd(t, moduleRoot, "list", "-deps", libraryPackage)
	banned := append(benchModules(t), "github.com/hanwen/go-fuse", "github.com/prometheus")
	for _, pkg := range strings.Fields(out) {
		if m := within(pkg, banned); m != "" {
			t.Errorf("importing %s compiles %s (from %s)", libraryPackage, pkg, m)
		}
	}
	if !strings.Contains(out, "golang.org/x/sys/unix") {
		t.Fatalf("go list -deps %s does not list golang.org/x/sys/unix, which copier uses: is the check blind?\n%s",
			libraryPackage, out)
	}
}

// TestImporterModuleGraph builds a throwaway importer module next to the
// repository (a replace points at it) and asks what its module graph and
// go.sum hold. It runs offline (GOPROXY=off): every module it needs is one
// that building ringcp's tests has already put in the module cache.
func TestImporterModuleGraph(t *testing.T) {
	root, err := filepath.Abs(moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/importer\n\ngo 1.26.0\n\nrequire github.com/ringcp/ringcp v0.0.0\n\n" +
		"replace github.com/ringcp/ringcp => " + root + "\n"
	src := "package main\n\nimport \"" + libraryPackage + "\"\n\nfunc main() { _ = copier.Options{} }\n"
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"go.mod": gomod, "main.go": src, "go.sum": string(sums)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goCmd(t, dir, "mod", "tidy")
	graph := goCmd(t, dir, "list", "-m", "all")
	tidied, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	banned := benchModules(t)
	for _, line := range strings.Split(graph, "\n") {
		if m := within(line, banned); m != "" {
			t.Errorf("an importer's module graph lists %s, which only the bench needs", line)
		}
	}
	for _, line := range strings.Split(string(tidied), "\n") {
		if m := within(line, banned); m != "" {
			t.Errorf("an importer's go.sum lists %s, which only the bench needs", line)
		}
	}
	if !strings.Contains(graph, "golang.org/x/sys ") {
		t.Fatalf("the importer's module graph lacks golang.org/x/sys: is the check blind?\n%s", graph)
	}
	t.Logf("an importer's module graph:\n%s", graph)
}

// benchModules is where the bench's modules live: gonum.org (the charts)
// and every module bench/go.mod requires that ringcp's go.mod does not
// (the fonts, LaTeX and PDF modules the charts bring).
func benchModules(t *testing.T) []string {
	t.Helper()
	own := map[string]bool{"github.com/ringcp/ringcp": true}
	for _, m := range requires(t, moduleRoot) {
		own[m] = true
	}
	only := []string{"gonum.org"}
	for _, m := range requires(t, filepath.Join(moduleRoot, "bench")) {
		if !own[m] {
			only = append(only, m)
		}
	}
	return only
}

// within returns the module or domain of mods that the package or module
// path at the start of line belongs to, or "".
func within(line string, mods []string) string {
	path, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	for _, m := range mods {
		if path == m || strings.HasPrefix(path, m+"/") {
			return m
		}
	}
	return ""
}

// requires is the module paths that dir's go.mod requires.
func requires(t *testing.T, dir string) []string {
	t.Helper()
	var mod struct{ Require []struct{ Path string } }
	if err := json.Unmarshal([]byte(goCmd(t, dir, "mod", "edit", "-json")), &mod); err != nil {
		t.Fatalf("go mod edit -json in %s: %v", dir, err)
	}
	var paths []string
	for _, r := range mod.Require {
		paths = append(paths, r.Path)
	}
	return paths
}

// goCmd runs the go command in dir as an importer would: without the
// repository's go.work (that adds the bench's module) and without the
// network.
func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY="+cacheProxy(t), "GOFLAGS=-mod=readonly")
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr)
	}
	return string(out)
}

// cacheProxy is the module cache's download folder as a GOPROXY: offline,
// it serves only what is cached, and it answers what GOPROXY=off cannot:
// which cached module provides a package no requirement names (an
// importer's tidy may look up the packages of go-ini's tests, minio-go's
// credentials, that ringcp's go.mod need not name).
func cacheProxy(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	return "file://" + filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
}
