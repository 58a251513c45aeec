package awsfake

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"
)

// stsNamespace is the XML namespace of every STS response.
const stsNamespace = "https://sts.amazonaws.com/doc/2011-06-15/"

// sessionNameRE is STS's rule for RoleSessionName.
var sessionNameRE = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)

type stsError struct {
	status        int
	code, message string
}

func (f *Fake) serveSTS(w http.ResponseWriter, r *http.Request) {
	c := Call{Service: "sts"}
	if r.Method != http.MethodPost {
		// The SDK always POSTs; GET query requests are legal for STS but
		// nothing we need to model.
		writeSTSError(w, &c, stsError{http.StatusBadRequest, "InvalidAction", "only POST is supported by this fake"})
		f.record(c)
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeSTSError(w, &c, stsError{http.StatusBadRequest, "MalformedInput", err.Error()})
		f.record(c)
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		writeSTSError(w, &c, stsError{http.StatusBadRequest, "MalformedQueryString", err.Error()})
		f.record(c)
		return
	}
	c.Action = form.Get("Action")
	c.RoleARN = form.Get("RoleArn")
	c.RoleSessionName = form.Get("RoleSessionName")
	c.WebIdentityToken = form.Get("WebIdentityToken")
	c.DurationSeconds, _ = strconv.Atoi(form.Get("DurationSeconds"))

	var result any
	var serr *stsError
	switch {
	case form.Get("Version") != "2011-06-15":
		serr = &stsError{http.StatusBadRequest, "InvalidParameterValue", "unsupported Version " + form.Get("Version")}
	case c.Action == "AssumeRoleWithWebIdentity":
		// Unsigned by design: the token is the proof of identity.
		result, serr = f.assumeRoleWithWebIdentity(r, &c)
	case c.Action == "AssumeRole" || c.Action == "GetCallerIdentity":
		p, code, msg := f.authenticate(r, body, &c)
		if p == nil {
			status := http.StatusForbidden
			if code == "ExpiredToken" || code == "MissingAuthenticationToken" {
				status = http.StatusBadRequest
			}
			serr = &stsError{status, code, msg}
			break
		}
		if c.Action == "AssumeRole" {
			result, serr = f.assumeRole(r, &c, p)
		} else {
			result = &callerIdentityResult{Arn: p.AssumedARN, UserID: "AROA" + randomFrom(upperAlnum, 17) + ":" + p.SessionName, Account: p.Account}
		}
	default:
		serr = &stsError{http.StatusBadRequest, "InvalidAction", fmt.Sprintf("Could not find operation %s for version 2011-06-15", c.Action)}
	}
	if serr != nil {
		writeSTSError(w, &c, *serr)
	} else {
		writeSTSResult(w, c.Action, result)
	}
	f.record(c)
}

func (f *Fake) assumeRoleWithWebIdentity(r *http.Request, c *Call) (any, *stsError) {
	if err := checkAssumeParams(c); err != nil {
		return nil, err
	}
	if c.WebIdentityToken == "" {
		return nil, &stsError{http.StatusBadRequest, "ValidationError", "1 validation error detected: Value null at 'webIdentityToken' failed to satisfy constraint: Member must not be null"}
	}
	f.mu.Lock()
	tokens, known := f.webIdentity[c.RoleARN]
	accepted := tokens[c.WebIdentityToken]
	f.mu.Unlock()
	if !known {
		return nil, &stsError{http.StatusForbidden, "AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity"}
	}
	if !accepted {
		return nil, &stsError{http.StatusBadRequest, "InvalidIdentityToken", "The web identity token that was passed could not be validated by AWS. Get a new identity token from the identity provider and then retry the request."}
	}
	p, err := f.issue(r, c, RandomIssuer())
	if err != nil {
		return nil, err
	}
	return &assumeRoleResult{
		XMLName:                     xml.Name{Local: "AssumeRoleWithWebIdentityResult"},
		SubjectFromWebIdentityToken: "system:serviceaccount:kubecost:kubecost-s3-exporter",
		Audience:                    "sts.amazonaws.com",
		Provider:                    "arn:aws:iam::" + p.Account + ":oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/EXAMPLE",
		AssumedRoleUser:             assumedRoleUser{Arn: p.AssumedARN, AssumedRoleID: "AROA" + randomFrom(upperAlnum, 17) + ":" + p.SessionName},
		Credentials:                 xmlCredentials(p.Credentials),
	}, nil
}

func (f *Fake) assumeRole(r *http.Request, c *Call, caller *principal) (any, *stsError) {
	if err := checkAssumeParams(c); err != nil {
		return nil, err
	}
	f.mu.Lock()
	issue, trusted := f.trust[c.RoleARN][caller.RoleARN]
	f.mu.Unlock()
	if !trusted {
		return nil, &stsError{http.StatusForbidden, "AccessDenied", fmt.Sprintf("User: %s is not authorized to perform: sts:AssumeRole on resource: %s", caller.AssumedARN, c.RoleARN)}
	}
	p, err := f.issue(r, c, issue)
	if err != nil {
		return nil, err
	}
	return &assumeRoleResult{
		XMLName:          xml.Name{Local: "AssumeRoleResult"},
		AssumedRoleUser:  assumedRoleUser{Arn: p.AssumedARN, AssumedRoleID: "AROA" + randomFrom(upperAlnum, 17) + ":" + p.SessionName},
		Credentials:      xmlCredentials(p.Credentials),
		PackedPolicySize: new(int),
	}, nil
}

