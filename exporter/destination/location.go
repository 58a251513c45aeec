package destination

import "strings"

// ParseLocation reads a location written as one string, s3://bucket/prefix/
// or a local directory, into settings of their own: how a reader names an
// object store other than the archive (the report's CUR 2.0 export,
// CUR_EXPORT_LOCATION). bad is called for each problem, with the bucket
// and prefix rules the archive's own settings obey; nil when the location
// is refused.
func ParseLocation(loc string, bad func(format string, args ...any)) *Settings {
	rest, isS3 := strings.CutPrefix(loc, "s3://")
	if !isS3 {
		return &Settings{OutputDir: loc}
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	s := &Settings{S3BucketName: bucket, S3Prefix: prefix}
	ok := bucket != ""
	if !ok {
		bad("accepted: s3://bucket/prefix/ or a local directory")
	}
	fail := func(_, format string, args ...any) { ok = false; bad(format, args...) }
	if bucket != "" {
		checkBucket(s, Scope{}, fail)
	}
	checkPrefix(s.S3Prefix, fail)
	if !ok {
		return nil
	}
	return s
}
