package cdi

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Transfer is what one import asks of the copy, in the vocabulary of
// ringcp's flags: the wiring turns it into copier.Options (and the
// HTTP/S3 ends' options) field by field.
type Transfer struct {
	Source Source
	// SrcURL is the image: the http(s) URL as given, or s3://bucket/key
	// for an S3 source (its store in S3). "" for a blank disk.
	SrcURL string
	// Username and Password are HTTP basic auth (the Secret's
	// accessKeyId and secretKey), sent again after a redirect as CDI's
	// importer does. "" for none.
	Username, Password string
	// S3 is where an s3:// SrcURL's bucket lives; nil for other sources.
	S3 *S3Store
	// Headers go with every HTTP request, "Name: value": the
	// IMPORTER_EXTRA_HEADER_* values, then the Secrets' (secret: never
	// logged).
	Headers       []string
	SecretHeaders int // how many of the last Headers came from Secrets
	// CAFiles are PEM files whose certificates are trusted beside the
	// system's (the image's CA bundle): CDI adds them, it never replaces
	// the system's. The proxy's come first.
	CAFiles []string
	// InsecureTLS skips the server certificate's check (an http source
	// with INSECURE_TLS=true; never S3, as in CDI).
	InsecureTLS bool
	// Checksum is --expect-checksum's value ("algo:hex", of the bytes
	// served), "" for none.
	Checksum string

	// Dst is the volume's image path: DataDir/disk.img or the device.
	Dst   string
	Block bool
	// Capacity is the largest virtual size the volume takes
	// (Config.Capacity); the wiring calls Config.TargetSize with the
	// image's virtual size for DST's size.
	Capacity int64
	// Preallocate: on a file, DST's every byte is allocated when the copy
	// ends (fallocate over the holes, as qemu-img's preallocation=falloc);
	// on a block volume zeros are written as data (Sparse never, qemu-img
	// -S 0). CDI's termination message then says preallocationApplied.
	Preallocate bool
	// Direct is --direct: auto (O_DIRECT where DST takes it, buffered
	// with the reason elsewhere) for both CACHE_MODE values. Writeback
	// through the page cache is what got CDI's importer OOM-killed.
	Direct string
	// Sparse is --sparse: auto (holes kept, zeros punched or skipped),
	// never with Preallocate on a block volume.
	Sparse string
	// TargetIsZero: a new disk.img reads as zeros; a block volume is not
	// known to (a reused PV holds old data), so zeros are written there.
	TargetIsZero bool
	// Resume is on where a state file can outlive the container: on a
	// filesystem volume beside the image, on a block volume in scratch
	// space when the controller mounted some. StatePath is that file.
	Resume    bool
	StatePath string
	// FileMode is a file DST's mode (CDI's 0660, for the qemu group
	// that fsGroup gives the volume).
	FileMode os.FileMode
}

// S3Store is the S3 endpoint of an s3 source, as CDI's importer derives
// it from IMPORTER_ENDPOINT (https://HOST[:PORT]/BUCKET/KEY, path-style).
type S3Store struct {
	Endpoint string // scheme://host[:port]: http means no TLS
	// Region signs the requests: REGION of s3.REGION.amazonaws.com, else
	// the host's first label (with its port), as CDI's importer signs; an
	// S3-compatible store that works with CDI accepts it.
	Region                 string
	AccessKeyID, SecretKey string // "" for anonymous requests
}

