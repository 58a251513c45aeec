// Package providerfloor is the table of the provider resources, data
// sources and arguments the Terraform modules use, each with the first
// provider version that has it (as the provider's CHANGELOG says), and
// the rule that a module's required_providers lower bound is the highest
// of those versions for what it uses. A test in the terraform package
// parses every module and example and holds its versions.tf to Floor.
package providerfloor

import (
	"fmt"
	"strconv"
	"strings"
)

// Entry is one resource or data source ("resource"/"data" Kind, Type
// "aws_s3_bucket"), one argument or attribute of it (Argument
// "export.data_query", a block path and name joined with "."), or the
// provider itself (Kind "provider", Type its local name: the oldest
// release the supported Terraform versions can run) and an attribute of
// its configuration.
type Entry struct {
	Provider string // local provider name: aws, helm
	Kind     string // resource, data or provider
	Type     string
	Argument string // "" for the resource or data source itself
	Since    string // x.y.z
	Source   string // the CHANGELOG section (file, version, date, line) Since comes from
}

// Key is kind.type[.argument], e.g. resource.aws_s3_bucket.
func (e Entry) Key() string {
	k := e.Kind + "." + e.Type
	if e.Argument != "" {
		k += "." + e.Argument
	}
	return k
}

// Compare orders x.y.z versions: -1, 0 or 1.
func Compare(a, b string) (int, error) {
	pa, err := parse(a)
	if err != nil {
		return 0, err
	}
	pb, err := parse(b)
	if err != nil {
		return 0, err
	}
	for i := range pa {
		switch {
		case pa[i] < pb[i]:
			return -1, nil
		case pa[i] > pb[i]:
			return 1, nil
		}
	}
	return 0, nil
}

func parse(v string) ([3]int, error) {
	var out [3]int
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return out, fmt.Errorf("providerfloor: version %q is not x.y.z", v)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return out, fmt.Errorf("providerfloor: version %q is not x.y.z", v)
		}
		out[i] = n
	}
	return out, nil
}

// Floor returns, per provider, the highest Since of the table's entries
// whose keys are in used (see Entry.Key), and the used resources and data
// sources the table lacks. Argument keys missing from the table are not
// reported: only arguments newer than a resource need an entry.
func Floor(table []Entry, used []string) (map[string]string, []string, error) {
	byKey := map[string]Entry{}
	for _, e := range table {
		byKey[e.Key()] = e
	}
	floor := map[string]string{}
	var missing []string
	for _, k := range used {
		e, ok := byKey[k]
		if !ok {
			if strings.Count(k, ".") == 1 {
				missing = append(missing, k)
			}
			continue
		}
		if cur, ok := floor[e.Provider]; ok {
			c, err := Compare(e.Since, cur)
			if err != nil {
				return nil, nil, err
			}
			if c <= 0 {
				continue
			}
		}
		floor[e.Provider] = e.Since
	}
	return floor, missing, nil
}
