package bill

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// batchRows is how many lines are decoded at a time, whatever the row group's size.
const batchRows = 4096

// timeDecoder decodes line_item_usage_start_date: INT64 timestamps of any unit (UTC-adjusted
// or not: CUR's are UTC either way) or the legacy INT96.
type timeDecoder struct {
	unit  time.Duration
	int96 bool
}

func newTimeDecoder(n parquet.Node) (timeDecoder, error) {
	t := n.Type()
	switch t.Kind() {
	case parquet.Int96:
		return timeDecoder{int96: true}, nil
	case parquet.Int64:
		if lt := t.LogicalType(); lt != nil {
			if ts, ok := lt.Value.(*format.TimestampType); ok && ts.Unit.Value != nil {
				return timeDecoder{unit: ts.Unit.Value.Duration()}, nil
			}
		}
		if ct := t.ConvertedType(); ct != nil {
			switch *ct {
			case deprecated.TimestampMillis:
				return timeDecoder{unit: time.Millisecond}, nil
			case deprecated.TimestampMicros:
				return timeDecoder{unit: time.Microsecond}, nil
			}
		}
	}
	return timeDecoder{}, fmt.Errorf("%w: not a timestamp (%s)", ErrNotSCAD, t)
}

// julianUnixEpoch is the Julian day of 1970-01-01, INT96's day origin.
const julianUnixEpoch = 2440588

func (d timeDecoder) decode(v parquet.Value) time.Time {
	if v.IsNull() {
		return time.Time{}
	}
	if d.int96 {
		i := v.Int96()
		nanos := int64(uint64(i[1])<<32 | uint64(i[0]))
		return time.Unix((int64(i[2])-julianUnixEpoch)*86400, nanos).UTC()
	}
	return time.Unix(0, 0).Add(time.Duration(v.Int64()) * d.unit).UTC()
}

// PodIDPrefix is the part of a resource id that the rules read, up to its third '/' (cluster
// and namespace), or "" when it cannot be a pod's (no ":pod" first part, or fewer '/').
// ParseResourceID gives the same cluster, namespace and ok for it; the reader keeps one prefix
// per cluster and namespace, never one per pod.
func PodIDPrefix(id []byte) []byte {
	slash := bytes.IndexByte(id, '/')
	if slash < 0 || !bytes.HasSuffix(id[:slash], []byte(":pod")) {
		return nil
	}
	end := slash + 1
	for range 2 {
		i := bytes.IndexByte(id[end:], '/')
		if i < 0 {
			return nil
		}
		end += i + 1
	}
	return id[:end]
}

// batch is one batch of decoded lines, column by column. Each column is decoded into its own
// slice by a direct closure: filling the lines through a table of field accessors cost about a
// quarter more time on make bench-cur's week (19.9 s against 15.5 s).
type batch struct {
	op, usageType, itemType, resource, parent []string
	// The resource lines' strings (resource.go): account, product code, region, description
	// (kept only where a rule reads it), RI ARN.
	account, product, region, descr, riARN []string
	clusterTag                             []string // ClusterTagName of resource_tags
	start                                  []time.Time
	nums                                   [len(numFields)][]NullFloat
	buf                                    []parquet.Value
}

func newBatch() *batch {
	b := &batch{
		op: make([]string, batchRows), usageType: make([]string, batchRows), itemType: make([]string, batchRows),
		resource: make([]string, batchRows), parent: make([]string, batchRows),
		account: make([]string, batchRows), product: make([]string, batchRows), region: make([]string, batchRows),
		descr: make([]string, batchRows), riARN: make([]string, batchRows), clusterTag: make([]string, batchRows),
		start: make([]time.Time, batchRows), buf: make([]parquet.Value, batchRows),
	}
	for i := range b.nums {
		b.nums[i] = make([]NullFloat, batchRows)
	}
	return b
}

// line fills l with line i.
func (b *batch) line(i int, l *ResourceLine) {
	l.Operation, l.UsageType, l.LineItemType = b.op[i], b.usageType[i], b.itemType[i]
	l.ResourceID, l.ParentResourceID, l.UsageStart = b.resource[i], b.parent[i], b.start[i]
	l.Account, l.ProductCode, l.RegionCode, l.Description, l.ReservationARN = b.account[i], b.product[i], b.region[i], b.descr[i], b.riARN[i]
	l.ClusterTag = b.clusterTag[i]
	for j, f := range numFields {
		*f.field(l) = b.nums[j][i]
	}
}

// strColumns are the string columns read, in the order of decode's conversions; the product
// code comes before the description, whose closure reads it.
var strColumns = [...]string{ColOperation, ColUsageType, ColLineItemType, ColResourceID, ColParentResourceID,
	ColUsageAccountID, ColProductCode, ColRegionCode, ColReservationARN, ColDescription}

