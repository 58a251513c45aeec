package cli

import (
	"context"
	"crypto/tls"
	"log/slog"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/config"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecost"
)

// discover finds Kubecost when KUBECOST_API_ENDPOINT is unset, with the
// run's TLS, credentials and time limits, and sets the endpoint in cfg to
// the base URL that answered, so that everything after (the client, the
// start line) sees one endpoint. A set endpoint is used as it is.
func discover(ctx context.Context, cfg *config.Config, tlsCfg *tls.Config, token string, log *slog.Logger, h Hooks) error {
	if !cfg.Discovering() {
		return nil
	}
	candidates := kubecost.Candidates
	if h.Candidates != nil {
		candidates = h.Candidates
	}
	cands := candidates(cfg.KubecostNamespace, cfg.KubecostRelease)
	base, err := kubecost.Discover(ctx, cands, kubecost.DiscoverOptions{
		Path: cfg.AllocationPath(), TLS: tlsCfg, Headers: cfg.Headers(), BearerToken: token,
		ConnectTimeout: cfg.ConnectionTimeout.Duration(), ReadTimeout: cfg.ReadTimeout.Duration(),
		Logger: log, Now: h.Now,
	})
	if err != nil {
		return err
	}
	cfg.KubecostAPIEndpoint = base
	return nil
}
