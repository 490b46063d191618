package cdi

import (
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/ringcp/ringcp/httpobj"
)

// The environment CDI's controller gives the importer container
// (pkg/controller/import-controller.go, makeImportEnv). Each is set, maybe
// to "", in every importer pod, except the keys (from a Secret), the
// certificate directories and the extra headers, which are set only when
// the DataVolume names them.
const (
	EnvSource             = "IMPORTER_SOURCE"
	EnvEndpoint           = "IMPORTER_ENDPOINT"
	EnvContentType        = "IMPORTER_CONTENTTYPE"
	EnvImageSize          = "IMPORTER_IMAGE_SIZE"
	EnvOwnerUID           = "OWNER_UID"
	EnvFilesystemOverhead = "FILESYSTEM_OVERHEAD"
	EnvPreallocation      = "PREALLOCATION"
	EnvCacheMode          = "CACHE_MODE"
	EnvAccessKeyID        = "IMPORTER_ACCESS_KEY_ID"
	EnvSecretKey          = "IMPORTER_SECRET_KEY"
	EnvCertDir            = "IMPORTER_CERT_DIR"
	EnvProxyCertDir       = "IMPORTER_PROXY_CERT_DIR"
	EnvInsecureTLS        = "INSECURE_TLS"
	EnvChecksum           = "IMPORTER_CHECKSUM"
	EnvReadyFile          = "IMPORTER_READY_FILE"
	EnvDoneFile           = "IMPORTER_DONE_FILE"
	EnvPullMethod         = "IMPORTER_PULL_METHOD"
	// EnvExtraHeaderPrefix starts IMPORTER_EXTRA_HEADER_0, _1...: each
	// value is one HTTP header, "Name: value".
	EnvExtraHeaderPrefix = "IMPORTER_EXTRA_HEADER_"
)

// Source is IMPORTER_SOURCE.
type Source string

// The sources CDI's controller names (pkg/controller/common: SourceHTTP...).
const (
	SourceHTTP     Source = "http" // also a registry node pull (IMPORTER_PULL_METHOD=node)
	SourceS3       Source = "s3"
	SourceNone     Source = "none" // a blank disk
	SourceRegistry Source = "registry"
	SourceImageio  Source = "imageio"
	SourceVDDK     Source = "vddk"
	SourceGCS      Source = "gcs"
	SourceGlance   Source = "glance" // named by the controller, refused by CDI's own importer
)

// ServedSources are the sources ringcp imports from, in the order the
// refusal of another one lists them.
var ServedSources = []Source{SourceHTTP, SourceS3, SourceNone}

// ContentType is IMPORTER_CONTENTTYPE.
type ContentType string

// Content types.
const (
	ContentKubeVirt ContentType = "kubevirt" // a disk image: raw, qcow2..., maybe compressed
	ContentArchive  ContentType = "archive"  // a tar of files extracted into /data
)

// CacheTryNone is CACHE_MODE's one value that CDI's importer looks at:
// the controller sets it after an importer pod was OOM-killed, and
// qemu-img then writes with O_DIRECT where the target takes it. Any other
// value is qemu-img's writeback.
const CacheTryNone = "TRYNONE"

// PullNode is IMPORTER_PULL_METHOD's value for a registry image pulled by
// the node and served to the importer over http://localhost:8100.
const PullNode = "node"

// Config is the importer's environment, parsed and checked.
type Config struct {
	Source      Source
	Endpoint    *url.URL // nil for SourceNone
	ContentType ContentType
	// ImageSize is IMPORTER_IMAGE_SIZE in bytes (a Kubernetes quantity,
	// rounded up as resource.Quantity.Value does); ImageSizeSet is false
	// when it is "".
	ImageSize    int64
	ImageSizeSet bool
	OwnerUID     string
	// FilesystemOverhead is the fraction of a filesystem volume CDI keeps
	// free for the filesystem's own use, 0 to 1.
	FilesystemOverhead float64
	Preallocation      bool
	CacheMode          string // CacheTryNone or anything else (writeback)
	AccessKeyID        string
	SecretKey          string
	CertDir            string // a directory of PEM files to trust beside the system's
	ProxyCertDir       string // the cluster proxy's CA bundle directory
	InsecureTLS        bool
	Checksum           *Checksum // nil: none asked
	ReadyFile          string
	DoneFile           string
	PullMethod         string
	ExtraHeaders       []string // the IMPORTER_EXTRA_HEADER_* values, by variable name
}

// Parse reads the importer's environment from environ (os.Environ's
// form). Every value is checked before anything is written; the first
// one found wrong is a *Refusal naming the variable. A source, content
// type or pull method ringcp does not serve is a *Refusal whose Unserved
// is true.
func Parse(environ []string) (*Config, error) {
	env := map[string]string{}
	var headers []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
		if strings.HasPrefix(k, EnvExtraHeaderPrefix) {
			headers = append(headers, k)
		}
	}
	c := &Config{
		OwnerUID:    env[EnvOwnerUID],
		CacheMode:   env[EnvCacheMode],
		AccessKeyID: env[EnvAccessKeyID], SecretKey: env[EnvSecretKey],
		CertDir: env[EnvCertDir], ProxyCertDir: env[EnvProxyCertDir],
		ReadyFile: env[EnvReadyFile], DoneFile: env[EnvDoneFile],
		PullMethod: env[EnvPullMethod],
	}
	steps := []func(map[string]string) error{
		c.parseSource, c.parseContentType, c.parseEndpoint, c.parseImageSize,
		c.parseOverhead, c.parseBools, c.parseKeys, c.parseChecksum,
	}
	for _, step := range steps {
		if err := step(env); err != nil {
			return nil, err
		}
	}
	sort.Strings(headers)
	for _, k := range headers {
		h := env[k]
		if err := checkHeader(h); err != nil {
			return nil, refuse(k, "", err.Error())
		}
		c.ExtraHeaders = append(c.ExtraHeaders, h)
	}
	return c, nil
}

