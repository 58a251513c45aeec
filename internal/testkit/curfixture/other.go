package curfixture

import (
	"fmt"
	"time"
)

// OtherServices generates the lines an organisation's export has besides
// its clusters' (storage, databases, functions, logs, data transfer, NAT):
// lines that are neither pod lines nor instance lines of a cluster and that
// a bill's reader must skip. Line i of an hour of an account is a pure
// function of (account, i, hour). Resources is how many distinct resources
// an account has; 0 means 1000.
type OtherServices struct {
	Resources int
	ids       map[string][]string
}

// otherKinds are the services' (product code, operation, usage type,
// resource id format, cost per line) as a Data Export writes them
// (https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2-line-item.html).
var otherKinds = []struct {
	product, operation, usage, id string
	cost                          float64
}{
	{"AmazonS3", "StandardStorage", "TimedStorage-ByteHrs", "arn:aws:s3:::bucket-%s-%d", 0.0031},
	{"AmazonS3", "GetObject", "Requests-Tier2", "arn:aws:s3:::bucket-%s-%d", 0.0004},
	{"AmazonRDS", "CreateDBInstance:0014", "InstanceUsage:db.r6g.large", "arn:aws:rds:us-east-1:%s:db:db-%d", 0.258},
	{"AWSLambda", "Invoke", "Lambda-GB-Second", "arn:aws:lambda:us-east-1:%s:function:fn-%d", 0.0017},
	{"AmazonCloudWatch", "PutLogEvents", "DataProcessing-Bytes", "arn:aws:logs:us-east-1:%s:log-group:lg-%d", 0.0052},
	{"AmazonDynamoDB", "PayPerRequestThroughput", "ReadRequestUnits", "arn:aws:dynamodb:us-east-1:%s:table/t-%d", 0.0009},
	{"AWSDataTransfer", "PublicIP-Out", "DataTransfer-Out-Bytes", "i-0%s%08x", 0.0093},
	{"AmazonEC2", "NatGateway", "NatGateway-Hours", "arn:aws:ec2:us-east-1:%s:natgateway/nat-%d", 0.045},
}

// Line is line i of the hour starting at start for account.
func (o *OtherServices) Line(account string, i int, start time.Time) Row {
	n := o.Resources
	if n <= 0 {
		n = 1000
	}
	if o.ids == nil {
		o.ids = map[string][]string{}
	}
	ids := o.ids[account]
	if ids == nil {
		ids = make([]string, n*len(otherKinds))
		for j := range ids {
			k := otherKinds[j%len(otherKinds)]
			ids[j] = fmt.Sprintf(k.id, account, j/len(otherKinds))
		}
		o.ids[account] = ids
	}
	j := i % len(ids)
	k := otherKinds[j%len(otherKinds)]
	cost := k.cost * (1 + float64((i*7919+start.Hour()*104729)%100)/100)
	return Row{AccountID: account, LineItemType: "Usage", Operation: k.operation, ProductCode: k.product,
		UsageType: k.usage, ResourceID: ids[j], Start: start, End: start.Add(time.Hour), UsageAmount: 1,
		Unblended: F(cost), PublicOnDemand: F(cost)}
}
