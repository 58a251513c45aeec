package objstorecompat

// The inputs both parsers read. A row is YAML a person writes by hand or
// copies from Kubecost's, Thanos' or another tool's docs; each says what
// both sides do with it (verdict), and why when they differ on purpose.
// docs/object-store-config.md says the same in words.

// etlBackup is the shape of Kubecost's ETL backup example for AWS
// (kubecostModel.etlBucketConfigSecret, key object-store.yaml).
const etlBackup = `type: S3
config:
  bucket: kubecost-etl-backup
  endpoint: s3.amazonaws.com
  region: us-east-1
  access_key: AKIAIOSFODNN7EXAMPLE
  secret_key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
  insecure: false
  signature_version2: false
  put_user_metadata:
    "X-Amz-Acl": "bucket-owner-full-control"
  http_config:
    idle_conn_timeout: 90s
    response_header_timeout: 2m
    insecure_skip_verify: false
  trace:
    enable: true
  part_size: 134217728
`

// federatedStore is Kubecost 3.x's example, verbatim
// (kubecost/kubecost examples/federatedStorage/aws/federated-store.yaml).
const federatedStore = `type: S3
config:
  bucket: kubecost-multi-cluster-storage
  endpoint: s3.amazonaws.com
  region: us-west-2
  ## keys are not required when using assumed roles
  access_key: ""
  secret_key: ""
`