func (c *Config) parseSource(env map[string]string) error {
	c.Source = Source(env[EnvSource])
	switch c.Source {
	case SourceHTTP, SourceS3, SourceNone:
	case "":
		return refuse(EnvSource, "", "is not set: it names where the image comes from (http, s3, none)")
	default:
		return unserved(EnvSource, string(c.Source), "ringcp imports from http, s3 and none (a blank disk) only")
	}
	if c.PullMethod == PullNode {
		return unserved(EnvPullMethod, c.PullMethod, "a registry image pulled by the node (its sidecar runs programs of CDI's importer image)")
	}
	return nil
}

func (c *Config) parseContentType(env map[string]string) error {
	switch ContentType(env[EnvContentType]) {
	case ContentKubeVirt, "": // "": the controller's default, and CDI's importer treats it so
		c.ContentType = ContentKubeVirt
	case ContentArchive:
		c.ContentType = ContentArchive
	default:
		return refuse(EnvContentType, env[EnvContentType], "is neither kubevirt nor archive")
	}
	return nil
}

func (c *Config) parseEndpoint(env map[string]string) error {
	raw := env[EnvEndpoint]
	if c.Source == SourceNone {
		return nil // a blank disk has none; the controller leaves it ""
	}
	if raw == "" {
		return refuse(EnvEndpoint, "", "is not set: the "+string(c.Source)+" source needs the image's URL")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return refuse(EnvEndpoint, redactURL(raw), "is not a URL: "+urlErrText(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return refuse(EnvEndpoint, redactURL(raw), "is not an http:// or https:// URL")
	}
	if c.Source == SourceS3 {
		if _, _, err := s3BucketKey(u); err != nil {
			return refuse(EnvEndpoint, redactURL(raw), err.Error())
		}
	}
	c.Endpoint = u
	return nil
}

func (c *Config) parseImageSize(env map[string]string) error {
	raw := env[EnvImageSize]
	if raw == "" {
		if c.Source == SourceNone {
			return refuse(EnvImageSize, "", "is not set: a blank disk needs its size")
		}
		return nil
	}
	n, err := ParseQuantity(raw)
	if err != nil {
		return refuse(EnvImageSize, raw, err.Error())
	}
	c.ImageSize, c.ImageSizeSet = n, true
	return nil
}

func (c *Config) parseOverhead(env map[string]string) error {
	raw := env[EnvFilesystemOverhead]
	if raw == "" {
		return nil // CDI's importer reads a missing value as 0
	}
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
		// CDIConfig's Percent type allows "0" to "1" with at most three
		// decimals; CDI's importer would read a bad value as 0.
		return refuse(EnvFilesystemOverhead, raw, "is not a fraction from 0 to 1")
	}
	c.FilesystemOverhead = f
	return nil
}

// parseBools reads PREALLOCATION and INSECURE_TLS as strconv.ParseBool
// does. An unset PREALLOCATION is false here; CDI's importer exits 1 on it
// (its controller always sets "true" or "false").
func (c *Config) parseBools(env map[string]string) error {
	for _, b := range []struct {
		name string
		to   *bool
	}{{EnvPreallocation, &c.Preallocation}, {EnvInsecureTLS, &c.InsecureTLS}} {
		raw := env[b.name]
		if raw == "" {
			continue
		}
		v, err := strconv.ParseBool(raw)
		if err != nil {
			return refuse(b.name, raw, `is neither "true" nor "false"`)
		}
		*b.to = v
	}
	return nil
}

// parseKeys wants both keys or neither: CDI's controller sets both from
// one Secret, and CDI's importer uses them only when both are there, so
// one alone would be a silent anonymous request.
func (c *Config) parseKeys(map[string]string) error {
	if (c.AccessKeyID == "") != (c.SecretKey == "") {
		name := EnvSecretKey
		if c.AccessKeyID == "" {
			name = EnvAccessKeyID
		}
		return refuse(name, "", "is not set while the other key is: set both (the Secret's accessKeyId and secretKey) or neither")
	}
	return nil
}

func (c *Config) parseChecksum(env map[string]string) error {
	raw := env[EnvChecksum]
	if raw == "" {
		return nil
	}
	sum, err := ParseChecksum(raw)
	if err != nil {
		return refuse(EnvChecksum, raw, err.Error())
	}
	c.Checksum = sum
	return nil
}

// urlErrText is url.Parse's complaint without the URL it repeats (which
// may hold a password).
func urlErrText(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return err.Error()
}

// redactURL is an endpoint as a refusal may show it: no user info, and
// no value of a query parameter that may be a credential (a presigned
// URL's signature, a token), whatever its scheme; an unparsable one by
// its scheme alone.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if scheme, _, ok := strings.Cut(raw, "://"); ok && !strings.ContainsAny(scheme, "@/?#") {
			return scheme + "://(unparsable URL)"
		}
		return "(unparsable URL)"
	}
	return httpobj.Redact(u)
}
