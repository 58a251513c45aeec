package s3rec

// Case is one way of naming an access point as the bucket, and where AWS
// documents the store's requests must then go: an alias is a bucket name,
// virtual-hosted (access-points-alias.html, VirtualHosting.html); an ARN
// reaches the access point's own host in the ARN's region
// (access-points-naming.html, using-access-points.html). The client's own
// region (the cluster's) is us-east-2 in every case.
type Case struct {
	Name                 string
	Bucket               string // S3_BUCKET_NAME, "" when File names it
	File                 string // an object-store file's text, "" for none
	WantHost, WantRegion string
}

// Access points of the cases.
const (
	Alias = "cost-ap-hrzrlukc5m36ft7okagglf3gmwluquse1b-s3alias"
	ARN   = "arn:aws:s3:eu-west-1:444455556666:accesspoint/cost-ap"
)

// Cases are the access point forms the destination accepts, from
// S3_BUCKET_NAME and from config.bucket.
func Cases() []Case {
	return []Case{
		{"alias in S3_BUCKET_NAME", Alias, "", Alias + ".s3.us-east-2.amazonaws.com", "us-east-2"},
		{"arn in S3_BUCKET_NAME", ARN, "", "cost-ap-444455556666.s3-accesspoint.eu-west-1.amazonaws.com", "eu-west-1"},
		{"alias in config.bucket", "", "type: S3\nconfig:\n  bucket: " + Alias + "\n  endpoint: s3.eu-central-1.amazonaws.com\n  part_size: 5242880\n",
			Alias + ".s3.eu-central-1.amazonaws.com", "eu-central-1"},
		{"arn in config.bucket", "", "type: S3\nconfig:\n  bucket: " + ARN + "\n  endpoint: s3.amazonaws.com\n  part_size: 5242880\n",
			"cost-ap-444455556666.s3-accesspoint.eu-west-1.amazonaws.com", "eu-west-1"},
		// A PrivateLink interface endpoint for access points is a custom
		// endpoint, before which the SDK names the access point
		// (endpoints_test.go "SDK::Host + access point ARN@us-west-2").
		{"arn in config.bucket through privatelink", "", "type: S3\nconfig:\n  bucket: " + ARN +
			"\n  endpoint: accesspoint.vpce-1a2b3c4d-5e6f.s3.eu-west-1.vpce.amazonaws.com\n  part_size: 5242880\n",
			"cost-ap-444455556666.accesspoint.vpce-1a2b3c4d-5e6f.s3.eu-west-1.vpce.amazonaws.com", "eu-west-1"},
	}
}
