package cdi

import (
	"errors"
	"strings"
	"testing"
)

// podEnv is the environment CDI's controller gives an importer of an
// HTTP image into a 10 GiB filesystem PVC (makeImportEnv): every variable
// set, most of them "".
func podEnv(over ...string) []string {
	env := map[string]string{
		EnvSource: "http", EnvEndpoint: "https://images.example/fedora.qcow2", EnvContentType: "kubevirt",
		EnvImageSize: "10Gi", EnvOwnerUID: "1b2c3d4e-0000-4000-8000-000000000001", EnvFilesystemOverhead: "0.055",
		EnvInsecureTLS: "false", "IMPORTER_DISK_ID": "", "IMPORTER_UUID": "", EnvPullMethod: "",
		EnvReadyFile: "", EnvDoneFile: "", "IMPORTER_BACKING_FILE": "", "IMPORTER_THUMBPRINT": "",
		"http_proxy": "", "https_proxy": "", "no_proxy": "", "IMPORTER_CURRENT_CHECKPOINT": "",
		"IMPORTER_PREVIOUS_CHECKPOINT": "", "IMPORTER_FINAL_CHECKPOINT": "", EnvPreallocation: "false",
		EnvCacheMode: "", "IMPORTER_REGISTRY_IMAGE_ARCHITECTURE": "", EnvChecksum: "",
	}
	for _, kv := range over {
		k, v, _ := strings.Cut(kv, "=")
		if v == "<unset>" {
			delete(env, k)
			continue
		}
		env[k] = v
	}
	var out []string
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func TestParseCDIPod(t *testing.T) {
	c, err := Parse(podEnv())
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != SourceHTTP || c.Endpoint.String() != "https://images.example/fedora.qcow2" || c.ContentType != ContentKubeVirt {
		t.Errorf("source %q endpoint %v content %q", c.Source, c.Endpoint, c.ContentType)
	}
	if !c.ImageSizeSet || c.ImageSize != 10<<30 {
		t.Errorf("image size %d (set %v), want 10 GiB", c.ImageSize, c.ImageSizeSet)
	}
	if c.FilesystemOverhead != 0.055 || c.Preallocation || c.InsecureTLS || c.Checksum != nil {
		t.Errorf("overhead %v prealloc %v insecure %v checksum %v", c.FilesystemOverhead, c.Preallocation, c.InsecureTLS, c.Checksum)
	}
	if c.OwnerUID != "1b2c3d4e-0000-4000-8000-000000000001" || len(c.ExtraHeaders) != 0 {
		t.Errorf("owner %q headers %q", c.OwnerUID, c.ExtraHeaders)
	}
}

// TestParseValues: each variable's values as the controller sets them,
// and its default when unset.
func TestParseValues(t *testing.T) {
	cases := []struct {
		name  string
		env   []string
		check func(*Config) bool
	}{
		{"s3", []string{"IMPORTER_SOURCE=s3", "IMPORTER_ENDPOINT=http://minio:9000/disks/a/b.img"}, func(c *Config) bool { return c.Source == SourceS3 }},
		{"blank", []string{"IMPORTER_SOURCE=none", "IMPORTER_ENDPOINT="}, func(c *Config) bool { return c.Source == SourceNone && c.Endpoint == nil }},
		{"archive", []string{"IMPORTER_CONTENTTYPE=archive"}, func(c *Config) bool { return c.ContentType == ContentArchive }},
		{"content unset is kubevirt", []string{"IMPORTER_CONTENTTYPE=<unset>"}, func(c *Config) bool { return c.ContentType == ContentKubeVirt }},
		{"size unset", []string{"IMPORTER_IMAGE_SIZE="}, func(c *Config) bool { return !c.ImageSizeSet && c.ImageSize == 0 }},
		{"size decimal", []string{"IMPORTER_IMAGE_SIZE=5G"}, func(c *Config) bool { return c.ImageSize == 5e9 }},
		{"overhead unset is 0", []string{"FILESYSTEM_OVERHEAD=<unset>"}, func(c *Config) bool { return c.FilesystemOverhead == 0 }},
		{"overhead 1", []string{"FILESYSTEM_OVERHEAD=1"}, func(c *Config) bool { return c.FilesystemOverhead == 1 }},
		{"preallocation", []string{"PREALLOCATION=true"}, func(c *Config) bool { return c.Preallocation }},
		{"preallocation unset is false", []string{"PREALLOCATION=<unset>"}, func(c *Config) bool { return !c.Preallocation }},
		{"insecure", []string{"INSECURE_TLS=true"}, func(c *Config) bool { return c.InsecureTLS }},
		{"cache mode", []string{"CACHE_MODE=TRYNONE"}, func(c *Config) bool { return c.CacheMode == CacheTryNone }},
		{"cache mode other is writeback, as CDI", []string{"CACHE_MODE=whatever"}, func(c *Config) bool { return c.CacheMode == "whatever" }},
		{"keys", []string{"IMPORTER_ACCESS_KEY_ID=ak", "IMPORTER_SECRET_KEY=sk"}, func(c *Config) bool { return c.AccessKeyID == "ak" && c.SecretKey == "sk" }},
		{"cert dirs", []string{"IMPORTER_CERT_DIR=/certs", "IMPORTER_PROXY_CERT_DIR=/proxycerts/"}, func(c *Config) bool { return c.CertDir == "/certs" && c.ProxyCertDir == "/proxycerts/" }},
		{"checksum", []string{"IMPORTER_CHECKSUM= SHA256 : " + strings.Repeat("AB", 32) + " "}, func(c *Config) bool {
			return c.Checksum != nil && c.Checksum.String() == "sha256:"+strings.Repeat("ab", 32)
		}},
		{"checksum sha1", []string{"IMPORTER_CHECKSUM=sha1:" + strings.Repeat("0", 40)}, func(c *Config) bool { return c.Checksum.Algo == "sha1" }},
		{"checksum md5", []string{"IMPORTER_CHECKSUM=md5:" + strings.Repeat("f", 32)}, func(c *Config) bool { return c.Checksum.Algo == "md5" }},
		{"checksum sha512", []string{"IMPORTER_CHECKSUM=sha512:" + strings.Repeat("9", 128)}, func(c *Config) bool { return c.Checksum.Algo == "sha512" }},
		{"ready and done", []string{"IMPORTER_READY_FILE=/shared/ready", "IMPORTER_DONE_FILE=/shared/done"}, func(c *Config) bool { return c.ReadyFile == "/shared/ready" && c.DoneFile == "/shared/done" }},
		{"pull method pod", []string{"IMPORTER_PULL_METHOD=pod"}, func(c *Config) bool { return c.PullMethod == "pod" }},
		{"headers in name order", []string{"IMPORTER_EXTRA_HEADER_1=X-B: 2", "IMPORTER_EXTRA_HEADER_0=X-A:1"}, func(c *Config) bool {
			return strings.Join(c.ExtraHeaders, "|") == "X-A:1|X-B: 2"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(podEnv(tc.env...))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c) {
				t.Errorf("%+v", c)
			}
		})
	}
}

