package webtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// S3 is an S3 server the test started, and the root user's keys.
type S3 struct {
	*Server
	AccessKey, SecretKey, Region string
	// Root is the posix backend's folder: each folder in it is a bucket.
	Root string
}

// Versity starts versitygw (github.com/versity/versitygw, installed by
// .ci/run with go install; not in Debian) with its posix backend on a
// new folder, with keep-alive, a root user and region us-east-1. Make
// buckets and upload objects through S3 (files put in Root directly have
// no ETag).
func Versity(t testing.TB) *S3 {
	t.Helper()
	return VersityIn(t, "us-east-1")
}

// VersityIn is Versity serving region: a client that signs for another
// region is refused, as AWS refuses it.
func VersityIn(t testing.TB, region string) *S3 {
	t.Helper()
	bin := Need(t, "versitygw", "none: go install github.com/versity/versitygw/cmd/versitygw@v1.8.0")
	root := t.TempDir()
	s3 := &S3{AccessKey: "ringcp-test-key", SecretKey: "ringcp-test-secret-0123456789", Region: region, Root: root}
	s3.Server = launch(t, "http", func(port int) []string {
		return []string{bin, "--access", s3.AccessKey, "--secret", s3.SecretKey, "--region", s3.Region,
			"--port", fmt.Sprintf("127.0.0.1:%d", port), "--keep-alive", "--quiet", "posix", root}
	})
	return s3
}

// Bucket makes bucket as a folder of the backend, which versitygw's posix
// backend serves as a bucket owned by the root user.
func (s *S3) Bucket(t testing.TB, bucket string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(s.Root, bucket), 0o755); err != nil {
		t.Fatal(err)
	}
}
