// OBJECT_STORE_CONFIG_FILE is the Thanos object storage configuration Kubecost already
// keeps (object-store.yaml, federated-store.yaml), so bucket, endpoint and keys are not
// typed twice.
//
// The format is thanos-io/objstore's: client.BucketConfig (type, config, prefix) with, for
// S3, the provider's Config under config. Parse follows objstore's steps: the top level is
// decoded strictly; config into a generic value, marshalled again and decoded strictly over
// the provider's defaults (client.NewBucketFromConfig, providers/s3 parseConfig).
// internal/objstorecompat holds it to objstore's parser. docs/object-store-config.md maps
// every field: used, accepted without effect (Notices), or refused (Validate).

package destination

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v2"
)

// Types the exporter writes to; objstore ignores case (client.NewBucketFromConfig).
const (
	TypeS3         = "S3"
	TypeFilesystem = "FILESYSTEM"
)

// otherTypes are objstore's other providers (objstore.ObjProvider), refused by name.
var otherTypes = []string{"GCS", "AZURE", "SWIFT", "COS", "ALIYUNOSS", "BOS", "OCI", "OBS", "MEMORY"}

// File is client.BucketConfig with its config decoded for the type.
type File struct {
	Type   string `yaml:"type"`
	Prefix string `yaml:"prefix"`
	// S3 is config when Type is S3, FS when it is FILESYSTEM.
	S3 S3
	FS Filesystem

	// set holds the dotted path of every key in the file, so a value equal to its default
	// still counts as set for the agreement checks.
	set map[string]bool
}

// bucketConfig mirrors objstore's client.BucketConfig for decoding.
type bucketConfig struct {
	Type   string `yaml:"type"`
	Config any    `yaml:"config"`
	Prefix string `yaml:"prefix"`
}

// S3 is objstore's providers/s3.Config, field for field.
type S3 struct {
	Bucket             string            `yaml:"bucket"`
	Endpoint           string            `yaml:"endpoint"`
	Region             string            `yaml:"region"`
	DisableDualstack   bool              `yaml:"disable_dualstack"`
	AWSSDKAuth         bool              `yaml:"aws_sdk_auth"`
	AccessKey          string            `yaml:"access_key"`
	Insecure           bool              `yaml:"insecure"`
	SignatureV2        bool              `yaml:"signature_version2"`
	SecretKey          string            `yaml:"secret_key"`
	SessionToken       string            `yaml:"session_token"`
	PutUserMetadata    map[string]string `yaml:"put_user_metadata"`
	HTTPConfig         HTTPConfig        `yaml:"http_config"`
	TraceConfig        TraceConfig       `yaml:"trace"`
	ListObjectsVersion string            `yaml:"list_objects_version"`
	BucketLookupType   LookupType        `yaml:"bucket_lookup_type"`
	SendContentMd5     bool              `yaml:"send_content_md5"`
	DisableMultipart   bool              `yaml:"disable_multipart"`
	PartSize           uint64            `yaml:"part_size"`
	SSEConfig          SSEConfig         `yaml:"sse_config"`
	STSEndpoint        string            `yaml:"sts_endpoint"`
	MaxRetries         int               `yaml:"max_retries"`
}

// HTTPConfig is objstore's exthttp.HTTPConfig (less Transport, not YAML).
type HTTPConfig struct {
	IdleConnTimeout       model.Duration `yaml:"idle_conn_timeout"`
	ResponseHeaderTimeout model.Duration `yaml:"response_header_timeout"`
	InsecureSkipVerify    bool           `yaml:"insecure_skip_verify"`
	TLSHandshakeTimeout   model.Duration `yaml:"tls_handshake_timeout"`
	ExpectContinueTimeout model.Duration `yaml:"expect_continue_timeout"`
	MaxIdleConns          int            `yaml:"max_idle_conns"`
	MaxIdleConnsPerHost   int            `yaml:"max_idle_conns_per_host"`
	MaxConnsPerHost       int            `yaml:"max_conns_per_host"`
	TLSConfig             TLSConfig      `yaml:"tls_config"`
	DisableCompression    bool           `yaml:"disable_compression"`
}

