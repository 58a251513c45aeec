package objstorecompat

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/thanos-io/objstore"
	"github.com/thanos-io/objstore/providers/filesystem"
	"github.com/thanos-io/objstore/providers/s3"
	"gopkg.in/yaml.v2"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/destination"
)

// verdict is what each side does with an input.
type verdict int

const (
	both     verdict = iota // both accept, every field compared
	neither                 // both refuse
	oursOnly                // the exporter refuses on purpose; objstore accepts (why says why)
	// oursSends: both accept the file, but objstore's client refuses some
	// put_user_metadata keys at every upload, which the exporter sends
	// (why says which and how).
	oursSends
	// theirsFails: both accept the file, the same in every field, but
	// objstore's client refuses config.bucket at every call, where the
	// exporter's works (an access point ARN; why says so).
	theirsFails
)

type compatCase struct {
	name, yaml string
	verdict    verdict
	why        string // for oursOnly and oursSends: the reason, also in the docs
}

// TestSameAsObjstore parses every case with the exporter and with
// objstore, and requires the same verdict and, when both accept, the
// same value for every field of client.BucketConfig and of the
// provider's Config, and the same meaning: region, endpoint, addressing,
// TLS verification and object headers (derived_test.go).
func TestSameAsObjstore(t *testing.T) {
	caFile, certFile, keyFile := writeTLSFiles(t)
	// SSE-C's key is 32 raw bytes in a file.
	sseCKey := filepath.Join(t.TempDir(), "sse-c.key")
	if err := os.WriteFile(sseCKey, []byte(strings.Repeat("k", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases(caFile, certFile, keyFile, sseCKey) {
		t.Run(tc.name, func(t *testing.T) {
			ours, ourErr := parseOurs(tc.yaml)
			theirs, theirErr := parseObjstore(tc.yaml)
			switch tc.verdict {
			case both, oursSends:
				if ourErr != nil || theirErr != nil {
					t.Fatalf("want both to accept; exporter: %v; objstore: %v", ourErr, theirErr)
				}
				compare(t, ours, theirs)
				compareDerived(t, ours, theirs, tc.verdict == oursSends)
			case theirsFails:
				if ourErr != nil || theirErr != nil {
					t.Fatalf("want both to accept the file; exporter: %v; objstore: %v", ourErr, theirErr)
				}
				compare(t, ours, theirs)
				compareDerived(t, ours, theirs, false)
				if err := callThroughObjstore(t, theirs.s3); err == nil || !strings.Contains(err.Error(), "Bucket name contains invalid characters") {
					t.Errorf("objstore's client with bucket %q: %v; the row says it refuses the name (%s)", theirs.s3.Bucket, err, tc.why)
				}
			case neither:
				if ourErr == nil || theirErr == nil {
					t.Fatalf("want both to refuse; exporter: %v; objstore: %v", ourErr, theirErr)
				}
			case oursOnly:
				if ourErr == nil || theirErr != nil {
					t.Fatalf("want only the exporter to refuse (%s); exporter: %v; objstore: %v", tc.why, ourErr, theirErr)
				}
			}
		})
	}
}

// thanosParsed is what objstore makes of a file.
type thanosParsed struct {
	top bucketConfig
	s3  s3.Config
	fs  filesystem.Config
}

// bucketConfig is objstore's client.BucketConfig (client/factory.go).
// The client package itself links every provider's SDK (GCS, Azure,
// OCI, ...), so the test mirrors its three fields and its steps instead;
// the providers it reaches are objstore's own.
type bucketConfig struct {
	Type   objstore.ObjProvider `yaml:"type"`
	Config any                  `yaml:"config"`
	Prefix string               `yaml:"prefix" default:""`
}

// parseObjstore follows client.NewBucket: strict top level, config
// marshalled again, then the provider's constructor, which parses and
// validates (s3.NewBucket builds a minio client but sends nothing).
func parseObjstore(doc string) (*thanosParsed, error) {
	var p thanosParsed
	if err := yaml.UnmarshalStrict([]byte(doc), &p.top); err != nil {
		return nil, err
	}
	conf, err := yaml.Marshal(p.top.Config)
	if err != nil {
		return nil, err
	}
	switch strings.ToUpper(string(p.top.Type)) {
	case string(objstore.S3):
		// parseConfig decodes over DefaultConfig, whose metadata map is
		// shared: a process builds one bucket, this test many, so each
		// starts from an empty map as the first bucket of a process does.
		s3.DefaultConfig.PutUserMetadata = map[string]string{}
		if _, err := s3.NewBucket(log.NewNopLogger(), conf, "test", nil); err != nil {
			return nil, err
		}
		// NewBucket's parseConfig, over a copy of DefaultConfig (whose
		// metadata map it would otherwise share).
		p.s3 = s3.DefaultConfig
		p.s3.PutUserMetadata = map[string]string{}
		err = yaml.UnmarshalStrict(conf, &p.s3)
	case string(objstore.FILESYSTEM):
		if _, err := filesystem.NewBucketFromConfig(conf); err != nil {
			return nil, err
		}
		err = yaml.Unmarshal(conf, &p.fs)
	case string(objstore.GCS), string(objstore.AZURE), string(objstore.SWIFT), string(objstore.COS),
		string(objstore.ALIYUNOSS), string(objstore.BOS), string(objstore.OCI), string(objstore.OBS):
		// Supported by objstore; this test does not link those SDKs.
	default:
		return nil, &unsupported{string(p.top.Type)}
	}
	return &p, err
}

type unsupported struct{ typ string }

func (u *unsupported) Error() string { return "bucket with type " + u.typ + " is not supported" }

// parseOurs is the exporter's path: parse, validate, read the TLS files.
func parseOurs(doc string) (*destination.File, error) {
	f, err := destination.Parse([]byte(doc))
	if err != nil {
		return nil, err
	}
	if errs := f.Validate(); len(errs) > 0 {
		return nil, errs
	}
	if _, err := f.TLS(); err != nil {
		return nil, err
	}
	return f, nil
}

// compare holds every field of both sides equal. Each side is marshalled
// to YAML and read back as generic maps, so a field objstore adds and the
// exporter lacks (or the reverse) fails here by name.
func compare(t *testing.T, ours *destination.File, theirs *thanosParsed) {
	t.Helper()
	if ours.Type != string(theirs.top.Type) || ours.Prefix != theirs.top.Prefix {
		t.Errorf("top level: exporter type %q prefix %q; objstore type %q prefix %q", ours.Type, ours.Prefix, theirs.top.Type, theirs.top.Prefix)
	}
	// objstore's PrefixedBucket trims slashes and joins with one.
	if want := strings.Trim(theirs.top.Prefix, "/"); want != "" && ours.KeyPrefix() != want+"/" {
		t.Errorf("key prefix %q, objstore writes under %q", ours.KeyPrefix(), want+"/")
	}
	var a, b map[string]any
	if ours.IsS3() {
		a, b = generic(t, ours.S3), generic(t, theirs.s3)
	} else {
		a, b = generic(t, ours.FS), generic(t, theirs.fs)
	}
	diffMaps(t, "config", a, b)
}

func generic(t *testing.T, v any) map[string]any {
	t.Helper()
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func diffMaps(t *testing.T, path string, ours, theirs map[string]any) {
	t.Helper()
	for k, tv := range theirs {
		ov, ok := ours[k]
		switch {
		case !ok:
			t.Errorf("%s.%s: objstore has the field, the exporter does not", path, k)
		case isMap(ov) && isMap(tv):
			diffMaps(t, path+"."+k, toMap(ov), toMap(tv))
		case !reflect.DeepEqual(ov, tv):
			t.Errorf("%s.%s: exporter %v, objstore %v", path, k, ov, tv)
		}
	}
	for k := range ours {
		if _, ok := theirs[k]; !ok {
			t.Errorf("%s.%s: the exporter has a field objstore does not", path, k)
		}
	}
}

func isMap(v any) bool { _, ok := v.(map[any]any); return ok }

func toMap(v any) map[string]any {
	out := map[string]any{}
	for k, x := range v.(map[any]any) {
		out[k.(string)] = x
	}
	return out
}

// writeTLSFiles writes a self-signed certificate and its key, so that
// objstore's NewBucket (which reads them) and the exporter's TLS accept
// the TLS case.
func writeTLSFiles(t *testing.T) (ca, cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "s3.local"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	write := func(p, typ string, b []byte) {
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(cert, "CERTIFICATE", der)
	write(key, "EC PRIVATE KEY", kder)
	return cert, cert, key
}