func cases(caFile, certFile, keyFile, sseCKey string) []compatCase {
	const b = "type: S3\nconfig:\n  bucket: cost-archive\n  endpoint: s3.amazonaws.com\n"
	rows := []compatCase{
		{"kubecost etl backup", etlBackup, both, ""},
		{"kubecost 3.x federated-store", federatedStore, both, ""},
		{"irsa sse-kms with context", b + "  region: eu-west-1\n  sse_config:\n    type: SSE-KMS\n    kms_key_id: arn:aws:kms:eu-west-1:111122223333:key/1234\n    kms_encryption_context:\n      team: finops\n", both, ""},
		{"sse-s3", b + "  sse_config:\n    type: SSE-S3\n", both, ""},
		{"minio path-style with prefix", "type: s3\nprefix: /team-a/costs/\nconfig:\n  bucket: costs\n  endpoint: 127.0.0.1:9000\n  insecure: yes\n  bucket_lookup_type: path\n  access_key: minio\n  secret_key: minio123\n", both, ""},
		{"put_user_metadata", b + "  put_user_metadata:\n    X-Amz-Acl: bucket-owner-full-control\n    X-Amz-Storage-Class: STANDARD_IA\n    X-Amz-Meta-Team: finops\n    owner: platform\n", both, ""},
		{"http_config tls", b + "  http_config:\n    insecure_skip_verify: true\n    max_idle_conns: 10\n    tls_handshake_timeout: 5s\n    tls_config:\n      ca_file: " + caFile + "\n      cert_file: " + certFile + "\n      key_file: " + keyFile + "\n      server_name: s3.local\n", both, ""},
		{"retries sts list v2 multipart", b + "  max_retries: 5\n  sts_endpoint: https://sts.us-east-1.amazonaws.com\n  list_objects_version: v2\n  disable_multipart: true\n  send_content_md5: false\n  disable_dualstack: true\n  aws_sdk_auth: true\n", both, ""},
		{"session token", b + "  access_key: AKIA\n  secret_key: s\n  session_token: tok\n", both, ""},
		{"virtual-hosted", b + "  bucket_lookup_type: virtual-hosted\n", both, ""},
		{"filesystem", "type: FILESYSTEM\nconfig:\n  directory: /data/costs\n", both, ""},
		{"durations in days and mixed units", b + "  http_config:\n    idle_conn_timeout: 1d\n    response_header_timeout: 1h30m\n", both, ""},
		{"numbers and booleans spelled as YAML 1.1 does", b + "  part_size: 0x8000000\n  insecure: off\n  max_retries: 010\n", both, ""},
		{"prefix of slashes only", "prefix: ///\n" + b, both, ""},
		{"empty put_user_metadata", b + "  put_user_metadata: {}\n", both, ""},
		{"numeric metadata value", b + "  put_user_metadata:\n    cost-center: 4711\n", both, ""},

		{"unknown config key", b + "  buckett: x\n", neither, ""},
		{"unknown top key", b + "prefixx: a\n", neither, ""},
		{"old sse_encryption", b + "  sse_encryption: true\n", neither, ""},
		{"no endpoint", "type: S3\nconfig:\n  bucket: cost-archive\n", neither, ""},
		{"access key alone", b + "  access_key: AKIA\n", neither, ""},
		{"secret key alone", b + "  secret_key: s\n", neither, ""},
		{"sdk auth and keys", b + "  aws_sdk_auth: true\n  access_key: a\n  secret_key: s\n", neither, ""},
		{"kms without key", b + "  sse_config:\n    type: SSE-KMS\n", neither, ""},
		{"sse unknown", b + "  sse_config:\n    type: SSE-MagicKey\n", neither, ""},
		{"lookup dns", b + "  bucket_lookup_type: dns\n", neither, ""},
		{"list v3", b + "  list_objects_version: v3\n", neither, ""},
		{"cert without key", b + "  http_config:\n    tls_config:\n      cert_file: " + certFile + "\n", neither, ""},
		{"missing ca file", b + "  http_config:\n    tls_config:\n      ca_file: /nonexistent/ca.pem\n", neither, ""},
		{"part size not a number", b + "  part_size: big\n", neither, ""},
		{"unknown type", "type: FTP\nconfig:\n  bucket: b\n", neither, ""},
		{"endpoint with scheme", "type: S3\nconfig:\n  bucket: costs\n  endpoint: https://minio:9000\n", neither, ""},
		{"filesystem without directory", "type: FILESYSTEM\nconfig: {}\n", neither, ""},
		{"config null", "type: S3\nconfig:\n", neither, ""},
		{"config a list", "type: S3\nconfig:\n  - bucket\n", neither, ""},
		{"sse type in lower case", b + "  sse_config:\n    type: sse-s3\n", neither, ""},
		{"part size quoted", b + "  part_size: \"big\"\n", neither, ""},
		{"duration without unit", b + "  http_config:\n    idle_conn_timeout: 90\n", neither, ""},
		{"not YAML", "type: S3\nconfig: [\n", neither, ""},

		{"signature v2", b + "  signature_version2: true\n", oursOnly, "SigV2 is deprecated by S3; the AWS SDK signs with V4 only"},
		{"sse-c", b + "  sse_config:\n    type: SSE-C\n    encryption_key: " + sseCKey + "\n", oursOnly, "every later read (planning, report, Athena) would need the key"},
		{"gcs", "type: GCS\nconfig:\n  bucket: b\n", oursOnly, "the exporter writes to S3 only"},
		{"list v1", b + "  list_objects_version: v1\n", oursOnly, "the exporter lists with ListObjectsV2"},
		{"part size below S3's minimum", b + "  part_size: 1024\n", oursOnly, "S3 refuses parts under 5 MiB"},
		{"metadata content-type", b + "  put_user_metadata:\n    Content-Type: text/plain\n", oursOnly, "the exporter sets the Parquet media type"},
		{"bad bucket name", "type: S3\nconfig:\n  bucket: Bad_Bucket\n  endpoint: s3.amazonaws.com\n", oursOnly, "not an S3 bucket name"},
		{"filesystem unknown key", "type: FILESYSTEM\nconfig:\n  directory: /d\n  extra: 1\n", oursOnly, "objstore's filesystem provider decodes loosely; the exporter is strict everywhere"},
	}
	rows = append(rows, endpointCases()...)
	rows = append(rows, accessPointCases()...)
	return append(rows, headerCases(caFile)...)
}

// s3With is an S3 file of bucket and endpoint, with more config lines.
func s3With(bucket, endpoint string, more ...string) string {
	doc := "type: S3\nconfig:\n  bucket: " + bucket + "\n  endpoint: " + endpoint + "\n"
	for _, l := range more {
		doc += "  " + l + "\n"
	}
	return doc
}

