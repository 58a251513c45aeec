package awsauth

import (
	"context"
	"strings"
)

// envSource answers the SDK's per-service endpoint questions from Lookup: service clients
// ask aws.Config.ConfigSources for AWS_ENDPOINT_URL_<SERVICE ID>, and Load puts it first.
type envSource struct {
	lookup func(string) (string, bool)
}

func (e envSource) get(name string) string {
	v, _ := e.lookup(name)
	return strings.TrimSpace(v)
}

// ignoreEndpoints mirrors AWS_IGNORE_CONFIGURED_ENDPOINT_URLS.
func (e envSource) ignoreEndpoints() bool {
	return strings.EqualFold(e.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"), "true")
}

// GetServiceBaseEndpoint implements the SDK's ServiceBaseEndpointProvider; sdkID ("S3",
// "Secrets Manager") goes upper-case, spaces as underscores.
func (e envSource) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	if e.ignoreEndpoints() {
		return "", false, nil
	}
	v := e.get("AWS_ENDPOINT_URL_" + strings.ReplaceAll(strings.ToUpper(sdkID), " ", "_"))
	return v, v != "", nil
}

// GetIgnoreConfiguredEndpoints implements the SDK's matching provider, so the switch also
// silences the process environment's endpoints.
func (e envSource) GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error) {
	v := e.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
	return strings.EqualFold(v, "true"), v != "", nil
}
