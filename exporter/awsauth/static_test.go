package awsauth

import (
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/awsfake"
)

// Static keys (an object-store.yaml's access_key and secret_key) replace
// IRSA as the child credentials, even where IRSA is configured, and the
// parent role is still assumed with them.
func TestLoadStaticKeysChainToParent(t *testing.T) {
	t.Parallel()
	s := newIRSA(t)
	s.fake.AllowAssumeRole(childARN, parentARN, awsfake.RandomIssuer())
	log, logs := newLogger(t)
	// Keys the fake knows: the child's, obtained once through IRSA.
	first, err := Load(t.Context(), s.input(log, ""))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := first.Config.Credentials.Retrieve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	in := s.input(log, parentARN)
	keys.Source = "OBJECT_STORE_CONFIG_FILE"
	in.Static = &keys
	id, err := Load(t.Context(), in)
	if err != nil {
		t.Fatalf("Load with static keys: %v", err)
	}
	if want := "static keys from OBJECT_STORE_CONFIG_FILE -> assume-role " + parentARN; id.Chain != want {
		t.Errorf("Chain = %q, want %q", id.Chain, want)
	}
	if n := len(s.fake.CallsTo("AssumeRoleWithWebIdentity")); n != 1 {
		t.Errorf("%d web identity calls: the static keys must replace IRSA", n)
	}
	assume := s.fake.CallsTo("AssumeRole")
	if len(assume) != 1 || assume[0].AccessKeyID != keys.AccessKeyID || assume[0].ErrorCode != "" {
		t.Fatalf("AssumeRole calls %+v; want one signed with the static key", assume)
	}
	creds, err := id.Config.Credentials.Retrieve(t.Context())
	if err != nil || creds.AccessKeyID != assume[0].IssuedKeyID {
		t.Errorf("Config signs with %s (%v), want the parent's %s", creds.AccessKeyID, err, assume[0].IssuedKeyID)
	}
	assertNoSecrets(t, logs.String(), s.secrets())
}