// endpointCases are endpoints as people copy them: the region, endpoint
// and addressing of each accepted one are compared with minio-go's
// (compareDerived).
func endpointCases() []compatCase {
	return []compatCase{
		// The outside review's inputs.
		{"bucket in the global host", s3With("cost-archive", "cost-archive.s3.amazonaws.com"), neither, ""},
		{"docker-compose service name", s3With("costs", "minio_1:9000", "insecure: true", "access_key: minio", "secret_key: minio123"), both, ""},
		{"fully qualified name", s3With("cost-archive", "s3.amazonaws.com."), both, ""},
		{"fips without region", s3With("cost-archive", "s3-fips.us-east-2.amazonaws.com"), both, ""},
		{"fips dual-stack", s3With("cost-archive", "s3-fips.dualstack.us-west-2.amazonaws.com"), both, ""},
		{"dual-stack", s3With("cost-archive", "s3.dualstack.eu-west-1.amazonaws.com"), both, ""},
		{"s3-external-1", s3With("cost-archive", "s3-external-1.amazonaws.com"), both, ""},
		{"china", s3With("cost-archive", "s3.cn-north-1.amazonaws.com.cn"), both, ""},
		{"china dual-stack", s3With("cost-archive", "s3.dualstack.cn-northwest-1.amazonaws.com.cn"), both, ""},
		{"prefix with a backslash", "prefix: team-a\\costs\n" + s3With("cost-archive", "s3.amazonaws.com"), oursOnly,
			"Windows tools read a backslash as a separator"},
		{"prefix with a tab", "prefix: \"team-a\\tcosts\"\n" + s3With("cost-archive", "s3.amazonaws.com"), oursOnly,
			"a control character in a key is unreadable in every tool that lists it"},
		{"prefix with an escape character", "prefix: \"team-a/\\x1bcosts\"\n" + s3With("cost-archive", "s3.amazonaws.com"), oursOnly,
			"a control character in a key is unreadable in every tool that lists it"},

		// More of the same kind.
		{"bucket in a regional host", s3With("cost-archive", "cost-archive.s3.eu-west-1.amazonaws.com"), oursOnly,
			"objstore sends path-style requests to the bucket's own host, which S3 reads as keys under cost-archive/"},
		{"bucket in a dual-stack host", s3With("cost-archive", "cost-archive.s3.dualstack.us-east-1.amazonaws.com"), oursOnly,
			"objstore sends path-style requests to the bucket's own host, which S3 reads as keys under cost-archive/"},
		{"bucket as a path", s3With("cost-archive", "s3.amazonaws.com/cost-archive"), neither, ""},
		{"trailing slash, as mc alias set writes it", s3With("costs", "minio.minio.svc.cluster.local:9000/", "insecure: true"), both, ""},
		{"ipv6 in brackets", s3With("costs", "\"[fd00::10]:9000\"", "insecure: true"), both, ""},
		{"aws with port 443", s3With("cost-archive", "s3.us-west-2.amazonaws.com:443"), both, ""},
		{"legacy hyphenated region", s3With("cost-archive", "s3-us-west-2.amazonaws.com"), both, ""},
		{"host in upper case", s3With("cost-archive", "S3.EU-CENTRAL-1.AMAZONAWS.COM"), both, ""},
		{"dotted bucket over tls", s3With("cost.archive.example", "s3.dualstack.us-east-1.amazonaws.com"), both, ""},
		{"privatelink interface endpoint", s3With("cost-archive", "bucket.vpce-1a2b3c4d-5e6f.s3.us-east-1.vpce.amazonaws.com"), both, ""},
		{"google cloud storage interoperability", s3With("cost-archive", "storage.googleapis.com", "access_key: GOOG1EXAMPLE", "secret_key: s"), both, ""},
		{"bucket in google's host", s3With("cost-archive", "cost-archive.storage.googleapis.com"), neither, ""},
		{"alibaba oss", s3With("cost-archive", "oss-cn-hangzhou.aliyuncs.com", "access_key: LTAI", "secret_key: s"), both, ""},
	}
}

