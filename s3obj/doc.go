// Package s3obj reads s3://bucket/key objects as a copy's source: the
// same *httpobj.Object as an HTTP URL (parallel pinned ranges, retries,
// typed errors), its requests signed with AWS Signature V4 by minio-go's
// signer, with credentials found the way AWS tools find them.
//
// # Where things come from
//
// Credentials, first found wins: AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN); the shared credentials
// file (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials) for the
// profile (Options.Profile, else AWS_PROFILE, else "default"), including
// its credential_process; the same keys in the shared config file
// (AWS_CONFIG_FILE, else ~/.aws/config). None: requests go unsigned (a
// public bucket). Instance metadata (IMDS) and web identity are not
// asked.
//
// The endpoint: Options.Endpoint, else AWS_ENDPOINT_URL_S3, else
// AWS_ENDPOINT_URL, else the profile's endpoint_url, else AWS's
// (https://s3.REGION.amazonaws.com). The region: Options.Region, else
// AWS_REGION, else AWS_DEFAULT_REGION, else the profile's region, else
// us-east-1. Addressing: virtual-hosted (bucket.s3.REGION.amazonaws.com)
// on AWS, path-style (ENDPOINT/bucket/key) on any other endpoint, which is
// what S3-compatible stores (MinIO, Ceph, versitygw) serve; path-style on
// AWS too for bucket names with dots (no TLS certificate covers them) and
// when the profile's s3 addressing_style or Options.Addressing says so.
//
// # Errors
//
// S3's XML error bodies are read into the *httpobj.Error's Detail (Code:
// Message) and kind: NoSuchKey and NoSuchBucket are ErrNotFound;
// AccessDenied, InvalidAccessKeyId, SignatureDoesNotMatch, ExpiredToken
// are ErrDenied; PreconditionFailed is ErrChanged. At Open they are
// refusals. A presigned https URL is no S3 URL: httpobj reads it.
package s3obj
