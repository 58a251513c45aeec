package kubecost

// keyCache maps member names to small ints through a cache in front of
// resolve (a map lookup). Its hash reads six bytes and the length instead
// of the whole name, and each name has two candidate entries, so a lookup
// is mostly one string compare. Distinct names are few (fields, label
// keys), so the cache fills once and then only hits; a name that finds
// both entries taken keeps asking resolve, which is merely slower.
type keyCache struct {
	ents    [512]keyEntry
	resolve func([]byte) int // must not retain its argument
}

type keyEntry struct {
	key string
	val int32
	set bool
}

// cacheGet is c's value of name b, a string or bytes: generic, so a
// string key needs no conversion to bytes.
func cacheGet[T string | []byte](c *keyCache, b T) int {
	n := len(b)
	h := uint32(n) * 0x9e3779b1
	if n > 0 {
		h ^= uint32(b[0]) | uint32(b[n/2])<<8 | uint32(b[n-1])<<16 | uint32(b[n/3])<<24
		h ^= uint32(b[1%n])<<5 ^ uint32(b[n-1-n/4])<<13
	}
	h *= 0x85ebca6b
	e1, e2 := &c.ents[h>>23], &c.ents[(h>>7)&511]
	if e1.set && e1.key == string(b) {
		return int(e1.val)
	}
	if e2.set && e2.key == string(b) {
		return int(e2.val)
	}
	v := c.resolve([]byte(b)) // a miss: rare once the cache is warm
	if !e1.set {
		*e1 = keyEntry{key: string(b), val: int32(v), set: true}
	} else if !e2.set {
		*e2 = keyEntry{key: string(b), val: int32(v), set: true}
	}
	return v
}

// internMax bounds the interner: past it, new values are allocated each
// time instead of cached, so a day with many distinct names costs garbage,
// not memory that grows with the day. The values that repeat most
// (cluster, node, namespace, node labels) are met early and stay cached;
// allocation names, unique within an hour, rarely profit. 4k entries keep
// the interner a small part of the live heap at no measurable CPU cost
// (docs/performance.md, "Fewer, smaller buffers").
const internMax = 1 << 12

// interner returns one string per distinct value: names, namespaces and
// label values repeat across a day's allocations, so most cost no
// allocation. It stops growing at max entries.
type interner struct {
	m   map[string]string
	max int
}

func (in *interner) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in.m) < in.max {
		in.m[s] = s
	}
	return s
}
