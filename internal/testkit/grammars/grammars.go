// Package grammars holds the tables of valid and invalid inputs of the
// exporter's grammars: archive keys, EKS cluster ARNs, base URLs and
// Kubecost's special allocation names. Each grammar is defined once
// (exporter.ParseKey and Layout.ParseKey, exporter.ParseClusterARN,
// exporter.IsBaseURL, the names in exporter/schema); every package that
// calls it feeds these tables through its own entry point, so that no
// caller can drift from the definition. ProductLiterals lets a test find
// a definition's spelling outside its home.
package grammars

import "time"

// Key is one archive key (CONTRACT §3) and what it says when OK.
type Key struct {
	Key     string
	OK      bool
	Prefix  string
	Account string
	Region  string
	Cluster string
	Day     time.Time
	Codec   string
}

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Keys are whole keys; a valid one's file name also parses alone.
func Keys() []Key {
	nov5 := day("2026-11-05")
	return []Key{
		{"account_id=111122223333/region=us-east-1/year=2026/month=11/2026-11-05_prod.snappy.parquet", true, "", "111122223333", "us-east-1", "prod", nov5, "snappy"},
		{"team/costs/account_id=111122223333/region=eu-west-1/year=2026/month=11/2026-11-05_prod-eu.zstd.parquet", true, "team/costs/", "111122223333", "eu-west-1", "prod-eu", nov5, "zstd"},
		{"account_id=111122223333/region=us-gov-west-1/year=2026/month=11/2026-11-05_eu_prod.gzip.parquet", true, "", "111122223333", "us-gov-west-1", "eu_prod", nov5, "gzip"},
		// A name CCA or a user may have given: the cluster is what lies between.
		{"account_id=111122223333/region=us-east-1/year=2026/month=11/2026-11-05_my_cluster.v2.gzip.parquet", true, "", "111122223333", "us-east-1", "my_cluster.v2", nov5, "gzip"},
		{Key: "account_id=111122223333/region=us-east-1/year=2026/month=10/2026-11-05_prod.snappy.parquet"}, // wrong month folder
		{Key: "account_id=111122223333/region=us-east-1/year=2025/month=11/2026-11-05_prod.snappy.parquet"}, // wrong year folder
		{Key: "account_id=111122223333/region=us-east-1/year=2026/month=11/2026-11-05_prod.lz4.parquet"},    // unknown codec
		{Key: "account_id=111122223333/region=us-east-1/year=2026/month=11/2026-11-31_prod.snappy.parquet"}, // no such day
		{Key: "account_id=111122223333/region=us-east-1/year=2026/month=11/2026-11-05_prod.snappy"},
		{Key: "account_id=111122223333/region=us-east-1/year=2026/month=11/2026-11-05_.snappy.parquet"}, // no cluster
		{Key: "account_id=111122223333/region=us-east-1/year=2026/month=11/2026-11-05_prod..parquet"},
		{Key: "account_id=111122223333/region=us-east-1/year=2026/month=11/report.html"},
		{Key: "account_id=abc/region=us-east-1/year=2026/month=11/2026-11-05_prod.snappy.parquet"},
		{Key: "account_id=111122223333/region=US-EAST-1/year=2026/month=11/2026-11-05_prod.snappy.parquet"},
		{Key: "region=us-east-1/year=2026/month=11/2026-11-05_prod.snappy.parquet"},
	}
}

// ClusterARN is one EKS cluster ARN and its name when OK.
type ClusterARN struct {
	ARN  string
	OK   bool
	Name string
}

// ClusterARNs are CLUSTER_ID values (and CLUSTER_ARNS' ARNs).
func ClusterARNs() []ClusterARN {
	return []ClusterARN{
		{"arn:aws:eks:us-east-1:111122223333:cluster/prod", true, "prod"},
		{"arn:aws-us-gov:eks:us-gov-west-1:111122223333:cluster/gov_1", true, "gov_1"},
		{"arn:aws-cn:eks:cn-northwest-1:111122223333:cluster/prod-cn", true, "prod-cn"},
		{"arn:aws-eusc:eks:eusc-de-east-1:111122223333:cluster/eu", true, "eu"},
		{ARN: "prod"},
		{ARN: "arn:aws:eks:us-east-1:11112222333:cluster/prod"}, // 11-digit account
		{ARN: "arn:aws:eks:us-east:111122223333:cluster/prod"},  // no region number
		{ARN: "arn:aws:eks:us-east-1:111122223333:nodegroup/prod/ng/x"},
		{ARN: "arn:aws-xyz:eks:us-east-1:111122223333:cluster/prod"},
		{ARN: "arn:aws:eks:us-east-1:111122223333:cluster/-prod"},
		{ARN: "arn:aws:eks:us-east-1:111122223333:cluster/pr.od"},
		{ARN: "arn:aws:eks:us-east-1:111122223333:cluster/prod/x"},
		{ARN: "arn:aws:iam::111122223333:role/prod"},
	}
}

// BaseURL is one base URL. QueryOnly marks a URL refused only for its
// query, which a Kubecost client's own URL may carry.
type BaseURL struct {
	URL       string
	OK        bool
	QueryOnly bool
}

// BaseURLs are KUBECOST_API_ENDPOINT and PUSHGATEWAY_URL values.
func BaseURLs() []BaseURL {
	return []BaseURL{
		{URL: "http://kubecost-cost-analyzer.kubecost:9090", OK: true},
		{URL: "https://kubecost.example.com/proxy/", OK: true},
		{URL: "http://user:pw@push.example.com:9091", OK: true},
		{URL: "http://[::1]:9090/path", OK: true},
		{URL: "kubecost-cost-analyzer.kubecost:9090"},
		{URL: "ftp://kubecost"},
		{URL: "http://"},
		{URL: "http://kubecost:9090#x"},
		{URL: "/model/allocation"},
		{URL: "http://kubecost:9090?window=1d", QueryOnly: true},
		{URL: "http://push.example.com/?job=x", QueryOnly: true},
	}
}

// Allocation is one Kubecost allocation name: whether it is idle cost,
// and the namespace the report files a row of no namespace under.
type Allocation struct {
	Name      string
	Cluster   string // the cluster whose rows it is among
	Idle      bool
	Namespace string // the report's name for it with an empty namespace
}

// Allocations are Kubecost's names, special and ordinary.
func Allocations() []Allocation {
	return []Allocation{
		{"__idle__", "prod", true, "Idle"},
		{"prod/__idle__", "prod", true, "Idle"},
		{"prod/node-1/__idle__", "prod", true, "Idle"},
		{"prod/node-1/__unmounted__", "prod", false, "__unmounted__"},
		{"__shared__", "prod", false, "__shared__"},
		{"prod/node-1/ns/pod/__unallocated__", "prod", false, "__unallocated__"},
		{"prod/node-1/ns/pod/app", "prod", false, "__unallocated__"},
		{"prod/node-1/ns/__idle__x", "prod", false, "__unallocated__"},
	}
}
