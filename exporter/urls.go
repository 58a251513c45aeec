package exporter

import (
	"fmt"
	"net/url"
)

// BaseURLAccepted says what IsBaseURL accepts, in the words of errors.
const BaseURLAccepted = "http://<host>[:port][/path] or https://<host>[:port][/path]"

// ParseHTTPURL parses raw as an absolute http(s) URL with a host and no fragment: the one
// grammar of the URLs the exporter calls. A query is allowed (a Kubecost client's URL may
// carry parameters); a user's base URL has none (IsBaseURL).
func ParseHTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("not a URL: accepted: %s", BaseURLAccepted)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "", u.Fragment != "":
		return nil, fmt.Errorf("accepted: %s", BaseURLAccepted)
	}
	return u, nil
}

// IsBaseURL reports whether raw is a base URL without query or fragment
// (KUBECOST_API_ENDPOINT, PUSHGATEWAY_URL).
func IsBaseURL(raw string) bool {
	u, err := ParseHTTPURL(raw)
	return err == nil && u.RawQuery == "" && !u.ForceQuery
}