// TestParseRefuses: every bad value is refused, naming its variable; the
// sources and content ringcp does not serve say so.
func TestParseRefuses(t *testing.T) {
	cases := []struct {
		env      []string
		name     string // the variable the refusal names
		unserved bool
	}{
		{[]string{"IMPORTER_SOURCE="}, EnvSource, false},
		{[]string{"IMPORTER_SOURCE=ftp"}, EnvSource, true},
		{[]string{"IMPORTER_SOURCE=registry"}, EnvSource, true},
		{[]string{"IMPORTER_SOURCE=imageio"}, EnvSource, true},
		{[]string{"IMPORTER_SOURCE=vddk"}, EnvSource, true},
		{[]string{"IMPORTER_SOURCE=gcs"}, EnvSource, true},
		{[]string{"IMPORTER_SOURCE=glance"}, EnvSource, true},
		{[]string{"IMPORTER_PULL_METHOD=node"}, EnvPullMethod, true},
		{[]string{"IMPORTER_CONTENTTYPE=KubeVirt"}, EnvContentType, false},
		{[]string{"IMPORTER_ENDPOINT="}, EnvEndpoint, false},
		{[]string{"IMPORTER_ENDPOINT=ftp://host/x"}, EnvEndpoint, false},
		{[]string{"IMPORTER_ENDPOINT=images.example/x.img"}, EnvEndpoint, false},
		{[]string{"IMPORTER_ENDPOINT=http://a b/%zz"}, EnvEndpoint, false},
		{[]string{"IMPORTER_SOURCE=s3", "IMPORTER_ENDPOINT=https://s3.amazonaws.com/bucket-only"}, EnvEndpoint, false},
		{[]string{"IMPORTER_SOURCE=none", "IMPORTER_IMAGE_SIZE="}, EnvImageSize, false},
		{[]string{"IMPORTER_IMAGE_SIZE=10GB"}, EnvImageSize, false},
		{[]string{"IMPORTER_IMAGE_SIZE=-1Gi"}, EnvImageSize, false},
		{[]string{"IMPORTER_IMAGE_SIZE=9Ei"}, EnvImageSize, false},
		{[]string{"FILESYSTEM_OVERHEAD=6%"}, EnvFilesystemOverhead, false},
		{[]string{"FILESYSTEM_OVERHEAD=-0.1"}, EnvFilesystemOverhead, false},
		{[]string{"FILESYSTEM_OVERHEAD=1.5"}, EnvFilesystemOverhead, false},
		{[]string{"FILESYSTEM_OVERHEAD=NaN"}, EnvFilesystemOverhead, false},
		{[]string{"PREALLOCATION=yes"}, EnvPreallocation, false},
		{[]string{"INSECURE_TLS=maybe"}, EnvInsecureTLS, false},
		{[]string{"IMPORTER_ACCESS_KEY_ID=ak"}, EnvSecretKey, false},
		{[]string{"IMPORTER_SECRET_KEY=sk"}, EnvAccessKeyID, false},
		{[]string{"IMPORTER_CHECKSUM=abc"}, EnvChecksum, false},
		{[]string{"IMPORTER_CHECKSUM=sha384:" + strings.Repeat("a", 96)}, EnvChecksum, false},
		{[]string{"IMPORTER_CHECKSUM=sha256:" + strings.Repeat("a", 63)}, EnvChecksum, false},
		{[]string{"IMPORTER_CHECKSUM=sha256:" + strings.Repeat("g", 64)}, EnvChecksum, false},
		{[]string{"IMPORTER_CHECKSUM=md5:"}, EnvChecksum, false},
		{[]string{"IMPORTER_EXTRA_HEADER_0=no colon"}, "IMPORTER_EXTRA_HEADER_0", false},
		{[]string{"IMPORTER_EXTRA_HEADER_3=Bad Name: x"}, "IMPORTER_EXTRA_HEADER_3", false},
	}
	for _, tc := range cases {
		_, err := Parse(podEnv(tc.env...))
		var r *Refusal
		if !errors.As(err, &r) {
			t.Errorf("%q: %v, want a refusal", tc.env, err)
			continue
		}
		if r.Name != tc.name || r.Unserved != tc.unserved || IsUnserved(err) != tc.unserved {
			t.Errorf("%q: refusal of %s (unserved %v), want %s (unserved %v): %v", tc.env, r.Name, r.Unserved, tc.name, tc.unserved, err)
		}
		if strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("%q: refusal on more than one line: %q", tc.env, err)
		}
	}
}