// numField is a double column and the line's field, together so none lands in another's field.
type numField struct {
	col   string
	field func(*ResourceLine) *NullFloat
}

// numFields are the double columns read: Line's first, then ResourceLine's own.
var numFields = [...]numField{
	{ColSplitCost, func(l *ResourceLine) *NullFloat { return &l.SplitCost }},
	{ColUnusedCost, func(l *ResourceLine) *NullFloat { return &l.UnusedCost }},
	{ColNetSplitCost, func(l *ResourceLine) *NullFloat { return &l.NetSplitCost }},
	{ColNetUnusedCost, func(l *ResourceLine) *NullFloat { return &l.NetUnusedCost }},
	{ColPublicOnDemandSplit, func(l *ResourceLine) *NullFloat { return &l.PublicOnDemandSplit }},
	{ColPublicOnDemandUnused, func(l *ResourceLine) *NullFloat { return &l.PublicOnDemandUnused }},
	{ColUnblendedCost, func(l *ResourceLine) *NullFloat { return &l.UnblendedCost }},
	{ColNetUnblendedCost, func(l *ResourceLine) *NullFloat { return &l.NetUnblendedCost }},
	{ColPublicOnDemandCost, func(l *ResourceLine) *NullFloat { return &l.PublicOnDemand }},
	{ColSPEffectiveCost, func(l *ResourceLine) *NullFloat { return &l.SPEffectiveCost }},
	{ColSPNetEffectiveCost, func(l *ResourceLine) *NullFloat { return &l.SPNetEffectiveCost }},
	{ColReservationEffective, func(l *ResourceLine) *NullFloat { return &l.RIEffective }},
	{ColRINetEffective, func(l *ResourceLine) *NullFloat { return &l.RINetEffective }},
	{ColRIUnusedUpfront, func(l *ResourceLine) *NullFloat { return &l.RIUnusedUpfront }},
	{ColRIUnusedRecurring, func(l *ResourceLine) *NullFloat { return &l.RIUnusedRecurring }},
	{ColRINetUnusedUpfront, func(l *ResourceLine) *NullFloat { return &l.RINetUnusedUpfront }},
	{ColRINetUnusedRecurring, func(l *ResourceLine) *NullFloat { return &l.RINetUnusedRecurring }},
	{ColSPTotalCommitment, func(l *ResourceLine) *NullFloat { return &l.SPTotalCommitment }},
	{ColSPUsedCommitment, func(l *ResourceLine) *NullFloat { return &l.SPUsedCommitment }},
}

// keptResourceID is the id kept: a pod's PodIDPrefix, the whole id of an instance, volume or
// load balancer (bounded by the resources billed), else "".
func keptResourceID(id []byte) []byte {
	if p := PodIDPrefix(id); p != nil {
		return p
	}
	if bytes.HasPrefix(id, []byte("i-")) || bytes.HasPrefix(id, []byte("vol-")) ||
		bytes.HasPrefix(id, []byte("arn:")) && bytes.Contains(id, []byte(":elasticloadbalancing:")) {
		return id
	}
	return nil
}

// column is an open column of a row group, read value by value.
type column struct {
	name string
	r    parquet.ColumnChunkValueReader // nil when the file lacks the column
}

