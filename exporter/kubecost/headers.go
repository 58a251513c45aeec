package kubecost

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// setHeaders puts on req the headers every Kubecost request carries,
// discovery's probes included: the user's (KUBECOST_HTTP_HEADERS_FILE)
// and the bearer token.
func setHeaders(req *http.Request, h http.Header, bearer string) {
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "kubecost-s3-exporter/"+exporter.Version)
	for k, vs := range h {
		req.Header[k] = vs
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
}

// secrets are the strings no error of the client may show: the values
// of the configured headers and the bearer token. A server that echoes
// the key it refused ("invalid API key abc...") would otherwise put the
// credential into the run's log.
func secrets(h http.Header, bearer string) []string {
	out := append(slices.Concat(slices.Collect(maps.Values(h))...), bearer)
	return slices.DeleteFunc(out, func(v string) bool { return v == "" })
}

// hideSecrets replaces every secret in s with exporter's redaction mark.
func hideSecrets(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, exporter.Redacted)
	}
	return s
}

// authHint is what a 401 or 403 tells the user to check: the settings
// that carry credentials, the one in use first.
func (c *Client) authHint() string {
	switch {
	case len(c.opts.Headers) > 0:
		return "Kubecost refused the credentials: check the headers in " + exporter.HeadersSetting +
			" (e.g. the X-API-KEY of a Kubecost service account, or an Authorization header)"
	case c.opts.BearerToken != "":
		return "Kubecost refused the bearer token: check KUBECOST_BEARER_TOKEN_FILE or KUBECOST_BEARER_TOKEN_SECRET_NAME, " +
			"or give other credentials in " + exporter.HeadersSetting
	}
	return "Kubecost requires authentication (SSO with SAML or OIDC): give its credentials as request headers in " + exporter.HeadersSetting +
		" (e.g. X-API-KEY: <key>), or a bearer token in KUBECOST_BEARER_TOKEN_FILE or KUBECOST_BEARER_TOKEN_SECRET_NAME, " +
		"or point KUBECOST_API_ENDPOINT at the aggregator's in-cluster port 9008 (Kubecost 3.x tcp-api-rbac)"
}
