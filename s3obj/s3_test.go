package s3obj

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/ringcp/ringcp/httpobj"
	"github.com/ringcp/ringcp/internal/webtest"
)

// store is a versitygw the test started, and a client that uploads to it.
type store struct {
	*webtest.S3
	client *minio.Client
}

func startStore(t *testing.T) *store {
	t.Helper()
	s := webtest.Versity(t)
	host := strings.TrimPrefix(s.URL, "http://")
	c, err := minio.New(host, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: s.Region})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MakeBucket(context.Background(), "images", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	return &store{S3: s, client: c}
}

func (s *store) put(t *testing.T, key string, data []byte) {
	t.Helper()
	_, err := s.client.PutObject(context.Background(), "images", key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// isolate points the AWS environment at nothing of the user's: no
// keys, empty shared files, no endpoint or region, for the test's length.
func isolate(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY",
		"AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
}

func pattern(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// readAll reads o in parallel ranges of chunk bytes.
func readAll(t *testing.T, o *httpobj.Object, chunk int) []byte {
	t.Helper()
	out := make([]byte, o.Size())
	var wg sync.WaitGroup
	errs := make(chan error, len(out)/chunk+1)
	for off := 0; off < len(out); off += chunk {
		wg.Add(1)
		go func(off int) {
			defer wg.Done()
			end := min(off+chunk, len(out))
			if _, err := o.ReadAt(out[off:end], int64(off)); err != nil && err != io.EOF {
				errs <- err
			}
		}(off)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return out
}

// TestS3Sizes reads objects of every awkward size, credentials from the
// environment, the endpoint from AWS_ENDPOINT_URL.
func TestS3Sizes(t *testing.T) {
	isolate(t)
	s := startStore(t)
	t.Setenv("AWS_ACCESS_KEY_ID", s.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s.SecretKey)
	t.Setenv("AWS_ENDPOINT_URL", s.URL)
	for _, n := range []int{0, 1, 511, 4096, 4097, 1<<20 + 3} {
		key := fmt.Sprintf("dir/size %d+odd", n)
		want := pattern(n, uint64(n))
		s.put(t, key, want)
		o, err := Open(context.Background(), "s3://images/"+key, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if o.Size() != int64(n) || o.ETag() == "" || o.Name() != "s3://images/"+key {
			t.Fatalf("size %d etag %q name %q, want %d, an ETag, s3://images/%s", o.Size(), o.ETag(), o.Name(), n, key)
		}
		if got := readAll(t, o, 100_003); !bytes.Equal(got, want) {
			t.Fatalf("%d: the bytes differ", n)
		}
		o.Close()
	}
}

// TestS3Profile: keys, region and endpoint from the shared files of a
// named profile (AWS_PROFILE), keys in the config file too.
func TestS3Profile(t *testing.T) {
	isolate(t)
	s := startStore(t)
	want := pattern(70_000, 1)
	s.put(t, "obj", want)
	creds := fmt.Sprintf("[default]\naws_access_key_id = nope\naws_secret_access_key = nope\n[work]\naws_access_key_id = %s\naws_secret_access_key = %s\n", s.AccessKey, s.SecretKey)
	conf := fmt.Sprintf("[profile work]\nregion = us-east-1\nendpoint_url = %s\ns3 =\n  addressing_style = path\n", s.URL)
	os.WriteFile(os.Getenv("AWS_SHARED_CREDENTIALS_FILE"), []byte(creds), 0o600)
	os.WriteFile(os.Getenv("AWS_CONFIG_FILE"), []byte(conf), 0o600)
	t.Setenv("AWS_PROFILE", "work")
	o, err := Open(context.Background(), "s3://images/obj", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if got := readAll(t, o, 30_000); !bytes.Equal(got, want) {
		t.Fatal("the bytes differ")
	}

	// The keys in the config file's profile, none in the credentials file.
	os.WriteFile(os.Getenv("AWS_SHARED_CREDENTIALS_FILE"), nil, 0o600)
	conf += fmt.Sprintf("aws_access_key_id = %s\naws_secret_access_key = %s\n", s.AccessKey, s.SecretKey)
	os.WriteFile(os.Getenv("AWS_CONFIG_FILE"), []byte(conf), 0o600)
	o, err = Open(context.Background(), "s3://images/obj", Options{})
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
}

// TestS3Refusals: a wrong secret, an unknown key id, a missing bucket, a
// missing key, no credentials: typed refusals at Open, and no secret in
// the messages.
func TestS3Refusals(t *testing.T) {
	isolate(t)
	s := startStore(t)
	s.put(t, "obj", []byte("data"))
	opts := Options{Endpoint: s.URL}
	for _, tc := range []struct {
		name, id, secret, url string
		kind                  error
	}{
		{"wrong secret", s.AccessKey, "wrong-secret-value", "s3://images/obj", httpobj.ErrDenied},
		{"unknown key", "nobody", "wrong-secret-value", "s3://images/obj", httpobj.ErrDenied},
		{"no credentials", "", "", "s3://images/obj", httpobj.ErrDenied},
		{"missing bucket", s.AccessKey, s.SecretKey, "s3://nobucket/obj", httpobj.ErrNotFound},
		{"missing key", s.AccessKey, s.SecretKey, "s3://images/nokey", httpobj.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AWS_ACCESS_KEY_ID", tc.id)
			t.Setenv("AWS_SECRET_ACCESS_KEY", tc.secret)
			_, err := Open(context.Background(), tc.url, opts)
			var e *httpobj.Error
			if !errors.As(err, &e) || !errors.Is(err, tc.kind) || e.Op != "open" {
				t.Fatalf("got %v, want a refusal of kind %v", err, tc.kind)
			}
			if strings.Contains(err.Error(), "wrong-secret-value") || strings.Contains(err.Error(), s.SecretKey) {
				t.Fatalf("%v shows a secret", err)
			}
			t.Log(err)
		})
	}
}

// TestS3Changed: the object is uploaded again between two ranges; the
// next range fails with ErrChanged (If-Match on its ETag).
func TestS3Changed(t *testing.T) {
	isolate(t)
	s := startStore(t)
	s.put(t, "obj", pattern(200_000, 2))
	t.Setenv("AWS_ACCESS_KEY_ID", s.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s.SecretKey)
	o, err := Open(context.Background(), "s3://images/obj", Options{Endpoint: s.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	p := make([]byte, 100_000)
	if _, err := o.ReadAt(p, 0); err != nil {
		t.Fatal(err)
	}
	s.put(t, "obj", pattern(200_000, 3))
	_, err = o.ReadAt(p, 100_000)
	if !errors.Is(err, httpobj.ErrChanged) {
		t.Fatalf("got %v, want ErrChanged", err)
	}
	t.Log(err)
}

// TestParse: what s3:// URLs mean, and which are refused.
func TestParse(t *testing.T) {
	for raw, want := range map[string][2]string{
		"s3://b-1/k":              {"b-1", "k"},
		"s3://bucket/a/b/c d%20e": {"bucket", "a/b/c d%20e"},
		"s3://my.bucket/x/":       {"my.bucket", "x/"},
	} {
		b, k, err := Parse(raw)
		if err != nil || b != want[0] || k != want[1] {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q", raw, b, k, err, want)
		}
	}
	for _, raw := range []string{"s3://", "s3://bucket", "s3://bucket/", "http://b/k", "s3://-bad/k", "s3://ab/k", "s3://a b/k"} {
		if _, _, err := Parse(raw); err == nil {
			t.Errorf("Parse(%q) accepted", raw)
		}
	}
}