// TLSConfig is objstore's exthttp.TLSConfig.
type TLSConfig struct {
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// TraceConfig is objstore's providers/s3.TraceConfig.
type TraceConfig struct {
	Enable bool `yaml:"enable"`
}

// SSEConfig is objstore's providers/s3.SSEConfig.
type SSEConfig struct {
	Type                 string            `yaml:"type"`
	KMSKeyID             string            `yaml:"kms_key_id"`
	KMSEncryptionContext map[string]string `yaml:"kms_encryption_context"`
	EncryptionKey        string            `yaml:"encryption_key"`
}

// Filesystem is objstore's providers/filesystem.Config.
type Filesystem struct {
	Directory string `yaml:"directory"`
}

// LookupType is bucket_lookup_type: auto, virtual-hosted or path.
type LookupType string

// Bucket lookup types, as objstore spells them.
const (
	LookupAuto          LookupType = "auto"
	LookupVirtualHosted LookupType = "virtual-hosted"
	LookupPath          LookupType = "path"
)

// UnmarshalYAML refuses other values, as objstore's BucketLookupType does.
func (l *LookupType) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err != nil {
		return err
	}
	if t := LookupType(s); slices.Contains([]LookupType{LookupAuto, LookupVirtualHosted, LookupPath}, t) {
		*l = t
		return nil
	}
	return fmt.Errorf("unsupported bucket lookup type: %s", s)
}

// defaultS3 is objstore's providers/s3.DefaultConfig with exthttp.DefaultHTTPConfig.
func defaultS3() S3 {
	return S3{
		PutUserMetadata: map[string]string{},
		HTTPConfig: HTTPConfig{
			IdleConnTimeout:       model.Duration(90e9),
			ResponseHeaderTimeout: model.Duration(120e9),
			TLSHandshakeTimeout:   model.Duration(10e9),
			ExpectContinueTimeout: model.Duration(1e9),
			MaxIdleConns:          100,
			MaxIdleConnsPerHost:   100,
		},
		PartSize:         64 << 20,
		BucketLookupType: LookupAuto,
		SendContentMd5:   true,
	}
}

// ParseError is a file that cannot be decoded: Path names the key, "" for a broken document.
type ParseError struct {
	Path, Msg string
}

func (e *ParseError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Parse decodes a Thanos object storage configuration strictly over objstore's defaults: an
// unknown key is an error, as with objstore's yaml.UnmarshalStrict. Validate checks values.
func Parse(b []byte) (*File, error) {
	var raw any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, &ParseError{Msg: oneLine(err)}
	}
	f := &File{set: map[string]bool{}}
	if err := walkKeys(raw, reflect.TypeFor[bucketConfig](), "", f.set); err != nil {
		return nil, err
	}
	var top bucketConfig
	if err := yaml.UnmarshalStrict(b, &top); err != nil {
		return nil, &ParseError{Msg: oneLine(err)}
	}
	f.Type, f.Prefix = top.Type, top.Prefix
	// As objstore, re-marshal config, so a value reads as the generic decoder saw it (an
	// unquoted 0123 is the number 83).
	inner, err := yaml.Marshal(top.Config)
	if err != nil {
		return nil, &ParseError{Path: "config", Msg: oneLine(err)}
	}
	var target any
	switch strings.ToUpper(top.Type) {
	case TypeS3:
		f.S3 = defaultS3()
		target = &f.S3
	case TypeFilesystem:
		target = &f.FS
	default:
		return f, nil // Validate names the type
	}
	if err := walkKeys(top.Config, reflect.TypeOf(target).Elem(), "config", f.set); err != nil {
		return nil, err
	}
	if err := yaml.UnmarshalStrict(inner, target); err != nil {
		return nil, &ParseError{Path: "config", Msg: oneLine(err)}
	}
	return f, nil
}

// IsSet reports whether the file wrote the key at path ("config.part_size").
func (f *File) IsSet(path string) bool { return f.set[path] }

// walkKeys records every key of v under path and refuses the first one t's yaml tags lack;
// maps (put_user_metadata) take any key.
func walkKeys(v any, t reflect.Type, path string, set map[string]bool) error {
	m, ok := v.(map[any]any)
	if !ok {
		return nil // a scalar or list where a map belongs: the decoder says so
	}
	fields := map[string]reflect.Type{}
	var names []string
	for i := range t.NumField() {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag != "" && tag != "-" {
			fields[tag] = t.Field(i).Type
			names = append(names, tag)
		}
	}
	byText := map[string]any{}
	for k, v := range m {
		byText[fmt.Sprint(k)] = v
	}
	for _, k := range slices.Sorted(maps.Keys(byText)) {
		p := strings.TrimPrefix(path+"."+k, ".")
		ft, ok := fields[k]
		if !ok {
			return &ParseError{Path: p, Msg: "unknown key (accepted here: " + strings.Join(names, ", ") + ")"}
		}
		set[p] = true
		if ft.Kind() == reflect.Struct {
			if err := walkKeys(byText[k], ft, p, set); err != nil {
				return err
			}
		}
	}
	return nil
}

var lineRE = regexp.MustCompile(`line \d+: `)

// oneLine makes a decoder error one line, without the re-marshalled document's line numbers.
func oneLine(err error) string {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) {
		msg = strings.Join(te.Errors, "; ")
	}
	return strings.Join(strings.Fields(lineRE.ReplaceAllString(msg, "")), " ")
}
