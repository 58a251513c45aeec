package exporter

import (
	"fmt"
	"net"
	"regexp"
	"strings"
)

// The one copy of the AWS name rules that both the configuration and the
// S3 store check.
var (
	accountRE = regexp.MustCompile(`^\d{12}$`)
	bucketRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
)

// IsAccountID reports whether s is a 12-digit AWS account ID.
func IsAccountID(s string) bool { return accountRE.MatchString(s) }

// BucketNameProblem returns why name is not a valid general-purpose S3
// bucket name, or "" when it is.
func BucketNameProblem(name string) string {
	switch {
	case !bucketRE.MatchString(name):
		return "accepted: 3-63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit"
	case strings.Contains(name, ".."):
		return "must not contain two adjacent dots"
	case net.ParseIP(name) != nil:
		return "must not be formatted as an IP address"
	}
	for _, p := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(name, p) {
			return fmt.Sprintf("must not start with %q (reserved by AWS)", p)
		}
	}
	for _, s := range []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(name, s) {
			return fmt.Sprintf("must not end with %q (reserved by AWS)", s)
		}
	}
	return ""
}
