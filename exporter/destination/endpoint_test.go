package destination

import (
	"strings"
	"testing"
)

// TestEndpointRefusals: each refused endpoint is one error, on
// config.endpoint, saying what is wrong with it and nothing else.
func TestEndpointRefusals(t *testing.T) {
	for endpoint, want := range map[string]string{
		"cost-archive.s3.amazonaws.com":           `bucket "cost-archive": write the S3 endpoint alone, s3.amazonaws.com,`,
		"cost-archive.s3.eu-west-1.amazonaws.com": "write the S3 endpoint alone, s3.eu-west-1.amazonaws.com,",
		"my.logs.s3-us-west-2.amazonaws.com":      `bucket "my.logs"`,
		"costs.storage.googleapis.com":            "storage.googleapis.com",
		"https://minio:9000":                      "without the scheme",
		"s3.amazonaws.com/cost-archive":           "host[:port] alone",
		"minio:99999":                             "port",
		"minio:":                                  "port",
		"mi nio":                                  "not a host name",
		"a..b":                                    "not a host name",
		"[minio]:9000":                            "not a host name",
		"::1":                                     "IPv6",
	} {
		f, err := Parse([]byte("type: S3\nconfig:\n  bucket: cost-archive\n  endpoint: \"" + endpoint + "\"\n"))
		if err != nil {
			t.Fatalf("%s: %v", endpoint, err)
		}
		errs := f.Validate()
		if len(errs) != 1 || errs[0].Field != "config.endpoint" || !strings.Contains(errs[0].Msg, want) {
			t.Errorf("%s: %v, want one config.endpoint error containing %q", endpoint, errs, want)
		}
	}
}

// TestEndpointAccepted: what minio-go takes as a host is taken, and a
// PrivateLink endpoint (whose first label is the word "bucket") is not
// read as a bucket in the host.
func TestEndpointAccepted(t *testing.T) {
	for _, e := range []string{"minio_1:9000", "s3.amazonaws.com.", "minio.minio:9000/", "[fd00::10]:9000", "[::1]", "10.0.0.5",
		"bucket.vpce-1a2b3c4d-5e6f.s3.us-east-1.vpce.amazonaws.com", "s3-fips.us-east-2.amazonaws.com", "S3.EU-WEST-1.AMAZONAWS.COM"} {
		if msg := endpointProblem(e); msg != "" {
			t.Errorf("%s refused: %s", e, msg)
		}
	}
}