// TestRefusalWords: an unserved source says what ringcp serves and who
// does; a key's value never appears.
func TestRefusalWords(t *testing.T) {
	_, err := Parse(podEnv("IMPORTER_SOURCE=vddk"))
	want := "ringcp cdi-importer does not serve IMPORTER_SOURCE=vddk: ringcp imports from http, s3 and none (a blank disk) only; CDI's own importer image does"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	_, err = Parse(podEnv("IMPORTER_ACCESS_KEY_ID=AKIASECRET"))
	if err == nil || strings.Contains(err.Error(), "AKIASECRET") {
		t.Errorf("a key's value in a refusal: %v", err)
	}
	_, err = Parse(podEnv("IMPORTER_ENDPOINT=ftp://user:hunter2@host/x"))
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a password in a refusal: %v", err)
	}
	// A presigned URL's signature and a token are credentials too,
	// whatever the scheme, and in a URL that does not parse.
	for _, env := range []string{
		"IMPORTER_ENDPOINT=ftp://host/x?X-Amz-Signature=hunter2&token=hunter2",
		"IMPORTER_ENDPOINT=http://host/x%zz?X-Amz-Signature=hunter2",
		"IMPORTER_ENDPOINT=host/x?sig=hunter2",
	} {
		_, err = Parse(podEnv(env))
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: a credential in a refusal: %v", env, err)
		}
	}
	_, err = Parse(podEnv("IMPORTER_SOURCE=s3", "IMPORTER_ENDPOINT=https://s3.example/bucket-only?X-Amz-Signature=hunter2"))
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a credential in an S3 refusal: %v", err)
	}
}