// Transfer maps the config onto the copy for volume v, reading the
// certificate directories and the Secrets' headers (paths from p). It
// writes nothing.
func (c *Config) Transfer(p Paths, v Volume) (*Transfer, error) {
	t := &Transfer{
		Source: c.Source, Dst: v.Path, Block: v.Mode == Block, Capacity: c.Capacity(v),
		Preallocate: c.Preallocation, Direct: "auto", Sparse: "auto",
		TargetIsZero: v.Mode == Filesystem, FileMode: 0o660,
	}
	if t.Block && t.Preallocate {
		t.Sparse = "never"
	}
	t.placeState(p, v)
	if c.Source == SourceNone {
		return t, nil
	}
	if c.Checksum != nil {
		t.Checksum = c.Checksum.String()
	}
	var err error
	if t.CAFiles, err = caFiles(c.ProxyCertDir, false); err != nil {
		return nil, err
	}
	own, err := caFiles(c.CertDir, true)
	if err != nil {
		return nil, err
	}
	t.CAFiles = append(t.CAFiles, own...)
	if c.Source == SourceS3 {
		return t, c.mapS3(t)
	}
	t.SrcURL = c.Endpoint.String()
	t.Username, t.Password = c.AccessKeyID, c.SecretKey
	t.InsecureTLS = c.InsecureTLS
	secret, err := SecretHeaders(p.SecretHeadersDir)
	if err != nil {
		return nil, err
	}
	t.Headers = append(append([]string{}, c.ExtraHeaders...), secret...)
	t.SecretHeaders = len(secret)
	return t, nil
}

// placeState puts the resume state where it outlives the container: a
// filesystem volume's own filesystem, beside the image (removed when the
// import completes); for a block volume, which has no filesystem, the
// scratch space when it is a directory that exists (CDI mounts a scratch
// PVC there only when it chose to, and a Job may mount an emptyDir, which
// outlives container restarts). Elsewhere there is none: the root
// filesystem is read-only or lost with the container, so the import
// starts again from the beginning.
func (t *Transfer) placeState(p Paths, v Volume) {
	if v.Mode == Filesystem {
		t.Resume, t.StatePath = true, filepath.Join(v.Dir, DefaultStateName)
		return
	}
	if st, err := os.Stat(p.ScratchDir); err == nil && st.IsDir() {
		t.Resume, t.StatePath = true, filepath.Join(p.ScratchDir, BlockStateName)
	}
}

// awsHost is CDI's test for an AWS endpoint, whose region is in its name.
var awsHost = regexp.MustCompile(`s3\.(.+)\.amazonaws\.com`)

func (c *Config) mapS3(t *Transfer) error {
	bucket, key, err := s3BucketKey(c.Endpoint)
	if err != nil {
		return refuse(EnvEndpoint, redactURL(c.Endpoint.String()), err.Error())
	}
	t.SrcURL = "s3://" + bucket + "/" + key
	region := strings.Split(c.Endpoint.Host, ".")[0]
	if m := awsHost.FindStringSubmatch(c.Endpoint.Host); m != nil {
		region = m[1]
	}
	t.S3 = &S3Store{
		Endpoint: c.Endpoint.Scheme + "://" + c.Endpoint.Host, Region: region,
		AccessKeyID: c.AccessKeyID, SecretKey: c.SecretKey,
	}
	return nil
}

// s3BucketKey splits an S3 endpoint's path into bucket and key, as CDI's
// importer does: the first path element is the bucket, the rest the key.
func s3BucketKey(u *url.URL) (bucket, key string, err error) {
	bucket, key, _ = strings.Cut(strings.Trim(u.Path, "/"), "/")
	if bucket == "" || key == "" {
		return "", "", errors.New("is not an S3 object's URL: want http(s)://HOST/BUCKET/KEY")
	}
	return bucket, key, nil
}

// caFiles lists dir's certificate files as CDI reads them: every entry
// that is not a directory and whose name does not start with a dot (a
// ConfigMap volume's ..data). A missing dir is refused when it was named
// for the endpoint (CDI fails there too) and skipped for the proxy's.
func caFiles(dir string, required bool) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !required && errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		name := EnvProxyCertDir
		if required {
			name = EnvCertDir
		}
		return nil, refuse(name, dir, "cannot be listed: "+err.Error())
	}
	var files []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if st, err := os.Stat(path); err != nil || st.IsDir() {
			continue // a ConfigMap key is a link to a file; a directory is not one
		}
		files = append(files, path)
	}
	sort.Strings(files)
	return files, nil
}
