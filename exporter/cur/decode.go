package cur

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

// batchRows is how many lines are decoded at a time: every read column
// holds this many values, whatever the size of the row group.
const batchRows = 4096

// parentSet stands for a non-empty split_line_item_parent_resource_id:
// the rules only ask whether it is empty, and instance ids are not kept.
const parentSet = "(parent)"

// timeDecoder turns a line_item_usage_start_date value into a time: INT64
// timestamps of any unit (UTC-adjusted or not: CUR's are UTC either way)
// or the legacy INT96.
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

// PodIDPrefix is the part of a resource id that the rules read: up to and
// including its third '/' (cluster and namespace), or "" when the id
// cannot be a pod's (its first part does not end in ":pod", or it has
// fewer than three '/'). ParseResourceID gives the same cluster and
// namespace, and the same ok, for the prefix as for the id; the reader
// keeps prefixes only, one per cluster and namespace, never one per pod.
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

// batch is one batch of decoded lines, column by column.
type batch struct {
	op, usageType, itemType, resource, parent []string
	start                                     []time.Time
	nums                                      [len(numColumns)][]NullFloat
	buf                                       []parquet.Value
}

// numColumns are the double columns read, in the order of batch.nums.
var numColumns = [...]string{ColSplitCost, ColUnusedCost, ColNetSplitCost, ColNetUnusedCost,
	ColPublicOnDemandSplit, ColPublicOnDemandUnused, ColUnblendedCost, ColNetUnblendedCost,
	ColPublicOnDemandCost, ColSPEffectiveCost, ColSPNetEffectiveCost}

func newBatch() *batch {
	b := &batch{
		op: make([]string, batchRows), usageType: make([]string, batchRows), itemType: make([]string, batchRows),
		resource: make([]string, batchRows), parent: make([]string, batchRows),
		start: make([]time.Time, batchRows), buf: make([]parquet.Value, batchRows),
	}
	for i := range b.nums {
		b.nums[i] = make([]NullFloat, batchRows)
	}
	return b
}

func (b *batch) line(i int, l *Line) {
	*l = Line{
		Operation: b.op[i], UsageType: b.usageType[i], LineItemType: b.itemType[i],
		ResourceID: b.resource[i], ParentResourceID: b.parent[i], UsageStart: b.start[i],
		SplitCost: b.nums[0][i], UnusedCost: b.nums[1][i], NetSplitCost: b.nums[2][i], NetUnusedCost: b.nums[3][i],
		PublicOnDemandSplit: b.nums[4][i], PublicOnDemandUnused: b.nums[5][i], UnblendedCost: b.nums[6][i],
		NetUnblendedCost: b.nums[7][i], PublicOnDemand: b.nums[8][i], SPEffectiveCost: b.nums[9][i], SPNetEffectiveCost: b.nums[10][i],
	}
}

// column is an open column of a row group, read value by value.
type column struct {
	name string
	r    parquet.ColumnChunkValueReader // nil when the file lacks the column
}

// fill decodes the next n values into conv(i, v). A value is converted
// before the next read: a byte array points into its page, which the
// reader releases when it moves on.
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

// intern returns one string per distinct value: operations, usage types
// and pod prefixes repeat on millions of lines.
func (a *Aggregator) intern(b []byte) string {
	if s, ok := a.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	a.strs[s] = s
	return s
}

func (a *Aggregator) readRowGroup(rg parquet.RowGroup, fc fileColumns) error {
	chunks := rg.ColumnChunks()
	open := func(name string) column {
		c := column{name: name}
		if i := fc.idx[name]; i >= 0 {
			c.r = parquet.NewColumnChunkValueReader(chunks[i])
		}
		return c
	}
	strCols := []column{open(ColOperation), open(ColUsageType), open(ColLineItemType), open(ColResourceID), open(ColParentResourceID)}
	startCol := open(ColUsageStart)
	var numCols [len(numColumns)]column
	for i, name := range numColumns {
		numCols[i] = open(name)
	}
	defer func() {
		for _, c := range append(append(strCols, startCol), numCols[:]...) {
			if c.r != nil {
				c.r.Close()
			}
		}
	}()
	if a.batch == nil {
		a.batch = newBatch()
	}
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
	strConv := []func(int, parquet.Value){str(b.op), str(b.usageType), str(b.itemType),
		func(i int, v parquet.Value) { b.resource[i] = a.intern(PodIDPrefix(v.ByteArray())) },
		func(i int, v parquet.Value) {
			b.parent[i] = ""
			if len(v.ByteArray()) > 0 {
				b.parent[i] = parentSet
			}
		}}
	var l Line
	for left := int(rg.NumRows()); left > 0; {
		n := min(left, batchRows)
		left -= n
		var errs []error
		for i, c := range strCols {
			errs = append(errs, c.fill(b.buf, n, strConv[i]))
		}
		errs = append(errs, startCol.fill(b.buf, n, func(i int, v parquet.Value) { b.start[i] = fc.start.decode(v) }))
		for j, c := range numCols {
			dst := b.nums[j]
			errs = append(errs, c.fill(b.buf, n, func(i int, v parquet.Value) {
				dst[i] = NullFloat{}
				if !v.IsNull() {
					dst[i] = Float(v.Double())
				}
			}))
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		for i := range n {
			b.line(i, &l)
			a.Add(&l)
		}
		a.sum.Stats.Lines += int64(n)
	}
	return nil
}
