package httpobj

import (
	"net/url"
	"strings"
)

// secretParams are query parameter names (lower case) whose values are
// credentials: presigned S3 (SigV4 and V2), Google Cloud Storage and
// Azure SAS URLs, and the usual token names.
var secretParams = []string{
	"x-amz-signature", "x-amz-credential", "x-amz-security-token",
	"awsaccesskeyid", "signature", "x-goog-signature", "x-goog-credential",
	"googleaccessid", "sig",
}

// secretWords make any parameter whose name contains one of them secret.
var secretWords = []string{"token", "secret", "password", "passwd", "key", "auth", "credential"}

// Redact is u as it may be printed: no userinfo, and the value of every
// parameter that may carry a credential replaced by REDACTED (the name
// stays, so that one sees the URL was presigned).
func Redact(u *url.URL) string {
	c := *u
	c.User = nil
	if c.RawQuery == "" {
		return c.String()
	}
	parts := strings.Split(c.RawQuery, "&")
	for i, part := range parts {
		rawName, _, hasValue := strings.Cut(part, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			name = rawName
		}
		if hasValue && isSecret(strings.ToLower(name)) {
			parts[i] = rawName + "=REDACTED"
		}
	}
	c.RawQuery = strings.Join(parts, "&")
	return c.String()
}

func isSecret(name string) bool {
	for _, p := range secretParams {
		if name == p {
			return true
		}
	}
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}
