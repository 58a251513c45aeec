package awsfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

type secret struct {
	name    string
	arn     string
	str     *string
	bin     []byte
	readers map[string]bool // role ARNs allowed to read; empty = anyone signed
	created time.Time
	version string
}

// PutSecret stores a SecretString. When readers are given, only
// credentials acting as one of those role ARNs may read it, like an
// identity policy granting secretsmanager:GetSecretValue to the parent.
func (f *Fake) PutSecret(name, value string, readers ...string) {
	f.putSecret(&secret{name: name, str: &value}, readers)
	f.keys.noteSecret(value)
}

// PutSecretBinary stores a SecretBinary.
func (f *Fake) PutSecretBinary(name string, value []byte, readers ...string) {
	f.putSecret(&secret{name: name, bin: append([]byte(nil), value...)}, readers)
	f.keys.noteSecret(string(value))
}

func (f *Fake) putSecret(s *secret, readers []string) {
	s.readers = map[string]bool{}
	for _, r := range readers {
		s.readers[r] = true
	}
	s.created = f.now()
	s.version = requestID()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.secrets[s.name] = s
}

// serveSecrets speaks the awsJson1_1 protocol: POST /, the operation in
// X-Amz-Target, JSON in and out, errors as {"__type","Message"}.
func (f *Fake) serveSecrets(w http.ResponseWriter, r *http.Request) {
	c := Call{Service: "secretsmanager"}
	defer func() { f.record(c) }()

	target := r.Header.Get("X-Amz-Target")
	c.Action, _ = strings.CutPrefix(target, "secretsmanager.")
	if r.Method != http.MethodPost || !strings.HasPrefix(target, "secretsmanager.") {
		writeJSONError(w, &c, http.StatusBadRequest, "UnknownOperationException", "")
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-amz-json-1.1" {
		writeJSONError(w, &c, http.StatusBadRequest, "SerializationException", "unexpected Content-Type "+ct)
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeJSONError(w, &c, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	p, code, msg := f.authenticate(r, body, &c)
	if p == nil {
		// JSON services name these differently from the query services.
		switch code {
		case "InvalidClientTokenId":
			code = "UnrecognizedClientException"
		case "SignatureDoesNotMatch":
			code = "InvalidSignatureException"
		case "ExpiredToken":
			code = "ExpiredTokenException"
		}
		writeJSONError(w, &c, http.StatusBadRequest, code, msg)
		return
	}
	if c.Action != "GetSecretValue" {
		writeJSONError(w, &c, http.StatusBadRequest, "UnknownOperationException", "")
		return
	}

	var in struct {
		SecretID     string `json:"SecretId"`
		VersionID    string `json:"VersionId"`
		VersionStage string `json:"VersionStage"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		writeJSONError(w, &c, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	c.SecretID = in.SecretID
	s := f.lookupSecret(in.SecretID, c.Region, p.Account)
	switch {
	case s == nil:
		writeJSONError(w, &c, http.StatusBadRequest, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
		return
	case len(s.readers) > 0 && !s.readers[p.RoleARN]:
		writeJSONError(w, &c, http.StatusBadRequest, "AccessDeniedException", fmt.Sprintf(
			"User: %s is not authorized to perform: secretsmanager:GetSecretValue on resource: %s because no identity-based policy allows the secretsmanager:GetSecretValue action",
			p.AssumedARN, in.SecretID))
		return
	case in.VersionStage != "" && in.VersionStage != "AWSCURRENT":
		writeJSONError(w, &c, http.StatusBadRequest, "ResourceNotFoundException", "Secrets Manager can't find the specified secret value for staging label: "+in.VersionStage)
		return
	}

	out := map[string]any{
		"ARN":           s.arn,
		"Name":          s.name,
		"VersionId":     s.version,
		"VersionStages": []string{"AWSCURRENT"},
		"CreatedDate":   float64(s.created.UnixMilli()) / 1000,
	}
	if s.str != nil {
		out["SecretString"] = *s.str
	} else {
		out["SecretBinary"] = s.bin // encoding/json writes []byte as base64, as the protocol wants
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", requestID())
	_ = json.NewEncoder(w).Encode(out)
}

// lookupSecret finds a secret by name or by ARN, filling in the ARN the
// way Secrets Manager builds it (name plus a random six-character suffix).
func (f *Fake) lookupSecret(id, region, account string) *secret {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.secrets {
		if s.arn == "" {
			s.arn = fmt.Sprintf("arn:aws:secretsmanager:%s:%s:secret:%s-%s", region, account, s.name, randomFrom("abcdefghijklmnopqrstuvwxyzABCDEF", 6))
		}
		if id == s.name || id == s.arn {
			return s
		}
	}
	return nil
}

func writeJSONError(w http.ResponseWriter, c *Call, status int, code, msg string) {
	c.ErrorCode = code
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Errortype", code)
	w.Header().Set("X-Amzn-Requestid", requestID())
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "Message": msg})
}