// headerCases are put_user_metadata and TLS inputs: what objstore would
// send is read off a request it makes (compareHeaders), and the TLS
// settings off its transport (compareTLS).
func headerCases(caFile string) []compatCase {
	const b = "type: S3\nconfig:\n  bucket: cost-archive\n  endpoint: s3.amazonaws.com\n"
	return []compatCase{
		{"metadata key with a space", b + "  put_user_metadata:\n    \"team name\": finops\n", oursOnly,
			"minio-go refuses the name at every upload, so objstore takes the file and never writes"},
		{"standard headers as metadata", b + "  put_user_metadata:\n    Cache-Control: no-cache\n    Content-Disposition: attachment\n" +
			"    Content-Language: en\n    X-Amz-Website-Redirect-Location: /index.html\n    team: finops\n", oursSends,
			"minio-go refuses them as user metadata at every upload; the exporter sends them as the headers they name"},
		{"tagging header as metadata", b + "  put_user_metadata:\n    X-Amz-Tagging: team=finops\n    X-Amz-Grant-Read: id=111122223333\n", both, ""},
		{"tls_config insecure_skip_verify alone", b + "  http_config:\n    tls_config:\n      insecure_skip_verify: true\n      ca_file: " + caFile + "\n", both, ""},
		{"insecure_skip_verify false over tls_config true", b + "  http_config:\n    insecure_skip_verify: false\n    tls_config:\n      insecure_skip_verify: true\n", both, ""},
	}
}

// accessPointCases are S3 access points named in the file
// (docs/object-store-config.md, "Access points").
func accessPointCases() []compatCase {
	const (
		alias = "cost-ap-hrzrlukc5m36ft7okagglf3gmwluquse1b-s3alias"
		arn   = "arn:aws:s3:eu-west-1:444455556666:accesspoint/cost-ap"
	)
	return []compatCase{
		// minio-go takes an alias as any bucket name, and uploads with it.
		{"access point alias", s3With(alias, "s3.eu-west-1.amazonaws.com", "put_user_metadata:", "  team: finops"), both, ""},
		{"access point arn", s3With(arn, "s3.amazonaws.com"), theirsFails,
			"minio-go refuses a bucket name with ':' or '/' at every call; the AWS SDK sends to the access point's host"},
		{"access point arn, region from the host", s3With(arn, "s3.eu-west-1.amazonaws.com"), theirsFails,
			"minio-go refuses a bucket name with ':' or '/' at every call; the AWS SDK sends to the access point's host"},
		{"access point arn with path-style", s3With(arn, "s3.amazonaws.com", "bucket_lookup_type: path"), oursOnly,
			"access points take virtual-hosted-style requests only"},
		{"access point alias with path-style", s3With(alias, "s3.amazonaws.com", "bucket_lookup_type: path"), oursOnly,
			"access points take virtual-hosted-style requests only"},
		{"access point arn of another region", s3With(arn, "s3.amazonaws.com", "region: us-east-1"), oursOnly,
			"the ARN names the access point's region; a second region in the file contradicts it"},
		{"access point arn on minio", s3With(arn, "minio:9000", "insecure: true"), oursOnly,
			"an access point ARN reaches only AWS's access point hosts"},
		{"access point host as the endpoint", s3With("cost-archive", "cost-ap-444455556666.s3-accesspoint.eu-west-1.amazonaws.com"), oursOnly,
			"objstore sends path-style requests naming the bucket to the access point's host; the alias or the ARN as the bucket keeps the access point"},
		{"object lambda access point host", s3With("cost-archive", "olap-444455556666.s3-object-lambda.eu-west-1.amazonaws.com"), oursOnly,
			"Object Lambda serves reads only; objstore sends path-style requests naming the bucket to it"},
		{"multi-region access point host", s3With("cost-archive", "mfzwi23gnjvgw.mrap.accesspoint.s3-global.amazonaws.com"), oursOnly,
			"a conditional write through a Multi-Region Access Point holds per bucket, not for the archive"},
		{"outposts access point host", s3With("cost-archive", "reports-123456789012.op-01234567890123456.s3-outposts.us-west-2.amazonaws.com"), oursOnly,
			"S3 on Outposts is refused: AWS documents the conditional writes the exporter relies on for S3 buckets only"},
		{"outposts access point arn", s3With("arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-01234567890123456/accesspoint/reports", "s3.amazonaws.com"), oursOnly,
			"S3 on Outposts is refused (objstore takes the file and then refuses the name at every call)"},
		{"outposts access point alias", s3With("my-access-po-o01ac5d28a6a232904e8xz5w8ijx1qzlbp3i3kuse10--op-s3", "s3.amazonaws.com"), oursOnly,
			"S3 on Outposts is refused"},
	}
}
