package exporter

import (
	"strings"
	"testing"
)

func TestParseHeaders(t *testing.T) {
	h, err := ParseHeaders([]byte("# service account of the exporter\r\n\nx-api-key:  k3y-value \r\nX-Forwarded-User: exporter\n   \n"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("X-Api-Key") != "k3y-value" || h.Get("X-Forwarded-User") != "exporter" || len(h) != 2 {
		t.Errorf("parsed %v", h)
	}
	// Every refusal names its line and never the value or the line's text.
	const secret = "hunter2-s3cr3t"
	for _, tc := range []struct{ in, want string }{
		{"X-API-KEY " + secret, "line 1: want \"Name: value\""},
		{"# c\nBad Name: " + secret, "line 2: the header name is not an HTTP token"},
		{" X-API-KEY: " + secret, "line 1: the header name is not an HTTP token"},
		{"Bearer " + secret + ": x", "line 1: the header name is not an HTTP token"},
		{"X-API-KEY:   ", "line 1: header X-Api-Key has an empty value"},
		{"X-API-KEY: a\x01" + secret, "line 1: the value of header X-Api-Key holds a control character"},
		{"X-API-KEY: " + secret + "\nx-api-key: " + secret, "line 2: header X-Api-Key is already set on line 1"},
		{"Host: " + secret, "line 1: header Host is set by the exporter itself"},
		{"Content-Length: 3", "line 1: header Content-Length"},
		{"\n# nothing\n", "holds no header"},
	} {
		_, err := ParseHeaders([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), HeadersSetting) {
			t.Errorf("%q: error %v, want %q naming %s", tc.in, err, tc.want, HeadersSetting)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%q: error shows the value: %v", tc.in, err)
		}
	}
}
