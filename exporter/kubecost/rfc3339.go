package kubecost

import "time"

// parseTime parses an RFC 3339 timestamp into Unix milliseconds without
// allocating: YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM). Odd shapes fall back to
// the time package.
func parseTime(b []byte) (int64, bool) {
	if len(b) >= 20 && b[4] == '-' && b[7] == '-' && (b[10] == 'T' || b[10] == 't' || b[10] == ' ') && b[13] == ':' && b[16] == ':' {
		y, ok1 := digits(b[0:4])
		mo, ok2 := digits(b[5:7])
		dd, ok3 := digits(b[8:10])
		h, ok4 := digits(b[11:13])
		mi, ok5 := digits(b[14:16])
		s, ok6 := digits(b[17:19])
		i, frac := 19, int64(0)
		if b[i] == '.' {
			i++
			for scale := int64(100); i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
				frac += int64(b[i]-'0') * scale
				scale /= 10
			}
		}
		off, ok7 := zone(b[i:])
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 &&
			mo >= 1 && mo <= 12 && dd >= 1 && dd <= 31 && h < 24 && mi < 60 && s < 61 {
			days := daysFromCivil(y, mo, dd)
			return ((days*24+h)*60+mi-off)*60000 + s*1000 + frac, true
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}

// zone parses Z or ±HH:MM into an offset in minutes east of UTC.
func zone(b []byte) (int64, bool) {
	if len(b) == 1 && (b[0] == 'Z' || b[0] == 'z') {
		return 0, true
	}
	if len(b) != 6 || (b[0] != '+' && b[0] != '-') || b[3] != ':' {
		return 0, false
	}
	h, ok1 := digits(b[1:3])
	m, ok2 := digits(b[4:6])
	if !ok1 || !ok2 || h > 23 || m > 59 {
		return 0, false
	}
	if b[0] == '-' {
		return -(h*60 + m), true
	}
	return h*60 + m, true
}

func digits(b []byte) (int64, bool) {
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
