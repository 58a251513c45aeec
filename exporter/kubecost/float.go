package kubecost

import (
	"math"
	"math/big"
	"math/bits"
)

// maxFrac is the most decimals eiselLemire takes: Kubecost's shortest float formatting writes at
// most 17 significant digits, and a number below 1e-7 in exponent form (strconv's).
const maxFrac = 40

// pow128 is 10^-k as a 128-bit mantissa hi:lo with its top bit set, rounded down, and its leading
// bit's binary exponent e: 10^-k lies in [hi:lo × 2^(e-127), (hi:lo+1) × 2^(e-127)).
type pow128 struct {
	hi, lo uint64
	e      int
}

// negPow10s computes 10^-k for k = 0..maxFrac exactly with math/big, once per scanner.
func negPow10s() *[maxFrac + 1]pow128 {
	var t [maxFrac + 1]pow128
	ten := big.NewInt(10)
	for k := range t {
		d := new(big.Int).Exp(ten, big.NewInt(int64(k)), nil) // 10^k
		// 10^-k = 1/d has leading bit 2^e, e = -bitlen(d), or 0 for d = 1.
		e := -d.BitLen()
		if k == 0 {
			e = 0
		}
		// m = floor(2^(127-e) / d), which lies in [2^127, 2^128).
		num := new(big.Int).Lsh(big.NewInt(1), uint(127-e))
		m := num.Quo(num, d)
		lo := new(big.Int).And(m, new(big.Int).SetUint64(math.MaxUint64))
		t[k] = pow128{hi: new(big.Int).Rsh(m, 64).Uint64(), lo: lo.Uint64(), e: e}
	}
	return &t
}

// eiselLemire converts man × 10^-frac (man not 0) to the nearest float64 with Daniel Lemire's
// algorithm ("Number Parsing at a Gigabyte per Second", 2021). It reports false in the rare
// cases the 128-bit product cannot decide the rounding; the caller then asks strconv.
func eiselLemire(t *[maxFrac + 1]pow128, man uint64, frac int, neg bool) (float64, bool) {
	p := &t[frac]
	lz := bits.LeadingZeros64(man)
	man <<= uint(lz)
	// The top 128 bits of the 192-bit product man × (hi:lo), from hi alone unless a carry out
	// of the low bits could reach the bits kept.
	xHi, xLo := bits.Mul64(man, p.hi)
	if xHi&0x1FF == 0x1FF && xLo+man < man {
		yHi, yLo := bits.Mul64(man, p.lo)
		mHi, mLo := xHi, xLo+yHi
		if mLo < xLo {
			mHi++
		}
		if mHi&0x1FF == 0x1FF && mLo+1 == 0 && yLo+man < man {
			return 0, false
		}
		xHi, xLo = mHi, mLo
	}
	// Keep 54 bits: the 53 of a float64 and one to round with.
	msb := int(xHi >> 63)
	m := xHi >> uint(msb+9)
	if xLo == 0 && xHi&0x1FF == 0 && m&3 == 1 {
		return 0, false // possibly a tie that truncation hid
	}
	m += m & 1
	m >>= 1
	// The value is m × 2^(exp-52) with exp the leading bit's exponent.
	exp := p.e + 63 - lz + msb
	if m>>53 > 0 {
		m >>= 1
		exp++
	}
	biased := exp + 1023
	if biased < 1 || biased > 2046 {
		return 0, false // subnormal or out of range: strconv's
	}
	b := uint64(biased)<<52 | m&(1<<52-1)
	if neg {
		b |= 1 << 63
	}
	return math.Float64frombits(b), true
}

// float reads and converts a number value in one pass when it lies whole in the window. ok is
// false when the next value is not a plain number or comes near the window's end; the caller
// then takes the general path (value and numberOf).
func (s *scanner) float() (float64, bool) {
	b := s.b[s.i:]
	if len(b) < 64 {
		return 0, false
	}
	m, nd, frac, n, ok := decimal(b)
	if !ok || n >= len(b) || b[n] == 'e' || b[n] == 'E' || n > s.max {
		return 0, false // the general path reads (or refuses) it
	}
	s.i, s.first = s.i+n, false
	neg := b[0] == '-'
	if nd <= 19 {
		if f, ok := exactDecimal(m, frac, neg); ok {
			return f, true
		}
	}
	// Up to 19 digits fit m exactly; Kubecost's 17-digit numbers come here.
	if nd <= 19 && m != 0 && frac <= maxFrac {
		if s.pow == nil {
			s.pow = negPow10s()
		}
		if f, ok := eiselLemire(s.pow, m, frac, neg); ok {
			return f, true
		}
	}
	return parseFloat(b[:n]), true
}

// decimal reads the plain decimal b starts with, -?(0|[1-9][0-9]*)(\.[0-9]+)?: its digits as
// mantissa m (exact when their count nd is at most 19), frac of them after the point, and its
// length n. ok is false when b does not start with one.
func decimal(b []byte) (m uint64, nd, frac, n int, ok bool) {
	i := 0
	if len(b) > 0 && b[0] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for ; i < len(b) && isDigit(b[i]); i++ {
			m = m*10 + uint64(b[i]-'0')
			nd++
		}
	default:
		return 0, 0, 0, 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return 0, 0, 0, 0, false
		}
		for ; i < len(b) && isDigit(b[i]); i++ {
			m = m*10 + uint64(b[i]-'0')
			nd++
			frac++
		}
	}
	return m, nd, frac, i, true
}

// exactDecimal is m × 10^-frac when m and 10^frac are exact in a float64 (m < 2^53, frac ≤ 22):
// one division then rounds correctly (strconv's fast path, minus its setup). Kubecost's many
// zeros, minutes, byte counts, short and 16-digit decimals take it.
func exactDecimal(m uint64, frac int, neg bool) (float64, bool) {
	if m >= 1<<53 || frac >= len(pow10) {
		return 0, false
	}
	f := float64(m)
	if frac > 0 {
		f /= pow10[frac]
	}
	if neg {
		f = -f
	}
	return f, true
}

// pow10 holds the powers of ten exact in a float64, up to 1e22.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}
