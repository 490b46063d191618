package s3obj

import (
	"errors"
	"strings"

	"github.com/ringcp/ringcp/httpobj"
)

// IsURL tells whether s names an S3 object (s3://...).
func IsURL(s string) bool { return strings.HasPrefix(s, "s3://") }

// Parse splits s3://bucket/key. The key is taken as it is written (no
// percent-decoding, as the AWS CLI takes it); it may hold slashes.
func Parse(raw string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(raw, "s3://")
	if !ok {
		return "", "", errNotS3
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" || key == "" {
		return "", "", errors.New("want s3://bucket/key")
	}
	if !validBucket(bucket) {
		return "", "", errors.New("bucket name " + bucket + " is not one S3 allows (3-63 of a-z, 0-9, '.', '-')")
	}
	return bucket, key, nil
}

var errNotS3 = errors.New("not an s3:// URL")

// validBucket follows S3's naming rules, which also keep a bucket name
// safe in a host name and a path.
func validBucket(b string) bool {
	if len(b) < 3 || len(b) > 63 {
		return false
	}
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
		case (c == '.' || c == '-') && i > 0 && i < len(b)-1:
		case c >= 'A' && c <= 'Z' || c == '_':
			// Legacy us-east-1 names; path-style only.
		default:
			return false
		}
	}
	return true
}

// badURL is Open's refusal of an unusable s3:// URL.
func badURL(raw string, err error) error {
	return &httpobj.Error{Op: "open", URL: raw, Kind: httpobj.ErrBadURL, Err: err}
}
