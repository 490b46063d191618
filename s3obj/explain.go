package s3obj

import (
	"encoding/xml"
	"strings"

	"github.com/ringcp/ringcp/httpobj"
)

// s3Error is the XML body of an S3 error answer.
type s3Error struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
	Region  string `xml:"Region"`
}

// kinds maps S3 error codes to httpobj's kinds where the status alone
// would say less (S3 answers 400 to a malformed region, 403 to many
// things, 503 SlowDown is transient by its status already).
var kinds = map[string]error{
	"NoSuchKey":                    httpobj.ErrNotFound,
	"NoSuchBucket":                 httpobj.ErrNotFound,
	"AccessDenied":                 httpobj.ErrDenied,
	"InvalidAccessKeyId":           httpobj.ErrDenied,
	"SignatureDoesNotMatch":        httpobj.ErrDenied,
	"ExpiredToken":                 httpobj.ErrDenied,
	"InvalidToken":                 httpobj.ErrDenied,
	"AuthorizationHeaderMalformed": httpobj.ErrDenied,
	"PreconditionFailed":           httpobj.ErrChanged,
	"InvalidRange":                 httpobj.ErrBadRange,
	"RequestTimeout":               httpobj.ErrRetries,
	"RequestTimeTooSkewed":         httpobj.ErrDenied,
	"PermanentRedirect":            httpobj.ErrRefused,
	"InvalidObjectState":           httpobj.ErrRefused,
	// versitygw's answer (404) to an access key it does not know, where
	// AWS says InvalidAccessKeyId (403).
	"XAdminUserNotFound": httpobj.ErrDenied,
}

// explain reads an S3 error body: "Code: Message" (with the region S3
// names when the request went to the wrong one) and the kind its code
// means.
func explain(status int, body []byte) (string, error) {
	var e s3Error
	if err := xml.Unmarshal(body, &e); err != nil || e.Code == "" {
		return "", nil
	}
	detail := e.Code
	if msg := strings.TrimSpace(e.Message); msg != "" {
		detail += ": " + msg
	}
	if e.Region != "" {
		detail += " (the bucket is in " + e.Region + ")"
	}
	return detail, kinds[e.Code]
}
