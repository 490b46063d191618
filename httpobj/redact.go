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

// RedactOperand is a command's operand as it may be printed: an http or
// https URL with its credentials removed (Redact), a URL of another
// scheme (ssh://, nbd://, s3://) without the password its user info
// holds, anything else (a path) as it is, byte for byte.
func RedactOperand(s string) string {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok || scheme == "" {
		return s
	}
	if !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") {
		if u, err := url.Parse(s); err == nil && u.User != nil {
			if _, set := u.User.Password(); set {
				return u.Redacted()
			}
		}
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		// Unparsable, it may still hold a password: show its scheme.
		return scheme + "://(unparsable URL)"
	}
	if u.User == nil && Redact(u) == u.String() {
		return s
	}
	return Redact(u)
}
