package awsfake

import (
	"fmt"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// WriterPolicy mirrors the identity policy terraform/modules/exporter
// attaches to the writing (parent) role, as a MinIO canned policy: list
// only under this account and region's prefix; list the bucket's
// unfinished uploads; put or abort, and read (HeadObject) or delete for
// re-exports, only this cluster's day files, one resource per codec.
// Every wildcard is a fixed-length "?", so no key with another shape, or
// another cluster's name, can match.
func WriterPolicy(bucket, prefix, account, region, cluster string) string {
	part := fmt.Sprintf("%saccount_id=%s/region=%s/", prefix, account, region)
	var objects []string
	for _, codec := range exporter.Codecs() {
		objects = append(objects, fmt.Sprintf(`"arn:aws:s3:::%s/%syear=????/month=??/????-??-??_%s.%s.parquet"`, bucket, part, cluster, codec))
	}
	return `{"Version":"2012-10-17","Statement":[
	  {"Sid":"ListOwnPartitionPrefix","Effect":"Allow","Action":["s3:ListBucket"],"Resource":["arn:aws:s3:::` + bucket + `"],
	   "Condition":{"StringLike":{"s3:prefix":["` + part + `*"]}}},
	  {"Sid":"ListUnfinishedUploads","Effect":"Allow","Action":["s3:ListBucketMultipartUploads"],"Resource":["arn:aws:s3:::` + bucket + `"]},
	  {"Sid":"WriteOwnDailyFiles","Effect":"Allow","Action":["s3:PutObject","s3:AbortMultipartUpload"],
	   "Resource":[` + strings.Join(objects, ",") + `]},
	  {"Sid":"ReplaceOwnDailyFiles","Effect":"Allow","Action":["s3:GetObject","s3:DeleteObject"],
	   "Resource":[` + strings.Join(objects, ",") + `]}]}`
}
