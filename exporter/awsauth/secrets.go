package awsauth

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// FetchSecret returns a secret's SecretString, or SecretBinary as text, with cfg (the
// Identity's) in region (Settings.SecretsRegion). Errors never carry the value.
func FetchSecret(ctx context.Context, cfg aws.Config, region, name string) (string, error) {
	client := secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) { o.Region = region })
	out, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(name)})
	if err != nil {
		return "", fmt.Errorf("awsauth: read secret %s in %s: %w", name, region, err)
	}
	switch {
	case out.SecretString != nil:
		return *out.SecretString, nil
	case out.SecretBinary != nil:
		return string(out.SecretBinary), nil
	}
	return "", fmt.Errorf("awsauth: secret %s in %s has no value", name, region)
}
