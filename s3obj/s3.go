package s3obj

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/ringcp/ringcp/httpobj"
)

// Addressing is how a bucket is named in a request.
type Addressing int

const (
	// Auto: virtual-hosted on AWS (path-style for dotted bucket names),
	// path-style on any other endpoint, unless the profile says.
	Auto Addressing = iota
	// PathStyle: ENDPOINT/bucket/key.
	PathStyle
	// VirtualHosted: bucket.ENDPOINT-HOST/key.
	VirtualHosted
)

// Options says where the object's store is and how to reach it.
type Options struct {
	// HTTP is how requests travel: connections, retries, stall timeout,
	// TLS (a CA file for a private endpoint), proxies, Logf. Its Sign,
	// Explain and Name are set by Open.
	HTTP httpobj.Options
	// Endpoint is an S3-compatible store's URL (http or https); ""
	// looks in the environment and the profile, else AWS.
	Endpoint string
	// Region signs the requests; "" looks in the environment and the
	// profile, else us-east-1.
	Region string
	// Profile names the shared files' profile; "": AWS_PROFILE, else
	// "default".
	Profile    string
	Addressing Addressing
}

// emptySHA256 is the SHA-256 of an empty body: a GET's payload hash.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Open finds s3://bucket/key with one signed request and returns it as an
// *httpobj.Object: parallel ranges pinned with If-Match on its ETag, the
// same retries and errors as an HTTP object, and Name() s3://bucket/key.
// Every error is an *httpobj.Error with Op "open" (a refusal).
func Open(ctx context.Context, raw string, opts Options) (*httpobj.Object, error) {
	bucket, key, err := Parse(raw)
	if err != nil {
		return nil, badURL(raw, err)
	}
	profile := firstOf(opts.Profile, os.Getenv("AWS_PROFILE"), "default")
	conf := loadProfile(configFile(), profile)
	region := firstOf(opts.Region, os.Getenv("AWS_REGION"), os.Getenv("AWS_DEFAULT_REGION"), conf.get("region"), "us-east-1")
	target, err := objectURL(bucket, key, region, opts, conf)
	if err != nil {
		return nil, badURL(raw, err)
	}
	creds := credentialChain(profile, conf)
	h := opts.HTTP
	h.Name = "s3://" + bucket + "/" + key
	h.Sign = func(req *http.Request) error { return sign(req, creds, region) }
	h.Explain = explain
	return httpobj.Open(ctx, target.String(), h)
}

// objectURL is where the object is: its endpoint, and the bucket in the
// host or the path.
func objectURL(bucket, key, region string, opts Options, conf profileConfig) (*url.URL, error) {
	endpoint := firstOf(opts.Endpoint, os.Getenv("AWS_ENDPOINT_URL_S3"), os.Getenv("AWS_ENDPOINT_URL"), conf.get("endpoint_url"))
	onAWS := endpoint == ""
	if onAWS {
		endpoint = "https://s3." + region + ".amazonaws.com"
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q is not an http(s) URL", endpoint)
	}
	style := opts.Addressing
	if style == Auto {
		switch conf.get("s3.addressing_style") {
		case "path":
			style = PathStyle
		case "virtual":
			style = VirtualHosted
		}
	}
	if style == Auto {
		style = PathStyle
		if onAWS && !strings.Contains(bucket, ".") && strings.ToLower(bucket) == bucket && !strings.Contains(bucket, "_") {
			style = VirtualHosted
		}
	}
	path := strings.TrimSuffix(u.Path, "/") + "/" + key
	if style == PathStyle {
		path = strings.TrimSuffix(u.Path, "/") + "/" + bucket + "/" + key
	} else {
		u.Host = bucket + "." + u.Host
	}
	// The path on the wire is the one the signature's canonical request
	// encodes (s3utils.EncodePath): S3 decodes and encodes it again.
	u.Path, u.RawPath = path, s3utils.EncodePath(path)
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// sign adds AWS Signature V4 headers to req, or nothing without
// credentials (a public bucket). Each attempt is signed anew: the date is
// part of the signature.
func sign(req *http.Request, creds *credentials.Credentials, region string) error {
	v, err := creds.GetWithContext(nil)
	if err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	if v.SignerType.IsAnonymous() || v.AccessKeyID == "" {
		return nil
	}
	req.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	*req = *signer.SignV4(*req, v.AccessKeyID, v.SecretAccessKey, v.SessionToken, region)
	return nil
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
