package cdi

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// configMapDir lays out files as a ConfigMap or Secret volume does: the
// data in a timestamped directory, ..data linking to it, each key a link
// through ..data.
func configMapDir(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	stamp := filepath.Join(dir, "..2026_01_02_03_04_05.000000001")
	if err := os.MkdirAll(stamp, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(stamp, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Base(stamp), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

func TestTransferHTTP(t *testing.T) {
	root := t.TempDir()
	certs, proxy, headers := filepath.Join(root, "certs"), filepath.Join(root, "proxycerts"), filepath.Join(root, "extraheaders")
	configMapDir(t, certs, map[string]string{"ca.pem": "A", "extra.crt": "B"})
	configMapDir(t, proxy, map[string]string{"ca.crt": "P"})
	configMapDir(t, filepath.Join(headers, "0"), map[string]string{"secretHeader": "Authorization: Bearer s3cr3t\n"})
	configMapDir(t, filepath.Join(headers, "1"), map[string]string{"secretHeader": "X-Token: t"})
	c, err := Parse(podEnv("IMPORTER_CERT_DIR="+certs, "IMPORTER_PROXY_CERT_DIR="+proxy, "INSECURE_TLS=true",
		"IMPORTER_ACCESS_KEY_ID=user", "IMPORTER_SECRET_KEY=pw", "IMPORTER_EXTRA_HEADER_0=X-Trace: 1",
		"IMPORTER_CHECKSUM=sha256:"+strings.Repeat("a", 64), "CACHE_MODE=TRYNONE"))
	if err != nil {
		t.Fatal(err)
	}
	p := Paths{DataDir: root, SecretHeadersDir: headers, ScratchDir: filepath.Join(root, "scratch")}
	v := Volume{Mode: Filesystem, Path: p.DiskImage(), Dir: root, Available: 20 << 30}
	tr, err := c.Transfer(p, v)
	if err != nil {
		t.Fatal(err)
	}
	want := &Transfer{
		Source: SourceHTTP, SrcURL: "https://images.example/fedora.qcow2", Username: "user", Password: "pw",
		Headers:       []string{"X-Trace: 1", "Authorization: Bearer s3cr3t", "X-Token: t"},
		SecretHeaders: 2,
		CAFiles:       []string{filepath.Join(proxy, "ca.crt"), filepath.Join(certs, "ca.pem"), filepath.Join(certs, "extra.crt")},
		InsecureTLS:   true, Checksum: "sha256:" + strings.Repeat("a", 64),
		Dst: filepath.Join(root, "disk.img"), Capacity: 10 << 30, Direct: "auto", Sparse: "auto", TargetIsZero: true,
		Resume: true, StatePath: filepath.Join(root, "disk.img.ringcp-state"), FileMode: 0o660,
	}
	if !reflect.DeepEqual(tr, want) {
		t.Errorf("got  %+v\nwant %+v", tr, want)
	}

	// An endpoint CA directory that is not there fails, as in CDI; a
	// missing proxy one is none.
	c.CertDir = filepath.Join(root, "gone")
	if _, err := c.Transfer(p, v); err == nil {
		t.Error("a missing IMPORTER_CERT_DIR taken")
	}
	c.CertDir, c.ProxyCertDir = "", filepath.Join(root, "gone")
	if _, err := c.Transfer(p, v); err != nil {
		t.Error(err)
	}
	// A Secret header that is no header is refused, without its content.
	configMapDir(t, filepath.Join(headers, "2"), map[string]string{"secretHeader": "hunter2"})
	if _, err := c.Transfer(p, v); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("bad secret header: %v", err)
	}
}

func TestTransferS3(t *testing.T) {
	for _, tc := range []struct{ endpoint, url, store, region string }{
		{"https://s3.us-west-2.amazonaws.com/disks/vm/a.qcow2", "s3://disks/vm/a.qcow2", "https://s3.us-west-2.amazonaws.com", "us-west-2"},
		{"http://minio.storage.svc:9000/images/fedora.raw.xz", "s3://images/fedora.raw.xz", "http://minio.storage.svc:9000", "minio"},
		{"http://127.0.0.1:7070/bucket/key", "s3://bucket/key", "http://127.0.0.1:7070", "127"},
		{"https://ceph:8443/b/with%20space.img", "s3://b/with space.img", "https://ceph:8443", "ceph:8443"},
	} {
		c, err := Parse(podEnv("IMPORTER_SOURCE=s3", "IMPORTER_ENDPOINT="+tc.endpoint, "INSECURE_TLS=true",
			"IMPORTER_ACCESS_KEY_ID=ak", "IMPORTER_SECRET_KEY=sk"))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		tr, err := c.Transfer(Paths{DataDir: dir, SecretHeadersDir: filepath.Join(dir, "none")}, Volume{Mode: Filesystem, Path: filepath.Join(dir, "disk.img"), Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		store := S3Store{Endpoint: tc.store, Region: tc.region, AccessKeyID: "ak", SecretKey: "sk"}
		if tr.SrcURL != tc.url || tr.S3 == nil || *tr.S3 != store || tr.InsecureTLS || tr.Username != "" {
			t.Errorf("%s: %s %+v insecure %v user %q", tc.endpoint, tr.SrcURL, tr.S3, tr.InsecureTLS, tr.Username)
		}
	}
}

// TestTransferBlock: zeros are written on a block volume (not known to
// read as zeros), as data with preallocation; the resume state goes to
// scratch space when there is some, and nowhere otherwise.
func TestTransferBlock(t *testing.T) {
	scratch := t.TempDir()
	v := Volume{Mode: Block, Path: "/dev/cdi-block-volume", Available: 1 << 30}
	for _, tc := range []struct {
		prealloc  string
		scratch   string
		sparse    string
		statePath string
	}{
		{"false", scratch, "auto", filepath.Join(scratch, BlockStateName)},
		{"true", filepath.Join(scratch, "absent"), "never", ""},
	} {
		c, err := Parse(podEnv("PREALLOCATION=" + tc.prealloc))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := c.Transfer(Paths{ScratchDir: tc.scratch, SecretHeadersDir: scratch}, v)
		if err != nil {
			t.Fatal(err)
		}
		if !tr.Block || tr.TargetIsZero || tr.Sparse != tc.sparse || tr.StatePath != tc.statePath || tr.Resume != (tc.statePath != "") ||
			tr.Capacity != 1<<30 || tr.Dst != v.Path || tr.Preallocate != (tc.prealloc == "true") {
			t.Errorf("prealloc %s: %+v", tc.prealloc, tr)
		}
	}
	c, _ := Parse(podEnv("IMPORTER_SOURCE=none", "IMPORTER_ENDPOINT="))
	tr, err := c.Transfer(Paths{ScratchDir: scratch}, v)
	if err != nil || tr.SrcURL != "" || tr.Source != SourceNone {
		t.Errorf("blank: %+v, %v", tr, err)
	}
}
