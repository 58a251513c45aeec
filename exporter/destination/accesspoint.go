package destination

import (
	"net/url"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// S3 access points as the archive (docs/object-store-config.md, "Access points"). The AWS
// SDK for Go v2 takes an alias as a bucket name. service/s3 endpoints.go (v1.114.8)
// resolves an ARN to https://<name>-<account>.s3-accesspoint.<region>.<dns suffix>, signed
// for the ARN's region as s3 (endpoints_test.go "vanilla access point arn@us-west-2"); with
// a custom endpoint, to <name>-<account>.<endpoint host> ("SDK::Host + access point ARN");
// path-style is refused ("path style + arn is error"). These rules refuse what would not
// reach the access point.

// accessPointHostProblem refuses a host only an access point answers as the endpoint. The
// advice keeps the access point: the bucket's name would bypass it and its policy.
func accessPointHostProblem(host string) string {
	labels := strings.Split(host, ".")
	for i, l := range labels {
		switch {
		case l == "s3-outposts":
			return exporter.OutpostsRefused
		case strings.HasPrefix(l, "s3-object-lambda"):
			return "an Object Lambda access point's host: the exporter writes, which Object Lambda does not serve; " +
				"write the S3 endpoint and use the alias or the ARN of the access point behind it as the bucket"
		case l == "s3-global" && i > 0 && labels[i-1] == "accesspoint":
			return "a Multi-Region Access Point's host: not supported (the conditional writes hold per bucket, not across the buckets it routes to)"
		case strings.HasPrefix(l, "s3-accesspoint"):
			endpoint := "s3.amazonaws.com"
			for _, r := range labels[i+1:] {
				if r != "dualstack" {
					endpoint = "s3." + r + ".amazonaws.com"
					break
				}
			}
			return "an access point's own host: write the S3 endpoint, " + endpoint + ", and use the alias or the ARN as the bucket " +
				"(<name>-<metadata>-s3alias, or " + exporter.AccessPointARNAccepted + "), " +
				"which keeps the access point and its policy; the bucket's own name would bypass them"
		}
	}
	return ""
}

// accessPointVPCE reports a PrivateLink endpoint for access points
// (accesspoint.vpce-….s3.<region>.vpce.amazonaws.com), the one custom endpoint that reaches
// an ARN once the SDK prepends <name>-<account>; S3 reads no other host (AWS's included) so.
func accessPointVPCE(host string) bool {
	return strings.HasPrefix(host, "accesspoint.") && awsHostPrivateLink.MatchString(host)
}

// validateAccessPoint refuses the file's settings that cannot reach the access point.
func (c *S3) validateAccessPoint(bad badFn) {
	ap, arnErr := exporter.ParseAccessPointARN(c.Bucket)
	isARN := arnErr == ""
	if !exporter.IsAccessPoint(c.Bucket) || endpointProblem(c.Endpoint) != "" {
		return
	}
	host := endpointHost(c.Endpoint)
	onAWS := isAWSHost(host) || awsHostPrivateLink.MatchString(host)
	switch {
	case (isARN || onAWS) && c.BucketLookupType == LookupPath:
		// access-points-restrictions-limitations-naming-rules.html: "You can address access
		// points only by using virtual-host-style URLs".
		bad("config.bucket_lookup_type", string(c.BucketLookupType), "an access point takes virtual-hosted-style requests only; remove it or set auto")
	case (isARN || onAWS) && c.Insecure:
		bad("config.insecure", "true", "an access point takes HTTPS only; remove it or set false")
	}
	if !isARN {
		return
	}
	switch region := c.region(); {
	case arnEndpointRefused(host):
		// Other AWS hosts are left to the SDK (EndpointURL), which resolves the host.
		bad("config.endpoint", c.Endpoint, "with an access point ARN as the bucket, write AWS's S3 endpoint (s3.%s.amazonaws.com): "+
			"the AWS SDK sends to the access point's own host, derived from the ARN", ap.Region)
	case region != "" && region != ap.Region:
		field, value := "config.region", c.Region
		if c.Region == "" {
			field, value = "config.endpoint", c.Endpoint
		}
		bad(field, value, "names region %s, the access point ARN %s; set one region", region, ap.Region)
	}
}

// checkAccessPoint holds the bucket to the endpoint variables as the file is held; an ARN
// takes no endpoint but accessPointVPCE's, and must be in the clusters' partition (the SDK
// refuses another partition than the client's; credentials do not cross partitions).
func checkAccessPoint(s *Settings, sc Scope, bad badFunc) {
	name := s.store.envOf(pair{vars: s3EndpointVars})
	var host, hostPort string
	if u, err := url.Parse(s.store.env[name]); err == nil && u.Host != "" {
		host, hostPort = endpointHost(u.Host), u.Host
	}
	if msg := accessPointHostProblem(host); host != "" && msg != "" {
		bad(s.S3BucketName, "%s=%s is %s", name, s.store.env[name], msg)
	}
	ap, msg := exporter.ParseAccessPointARN(s.S3BucketName)
	if msg != "" {
		return
	}
	if sc.Partition != "" && sc.Partition != ap.Partition {
		bad(s.S3BucketName, "the access point's partition %q differs from the cluster's %q", ap.Partition, sc.Partition)
	}
	if host != "" && (sdkResolves(host) || arnEndpointRefused(host)) && accessPointHostProblem(host) == "" {
		bad(s.S3BucketName, "%s=%s would receive the access point's requests as <name>-<account>.%s; "+
			"with an access point ARN as the bucket, unset it (the AWS SDK derives the access point's host from the ARN)",
			name, s.store.env[name], hostPort)
	}
}