// fill decodes the next n values into conv(i, v), each before the next read: a byte array
// points into its page, which the reader releases when it moves on.
func (c column) fill(buf []parquet.Value, n int, conv func(i int, v parquet.Value)) error {
	if c.r == nil {
		for i := range n {
			conv(i, parquet.NullValue())
		}
		return nil
	}
	got := 0
	for got < n {
		k, err := c.r.ReadValues(buf[:n-got])
		for j, v := range buf[:k] {
			conv(got+j, v)
		}
		got += k
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	if got != n {
		return fmt.Errorf("%s: %d values for %d lines", c.name, got, n)
	}
	return nil
}

// repeatedColumn is an open repeated leaf (a map's keys): a line's values run up to the next
// of repetition level 0. rest holds, cloned, the values read past a batch's last line.
type repeatedColumn struct {
	r    parquet.ColumnChunkValueReader // nil when the file lacks the column
	rest []parquet.Value
}

// fill calls conv(i, v) for each value of the next n lines (a null for an empty or null map).
func (c *repeatedColumn) fill(buf []parquet.Value, n int, conv func(i int, v parquet.Value)) error {
	if c.r == nil {
		return nil
	}
	row := -1
	// take reports false at the first value of line n.
	take := func(vals []parquet.Value) (int, bool) {
		for j, v := range vals {
			if v.RepetitionLevel() == 0 {
				if row++; row == n {
					return j, false
				}
			}
			if row >= 0 {
				conv(row, v)
			}
		}
		return len(vals), true
	}
	carried := c.rest
	c.rest = nil
	if j, ok := take(carried); !ok {
		c.rest = carried[j:]
		return nil
	}
	for {
		k, err := c.r.ReadValues(buf)
		if j, ok := take(buf[:k]); !ok {
			for _, v := range buf[j:k] {
				c.rest = append(c.rest, v.Clone())
			}
			return nil
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", ColResourceTags, err)
		}
	}
	if row != n-1 {
		return fmt.Errorf("%s: %d lines for %d", ColResourceTags, row+1, n)
	}
	return nil
}

// intern returns one string per distinct value (they repeat on millions of lines).
func (a *Aggregator) intern(b []byte) string {
	if s, ok := a.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	a.strs[s] = s
	return s
}

// groupColumns are the open columns of a row group.
type groupColumns struct {
	strs  [len(strColumns)]column
	start column
	tags  repeatedColumn
	nums  [len(numFields)]column
}

func (a *Aggregator) readRowGroup(rg parquet.RowGroup, fc fileColumns) error {
	chunks := rg.ColumnChunks()
	var cols groupColumns
	var readers []parquet.ColumnChunkValueReader
	open := func(name string, i int) column {
		c := column{name: name}
		if i >= 0 {
			c.r = parquet.NewColumnChunkValueReader(chunks[i])
			readers = append(readers, c.r)
		}
		return c
	}
	defer func() {
		for _, r := range readers {
			r.Close()
		}
	}()
	for i, name := range strColumns {
		cols.strs[i] = open(name, fc.idx[name])
	}
	cols.start = open(ColUsageStart, fc.idx[ColUsageStart])
	cols.tags.r = open(ColResourceTags, fc.tagKey).r
	for i, f := range numFields {
		cols.nums[i] = open(f.col, fc.idx[f.col])
	}
	if a.batch == nil {
		a.batch = newBatch()
	}
	var l ResourceLine
	for left := int(rg.NumRows()); left > 0; {
		n := min(left, batchRows)
		left -= n
		if err := a.decode(&cols, fc.start, n); err != nil {
			return err
		}
		for i := range n {
			a.batch.line(i, &l)
			a.Add(&l.Line)
			a.AddResource(&l)
		}
		a.sum.Stats.Lines += int64(n)
	}
	return nil
}

// decode reads the next n lines of cols into the batch.
func (a *Aggregator) decode(cols *groupColumns, start timeDecoder, n int) error {
	b := a.batch
	str := func(dst []string) func(int, parquet.Value) {
		return func(i int, v parquet.Value) {
			if v.IsNull() {
				dst[i] = ""
			} else {
				dst[i] = a.intern(v.ByteArray())
			}
		}
	}
	conv := [len(strColumns)]func(int, parquet.Value){str(b.op), str(b.usageType), str(b.itemType),
		func(i int, v parquet.Value) { b.resource[i] = a.intern(keptResourceID(v.ByteArray())) },
		// exporter/split matches SCAD's pod lines with the instance's own lines by the parent id.
		str(b.parent), str(b.account), str(b.product), str(b.region), str(b.riARN),
		// Descriptions differ line by line; only the Savings Plan refund rule reads one.
		func(i int, v parquet.Value) {
			b.descr[i] = ""
			if b.product[i] == productComputeSP && !v.IsNull() {
				b.descr[i] = string(v.ByteArray())
			}
		}}
	var errs []error
	for i, c := range cols.strs {
		errs = append(errs, c.fill(b.buf, n, conv[i]))
	}
	clear(b.clusterTag[:n])
	errs = append(errs, cols.tags.fill(b.buf, n, func(i int, v parquet.Value) {
		// The least cluster a key names, as clusterTagSQL.
		if name := ClusterTagName(v.ByteArray()); !v.IsNull() && name != nil && (b.clusterTag[i] == "" || string(name) < b.clusterTag[i]) {
			b.clusterTag[i] = a.intern(name)
		}
	}))
	errs = append(errs, cols.start.fill(b.buf, n, func(i int, v parquet.Value) { b.start[i] = start.decode(v) }))
	for j, c := range cols.nums {
		dst := b.nums[j]
		errs = append(errs, c.fill(b.buf, n, func(i int, v parquet.Value) {
			dst[i] = NullFloat{}
			if !v.IsNull() {
				dst[i] = Float(v.Double())
			}
		}))
	}
	return errors.Join(errs...)
}