// checkAssumeParams applies STS's own validation, so a bad session name
// fails here exactly as it would against AWS.
func checkAssumeParams(c *Call) *stsError {
	if _, _, _, ok := roleParts(c.RoleARN); !ok {
		return &stsError{http.StatusBadRequest, "ValidationError", fmt.Sprintf("%s is invalid", c.RoleARN)}
	}
	if !sessionNameRE.MatchString(c.RoleSessionName) {
		return &stsError{http.StatusBadRequest, "ValidationError", fmt.Sprintf("1 validation error detected: Value '%s' at 'roleSessionName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]*", c.RoleSessionName)}
	}
	if d := c.DurationSeconds; d != 0 && (d < 900 || d > 43200) {
		return &stsError{http.StatusBadRequest, "ValidationError", fmt.Sprintf("1 validation error detected: Value '%d' at 'durationSeconds' failed to satisfy constraint: Member must have value between 900 and 43200", d)}
	}
	return nil
}

// issue mints credentials for c.RoleARN and remembers them so later
// requests signed with them can be verified.
func (f *Fake) issue(r *http.Request, c *Call, issue Issuer) (*principal, *stsError) {
	lifetime := time.Duration(c.DurationSeconds) * time.Second
	if lifetime == 0 {
		lifetime = time.Hour
	}
	f.mu.Lock()
	if f.ttl > 0 {
		lifetime = f.ttl
	}
	f.mu.Unlock()
	creds, err := issue(r.Context(), c.RoleSessionName, lifetime)
	if err != nil {
		return nil, &stsError{http.StatusInternalServerError, "InternalFailure", "issuer: " + err.Error()}
	}
	// Millisecond precision keeps sub-second test TTLs meaningful; the SDK
	// parses fractional seconds in Expiration.
	creds.Expiration = f.now().Add(lifetime).UTC().Truncate(time.Millisecond)
	partition, account, name, _ := roleParts(c.RoleARN)
	p := &principal{
		Credentials: creds,
		RoleARN:     c.RoleARN,
		AssumedARN:  fmt.Sprintf("arn:%s:sts::%s:assumed-role/%s/%s", partition, account, name, c.RoleSessionName),
		Account:     account,
		SessionName: c.RoleSessionName,
	}
	f.keys.add(p)
	c.IssuedKeyID = creds.AccessKeyID
	return p, nil
}

type xmlCreds struct {
	AccessKeyID     string `xml:"AccessKeyId"`
	SecretAccessKey string `xml:"SecretAccessKey"`
	SessionToken    string `xml:"SessionToken"`
	Expiration      string `xml:"Expiration"`
}

func xmlCredentials(c Credentials) xmlCreds {
	return xmlCreds{c.AccessKeyID, c.SecretAccessKey, c.SessionToken, c.Expiration.UTC().Format("2006-01-02T15:04:05.000Z")}
}

type assumedRoleUser struct {
	AssumedRoleID string `xml:"AssumedRoleId"`
	Arn           string `xml:"Arn"`
}

// assumeRoleResult is the body of both AssumeRoleResult and
// AssumeRoleWithWebIdentityResult; XMLName picks which.
type assumeRoleResult struct {
	XMLName                     xml.Name
	SubjectFromWebIdentityToken string          `xml:"SubjectFromWebIdentityToken,omitempty"`
	Audience                    string          `xml:"Audience,omitempty"`
	AssumedRoleUser             assumedRoleUser `xml:"AssumedRoleUser"`
	Credentials                 xmlCreds        `xml:"Credentials"`
	Provider                    string          `xml:"Provider,omitempty"`
	PackedPolicySize            *int            `xml:"PackedPolicySize,omitempty"`
}

type callerIdentityResult struct {
	XMLName xml.Name `xml:"GetCallerIdentityResult"`
	Arn     string   `xml:"Arn"`
	UserID  string   `xml:"UserId"`
	Account string   `xml:"Account"`
}

type queryResponse struct {
	XMLName   xml.Name
	Xmlns     string `xml:"xmlns,attr"`
	Result    any
	RequestID string `xml:"ResponseMetadata>RequestId"`
}

func writeSTSResult(w http.ResponseWriter, action string, result any) {
	id := requestID()
	resp := queryResponse{XMLName: xml.Name{Local: action + "Response"}, Xmlns: stsNamespace, Result: result, RequestID: id}
	out, err := xml.Marshal(resp)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("X-Amzn-Requestid", id)
	_, _ = w.Write(out)
}

type errorResponse struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	Xmlns   string   `xml:"xmlns,attr"`
	Error   struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	} `xml:"Error"`
	RequestID string `xml:"RequestId"`
}

func writeSTSError(w http.ResponseWriter, c *Call, e stsError) {
	c.ErrorCode = e.code
	resp := errorResponse{Xmlns: stsNamespace, RequestID: requestID()}
	resp.Error.Type = "Sender"
	if e.status >= 500 {
		resp.Error.Type = "Receiver"
	}
	resp.Error.Code, resp.Error.Message = e.code, e.message
	out, _ := xml.Marshal(resp)
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("X-Amzn-Requestid", resp.RequestID)
	w.WriteHeader(e.status)
	_, _ = w.Write(out)
}
