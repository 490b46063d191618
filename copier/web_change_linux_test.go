package copier_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/ringcp/ringcp/copier"
	"github.com/ringcp/ringcp/engine"
	"github.com/ringcp/ringcp/httpobj"
	"github.com/ringcp/ringcp/internal/webtest"
)

// replaceSoon writes new contents to path (a new file renamed over it,
// as a publisher does) once the copy has read its first bytes.
func replaceSoon(t *testing.T, path string, data []byte, progress *copierProgress) {
	go func() {
		for progress.read() == 0 {
			time.Sleep(time.Millisecond)
		}
		tmp := path + ".new"
		if err := os.WriteFile(tmp, data, 0o644); err == nil {
			// nginx's ETag is mtime and size: make sure the mtime moves.
			later := time.Now().Add(time.Hour)
			os.Chtimes(tmp, later, later)
			os.Rename(tmp, path)
		}
	}()
}

// TestWebObjectChangesMidCopy: an object replaced during the copy fails
// it (ErrChanged, not a refusal), raw or compressed, and no new DST is
// left: never a DST of two versions.
func TestWebObjectChangesMidCopy(t *testing.T) {
	root, files := serve(t, []int64{24 << 20})
	s := webtest.Nginx(t, root, webtest.Config{})
	for name, data := range files {
		for _, format := range []string{copier.SrcFormatRaw, ""} {
			path := filepath.Join(root, name)
			writeFile(t, path, data)
			p := newProgress()
			replaceSoon(t, path, holeyImage(24<<20, 99), p)
			dst := filepath.Join(t.TempDir(), "dst")
			_, err := copier.Copy(context.Background(), copier.Options{Src: s.URL + "/" + name, Dst: dst, SrcFormat: format,
				BlockSize: 1 << 20, QueueDepth: 2, MaxRate: 16 << 20, Progress: p.Progress})
			var r *copier.RefusedError
			if !errors.Is(err, httpobj.ErrChanged) || errors.As(err, &r) {
				t.Fatalf("got %v, want a failure for a changed object", err)
			}
			if _, serr := os.Lstat(dst); serr == nil {
				t.Fatal("a DST from a changed object was kept")
			}
			t.Log(err)
		}
	}
}

// TestWebResume: a copy from a URL stopped part-way resumes from its
// state; once the object changed, resuming is refused.
func TestWebResume(t *testing.T) {
	root, files := serve(t, []int64{40<<20 + 333})
	s := webtest.Nginx(t, root, webtest.Config{})
	for name, data := range files {
		dst := filepath.Join(t.TempDir(), "dst")
		o := copier.Options{Src: s.URL + "/" + name, Dst: dst, Resume: true, BlockSize: 1 << 20, QueueDepth: 2,
			MaxRate: 32 << 20, SyncEvery: 50 * time.Millisecond}
		p := newProgress()
		o.Progress = p.Progress
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for p.Progress.Done.Load() < 12<<20 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		if _, err := copier.Copy(ctx, o); err == nil {
			t.Fatal("the first run was not stopped")
		}
		o.Progress, o.MaxRate = nil, 0
		rep, err := copier.Copy(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Resumed == 0 {
			t.Fatalf("the second run did not resume: %+v", rep)
		}
		compareFile(t, dst, data)

		// Stopped again, then the object changes: refused.
		dst2 := filepath.Join(t.TempDir(), "dst")
		o.Dst, o.MaxRate = dst2, 32<<20
		p = newProgress()
		o.Progress = p.Progress
		ctx, cancel = context.WithCancel(context.Background())
		go func() {
			for p.Progress.Done.Load() < 12<<20 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		copier.Copy(ctx, o)
		path := filepath.Join(root, name)
		later := time.Now().Add(time.Hour)
		os.Chtimes(path, later, later)
		o.Progress, o.MaxRate = nil, 0
		_, err = copier.Copy(context.Background(), o)
		var r *copier.RefusedError
		if !errors.As(err, &r) || r.Kind != copier.KindChanged {
			t.Fatalf("got %v, want a refusal: the object changed", err)
		}
		t.Log(err)
	}
}

// TestS3Copies copies objects of awkward sizes, raw and xz-compressed,
// from versitygw with the keys in the environment; a wrong key and a
// missing bucket are refused.
func TestS3Copies(t *testing.T) {
	s := webtest.Versity(t)
	host := strings.TrimPrefix(s.URL, "http://")
	c, err := minio.New(host, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: s.Region})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.MakeBucket(ctx, "images", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	put := func(key string, b []byte) {
		if _, err := c.PutObject(ctx, "images", key, bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	isolateAWS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", s.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s.SecretKey)
	web := copier.WebOptions{S3Endpoint: s.URL}
	for i, n := range webSizes {
		data := holeyImage(n, uint64(i+7))
		put("raw", data)
		dst := filepath.Join(t.TempDir(), "dst")
		if _, err := copier.Copy(ctx, copier.Options{Src: "s3://images/raw", Dst: dst, Web: web, BlockSize: 1 << 20}); err != nil {
			t.Fatalf("%d: %v", n, err)
		}
		compareFile(t, dst, data)
		xzPath := filepath.Join(t.TempDir(), "img.xz")
		pack(t, "xz", []string{"-T0", "-c"}, data, xzPath)
		packed, _ := os.ReadFile(xzPath)
		put("dir/img.xz", packed)
		dst = filepath.Join(t.TempDir(), "dst")
		if _, err := copier.Copy(ctx, copier.Options{Src: "s3://images/dir/img.xz", Dst: dst, Web: web}); err != nil {
			t.Fatalf("%d xz: %v", n, err)
		}
		compareFile(t, dst, data)
	}
	dst := filepath.Join(t.TempDir(), "dst")
	for name, src := range map[string]string{"missing-bucket": "s3://nothing/raw", "missing-key": "s3://images/none"} {
		_, err := copier.Copy(ctx, copier.Options{Src: src, Dst: dst, Web: web})
		var r *copier.RefusedError
		if !errors.As(err, &r) || r.Kind != copier.KindNotFound {
			t.Fatalf("%s: got %v, want not found", name, err)
		}
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-value")
	_, err = copier.Copy(ctx, copier.Options{Src: "s3://images/raw", Dst: dst, Web: web})
	var r *copier.RefusedError
	if !errors.As(err, &r) || r.Kind != copier.KindPermission || strings.Contains(err.Error(), "wrong-secret-value") {
		t.Fatalf("a wrong key: got %v, want a refusal that does not show it", err)
	}
	if _, err := os.Lstat(dst); err == nil {
		t.Fatal("a refused copy made DST")
	}
}

// isolateAWS points the AWS environment at nothing of the user's.
func isolateAWS(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
}

// copierProgress is a copy's progress, watched by a test's goroutine.
type copierProgress struct{ Progress *engine.Progress }

func newProgress() *copierProgress { return &copierProgress{Progress: &engine.Progress{}} }

func (p *copierProgress) read() int64 { return p.Progress.Read.Load() }
