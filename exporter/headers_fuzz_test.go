package exporter

import (
	"bufio"
	"bytes"
	"net/http"
	"net/textproto"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseHeaders holds ParseHeaders to net/textproto, the reader
// net/http parses header blocks with: whatever the headers file accepts,
// textproto reads from the same lines (the skipped blank and comment lines
// left out) as the same names and values. ParseHeaders is stricter on
// purpose (no repeated header, no empty value, no header net/http sets),
// so only what it accepts is compared.
func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{
		"X-API-KEY: k\n",
		"x-api-key:k",
		"Authorization: Bearer abc\r\n# comment\n\nCookie: a=b; c=d\n",
		"X-A:  spaced value \t\n",
		"X-A: v\u00a0\n",
		"X-A: v\v\n",
		"X-A: v\r\r\n",
		"  # indented comment\nX-B: 1\n",
		"X-A: a:b:c\n",
		"X-A: \xff\xfe\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseHeaders(data)
		if err != nil {
			return
		}
		var block strings.Builder
		for _, line := range strings.Split(string(data), "\n") {
			if trimmed := strings.Trim(strings.TrimSuffix(line, "\r"), " \t"); trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			block.WriteString(line + "\n")
		}
		block.WriteString("\r\n")
		want, err := textproto.NewReader(bufio.NewReader(bytes.NewBufferString(block.String()))).ReadMIMEHeader()
		if err != nil {
			t.Fatalf("ParseHeaders accepted %q, textproto refuses it: %v", data, err)
		}
		if !reflect.DeepEqual(got, http.Header(want)) {
			t.Fatalf("ParseHeaders(%q) = %q, textproto reads %q", data, got, want)
		}
	})
}
